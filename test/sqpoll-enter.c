/* SPDX-License-Identifier: MIT */
/*
 * io_uring_enter on an SQPOLL ring, against the kernel:
 * - the result is to_submit in full, as the system call's long, even past
 *   INT_MAX (never a negative number that reads as an errno); nowait's
 *   int nowait_enter holds it at INT_MAX;
 * - SQ_WAIT|GETEVENTS on a full SQ whose poller sleeps (NEED_WAKEUP, not
 *   woken): one signal, sent once the caller sleeps, ends the SQ wait and
 *   the CQ wait that follows too (-EINTR, to_submit being 0) instead of
 *   waiting on. The waits have no timeout: a wait that goes on hangs and
 *   the watchdog fails the test.
 * Semantics: io_uring.c io_uring_enter (ret = to_submit, a long),
 * sqpoll.c io_sqpoll_wait_sq, io_cqring_wait.
 */
#include <limits.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <nowait.h>
#include <nowait-hook.h>
#include "helpers.h"

/* The system call's own long result, on the selected engine. */
static long enter_long(int fd, unsigned int to_submit, unsigned int flags)
{
	long r;

	if (t_engine() == T_ENGINE_USER)
		return nowait_hook_enter(fd, to_submit, 0, flags, NULL, 0);
	r = syscall(__NR_io_uring_enter, fd, to_submit, 0, flags, NULL, 0);
	return r < 0 ? -errno : r;
}

static int sqpoll_ring(struct t_ring *r, unsigned int entries)
{
	struct io_uring_params p = {.flags = IORING_SETUP_SQPOLL,
				    .sq_thread_idle = 10};

	return t_ring_init(r, entries, &p);
}

static void test_big_to_submit(void)
{
	struct t_ring r;
	int ret = sqpoll_ring(&r, 4);

	if (ret) {
		printf("skip: SQPOLL setup: %d\n", ret);
		exit(T_EXIT_SKIP);
	}
	T_ASSERT_EQ(enter_long(r.fd, 0x80000000u, 0), 0x80000000L);
	T_ASSERT_EQ(enter_long(r.fd, UINT_MAX, IORING_ENTER_SQ_WAKEUP),
		    (long)UINT_MAX);
	T_ASSERT_EQ(enter_long(r.fd, 7, 0), 7);
	if (t_engine() == T_ENGINE_USER) {
		T_ASSERT_EQ(nowait_enter(r.fd, 0x80000000u, 0, 0, NULL, 0),
			    INT_MAX);
		T_ASSERT_EQ(nowait_enter(r.fd, 5, 0, 0, NULL, 0), 5);
	}
	t_ring_exit(&r);
}

static volatile sig_atomic_t hits;

static void on_usr1(int sig)
{
	(void)sig;
	hits++;
}

struct kicker {
	pthread_t main;
	pid_t main_tid;
};

/* Is thread tid asleep (state S in its stat)? */
static bool asleep(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/*
 * One signal, once the main thread has slept in enter for a while: a
 * second one would end a wait that wrongly went on after the first.
 */
static void *kick(void *arg)
{
	struct kicker *k = arg;
	int quiet = 0;

	for (int i = 0; i < 1000 && quiet < 5; i++) {
		usleep(10000);
		quiet = asleep(k->main_tid) ? quiet + 1 : 0;
	}
	pthread_kill(k->main, SIGUSR1);
	return NULL;
}

static void test_sq_wait_signal(void)
{
	struct kicker k = {.main = pthread_self(),
			   .main_tid = (pid_t)syscall(SYS_gettid)};
	struct sigaction sa;
	struct t_ring r;
	pthread_t th;
	int ret, i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	T_ASSERT_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	T_ASSERT_EQ(sqpoll_ring(&r, 2), 0);
	/* The poller falls asleep after its idle time (bounded). */
	for (i = 0; i < 500; i++) {
		if (__atomic_load_n(r.sq_flags, __ATOMIC_ACQUIRE) &
		    IORING_SQ_NEED_WAKEUP)
			break;
		usleep(10000);
	}
	T_ASSERT_LT(i, 500);
	/* Fill the SQ without waking it: it stays full. */
	t_prep_nop(t_get_sqe(&r), 1);
	t_prep_nop(t_get_sqe(&r), 2);
	t_ring_flush(&r);
	hits = 0;
	T_ASSERT_EQ(pthread_create(&th, NULL, kick, &k), 0);
	ret = t_enter(r.fd, 0, 1, IORING_ENTER_SQ_WAIT | IORING_ENTER_GETEVENTS,
		      NULL, 0);
	pthread_join(th, NULL);
	T_ASSERT_EQ(ret, -EINTR);
	T_ASSERT_EQ(hits, 1);
	/* Woken, the poller runs the two NOPs. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0), 0);
	t_expect_cqe(&r, 1, 0);
	t_expect_cqe(&r, 2, 0);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_big_to_submit();
	/* TSan defers signal handlers past the wait this one must end. */
	if (!T_TSAN)
		test_sq_wait_signal();
	return T_EXIT_PASS;
}
