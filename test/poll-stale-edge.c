/* SPDX-License-Identifier: MIT */
/*
 * A POLL_ADD parked after a readiness event was collected, for data that
 * came and was read before the POLL_ADD looked, is not woken by it: the
 * kernel's wake-up only finds the polls waiting when it runs. The
 * engine's harvester collects its events (epoll_pwait2) before it takes
 * poll_lock to deliver them; a harvester held up in between (a loaded
 * machine: poll-basic's "two polls with one user_data" under make tsan)
 * gave such a POLL_ADD a POLLIN on an empty pipe.
 *
 * Made deterministic here: this program's syscall() stands in for libc's
 * (the engine is linked statically) and holds the reactor thread as its
 * epoll_pwait2 returns with an fd's event, until the main thread has
 * drained the pipe and parked the late POLL_ADD. A poll parked before the
 * event still gets it, with the mask of the wake-up (the data is gone by
 * then), as the kernel's task work reports it.
 * Semantics: io_uring/poll.c io_poll_wake, io_poll_check_events.
 */
#include <dlfcn.h>
#include <poll.h>
#include <stdarg.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include "helpers.h"

static pthread_mutex_t st_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t st_cv = PTHREAD_COND_INITIALIZER;
static pid_t main_tid;
static enum { ST_IDLE, ST_ARMED, ST_HELD, ST_GO } st;

/* Another thread's epoll_pwait2 returned fd events: hold it if armed. */
static void maybe_hold(const struct epoll_event *ev, long n)
{
	bool fd_event = false;

	for (long i = 0; i < n; i++)
		fd_event |= ev[i].data.u64 != 0; /* not the wake eventfd */
	if (!fd_event)
		return;
	pthread_mutex_lock(&st_mu);
	if (st == ST_ARMED) {
		st = ST_HELD;
		pthread_cond_broadcast(&st_cv);
		while (st != ST_GO)
			pthread_cond_wait(&st_cv, &st_mu);
		st = ST_IDLE;
	}
	pthread_mutex_unlock(&st_mu);
}

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6], ret;
	va_list ap;
	int err;

	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	ret = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (nr == SYS_epoll_pwait2 && ret > 0 && gettid() != main_tid) {
		err = errno;
		maybe_hold((const struct epoll_event *)a[1], ret);
		errno = err;
	}
	return ret;
}

static void st_set(int to)
{
	pthread_mutex_lock(&st_mu);
	st = to;
	pthread_cond_broadcast(&st_cv);
	pthread_mutex_unlock(&st_mu);
}

/* Wait (at most 10 s) until the reactor thread holds its harvest. */
static void st_wait_held(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&st_mu);
	while (st != ST_HELD)
		T_ASSERT_EQ(pthread_cond_timedwait(&st_cv, &st_mu, &until), 0);
	pthread_mutex_unlock(&st_mu);
}

static void queue_poll(struct t_ring *r, int fd, unsigned int flags,
		       uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_poll_add(sqe, fd, POLLIN, flags, ud);
	T_ASSERT_EQ(t_submit(r), 1);
}

/*
 * early (oneshot) waits when "x" is written; the harvest of that event is
 * held while "x" is read and late (flags: oneshot or multishot) parks;
 * then early gets POLLIN and late nothing until "y".
 */
static void one_round(struct t_ring *r, int p[2], uint64_t early, uint64_t late,
		      unsigned int late_flags)
{
	bool user = t_engine() == T_ENGINE_USER;
	char c;

	queue_poll(r, p[0], 0, early);
	t_expect_no_cqe(r, 20); /* parked; the reactor thread waits */
	if (user)
		st_set(ST_ARMED);
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	if (user)
		st_wait_held();
	T_ASSERT_EQ(read(p[0], &c, 1), 1);
	queue_poll(r, p[0], late_flags, late);
	if (user)
		st_set(ST_GO);
	/* The kernel posted it within the write, with the wake-up's mask. */
	T_ASSERT_EQ(t_expect_cqe(r, early, POLLIN), 0);
	t_expect_no_cqe(r, 50);
	T_ASSERT_EQ(write(p[1], "y", 1), 1);
	T_ASSERT_EQ(t_expect_cqe(r, late, POLLIN),
		    late_flags ? IORING_CQE_F_MORE : 0);
	T_ASSERT_EQ(read(p[0], &c, 1), 1);
}

/* Two CQEs in either order: (ud1, res1, flags1) and (ud2, res2, flags2). */
static void expect_two(struct t_ring *r, uint64_t ud1, int res1,
		       unsigned int f1, uint64_t ud2, int res2, unsigned int f2)
{
	struct io_uring_cqe cqe;
	int seen = 0;

	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		if (cqe.user_data == ud1 && !(seen & 1)) {
			seen |= 1;
			T_ASSERT_EQ(cqe.res, res1);
			T_ASSERT_EQ(cqe.flags, f1);
		} else {
			T_ASSERT_EQ(cqe.user_data, ud2);
			T_ASSERT_EQ(seen & 2, 0);
			seen |= 2;
			T_ASSERT_EQ(cqe.res, res2);
			T_ASSERT_EQ(cqe.flags, f2);
		}
	}
}

/*
 * The known gap (pollwatch.c): a multishot armed on a ready fd while the
 * edge of the data that made it ready is held takes that edge as well, a
 * second CQE for one write. The kernel posts one. Fails on the user
 * engine; run only with T_POLL_STALE_GAP=1, to reproduce it.
 */
static void gap_round(void)
{
	struct t_ring r;
	int q[2];
	char c;

	T_ASSERT_EQ(pipe(q), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_poll(&r, q[0], 0, 5);
	t_expect_no_cqe(&r, 20);
	if (t_engine() == T_ENGINE_USER)
		st_set(ST_ARMED);
	T_ASSERT_EQ(write(q[1], "x", 1), 1);
	if (t_engine() == T_ENGINE_USER)
		st_wait_held();
	queue_poll(&r, q[0], IORING_POLL_ADD_MULTI, 6);
	if (t_engine() == T_ENGINE_USER)
		st_set(ST_GO);
	expect_two(&r, 5, POLLIN, 0, 6, POLLIN, IORING_CQE_F_MORE);
	t_expect_no_cqe(&r, 50);
	T_ASSERT_EQ(read(q[0], &c, 1), 1);
	t_ring_exit(&r);
	close(q[0]);
	close(q[1]);
}

int main(void)
{
	struct t_ring r;
	int p[2];

	t_require_engine();
	t_watchdog(30);
	main_tid = gettid();
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	one_round(&r, p, 1, 2, 0);
	one_round(&r, p, 3, 4, IORING_POLL_ADD_MULTI);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
	if (getenv("T_POLL_STALE_GAP"))
		gap_round();
	return T_EXIT_PASS;
}
