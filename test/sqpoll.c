/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_SQPOLL against the kernel: SQEs are consumed without enter,
 * NEED_WAKEUP after sq_thread_idle and IORING_ENTER_SQ_WAKEUP, SQ_WAIT,
 * what enter returns, SQ_AFF pinning, ATTACH_WQ sharing one poller thread,
 * CQ overflow, SINGLE_ISSUER, a forked child submitting on the parent's
 * ring, the poller's end when the ring is let go of, and bad parameters.
 * The poller is seen as a thread named iou-sqp-* on both engines.
 */
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

#if defined(__SANITIZE_THREAD__)
/* The SQ tail's release, for TSan (see NW_TSAN_RELEASE in internal.h). */
void __tsan_release(void *addr);
extern char nw_tsan_ring_tag;
#define T_TSAN_RELEASE() __tsan_release(&nw_tsan_ring_tag)
#else
#define T_TSAN_RELEASE() \
	do {             \
	} while (0)
#endif

static int sq_setup(struct t_ring *r, unsigned int entries, unsigned int flags,
		    unsigned int idle_ms)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | flags;
	p.sq_thread_idle = idle_ms;
	return t_ring_init(r, entries, &p);
}

/* Publish the SQ tail (no enter): what the poller watches. */
static void flush(struct t_ring *r)
{
	T_TSAN_RELEASE();
	t_ring_flush(r);
}

static void queue_nops(struct t_ring *r, unsigned int n, uint64_t ud)
{
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = t_get_sqe(r);

		T_ASSERT(sqe != NULL);
		t_prep_nop(sqe, ud + i);
	}
	flush(r);
}

static unsigned int sq_flags(struct t_ring *r)
{
	return __atomic_load_n(r->sq_flags, __ATOMIC_SEQ_CST);
}

/* SQ_WAKEUP if the poller sleeps (after the tail store: a full barrier) */
static unsigned int wake_flag(struct t_ring *r)
{
	__atomic_fetch_add(r->sq_tail, 0,
			   __ATOMIC_SEQ_CST); /* no TSan fences */
	return (sq_flags(r) & IORING_SQ_NEED_WAKEUP) ? IORING_ENTER_SQ_WAKEUP
						     : 0;
}

/* Queue n NOPs and wake the poller if needed, as liburing's submit. */
static void submit_nops(struct t_ring *r, unsigned int n, uint64_t ud)
{
	queue_nops(r, n, ud);
	T_ASSERT_EQ(t_enter(r->fd, n, 0, wake_flag(r), NULL, 0), (int)n);
}

/* Wait (polling, no enter) for the CQE of user_data; 0 or -ETIME. */
static int poll_cqe(struct t_ring *r, uint64_t ud, int res, unsigned int ms)
{
	struct io_uring_cqe cqe;
	uint64_t end = t_now_us() + ms * 1000ULL;

	while (t_peek_cqe(r, &cqe)) {
		if (t_now_us() > end)
			return -ETIME;
		usleep(500);
	}
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, res);
	return 0;
}

/* Wait until flag is set (or clear) in sq.flags: 0 or -ETIME. */
static int wait_flag(struct t_ring *r, unsigned int flag, bool set,
		     unsigned int ms)
{
	uint64_t end = t_now_us() + ms * 1000ULL;

	while (!!(sq_flags(r) & flag) != set) {
		if (t_now_us() > end)
			return -ETIME;
		usleep(1000);
	}
	return 0;
}

/* Threads of this process named iou-sqp-* (the pollers), up to 64. */
static int pollers(pid_t *tids)
{
	char path[300], comm[32];
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	T_ASSERT(d != NULL);
	while ((de = readdir(d)) && n < 64) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    !strncmp(comm, "iou-sqp-", 8)) {
			if (tids)
				tids[n] = atoi(de->d_name);
			n++;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* Wait until the process has want pollers: 0 or -ETIME. */
static int wait_pollers(int want, unsigned int ms)
{
	uint64_t end = t_now_us() + ms * 1000ULL;

	while (pollers(NULL) != want) {
		if (t_now_us() > end)
			return -ETIME;
		usleep(10000);
	}
	return 0;
}

/* SQEs complete without enter; enter returns to_submit. */
static void test_submit_without_enter(void)
{
	struct __kernel_timespec ts = {0, 20000000};
	struct io_uring_getevents_arg arg = {.ts = (uintptr_t)&ts};
	struct t_ring r;

	T_ASSERT_EQ(sq_setup(&r, 8, 0, 5000), 0);
	T_ASSERT(r.p.features & IORING_FEAT_SQPOLL_NONFIXED);
	T_ASSERT_EQ(wait_pollers(1, 2000), 0);
	/* A new poller with nothing to do sleeps at once (as the kernel's). */
	T_ASSERT_EQ(wait_flag(&r, IORING_SQ_NEED_WAKEUP, true, 2000), 0);
	queue_nops(&r, 1, 1);
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0), 1);
	T_ASSERT_EQ(poll_cqe(&r, 1, 0, 2000), 0);
	/* Awake for sq_thread_idle (5 s): no enter needed. */
	queue_nops(&r, 3, 10);
	for (int i = 0; i < 3; i++)
		T_ASSERT_EQ(poll_cqe(&r, 10 + i, 0, 2000), 0);
	T_ASSERT_EQ(*r.sq_head, *r.sq_tail);

	/* to_submit is returned as is: nothing is submitted by enter. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, 0, NULL, 0), 0);
	T_ASSERT_EQ(t_enter(r.fd, 5, 0, 0, NULL, 0), 5);
	/* GETEVENTS waits as usual; its error shows only without to_submit */
	T_ASSERT_EQ(t_enter(r.fd, 0, 1,
			    IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg,
			    sizeof(arg)),
		    -ETIME);
	T_ASSERT_EQ(t_enter(r.fd, 3, 1,
			    IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg,
			    sizeof(arg)),
		    3);
	queue_nops(&r, 1, 20);
	T_ASSERT_EQ(t_enter(r.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 20, 0), 0);
	t_ring_exit(&r);
}

/* After sq_thread_idle the poller sleeps: NEED_WAKEUP, then SQ_WAKEUP. */
static void test_need_wakeup(void)
{
	struct t_ring r;

	T_ASSERT_EQ(sq_setup(&r, 8, 0, 30), 0);
	T_ASSERT_EQ(wait_flag(&r, IORING_SQ_NEED_WAKEUP, true, 2000), 0);
	/* Asleep: an SQE stays queued until the wake-up. */
	queue_nops(&r, 1, 1);
	usleep(100000);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	T_ASSERT_NE(*r.sq_head, *r.sq_tail);
	T_ASSERT(sq_flags(&r) & IORING_SQ_NEED_WAKEUP);
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0), 1);
	T_ASSERT_EQ(poll_cqe(&r, 1, 0, 2000), 0);
	/* Awake again for a while, then back to sleep. */
	T_ASSERT_EQ(wait_flag(&r, IORING_SQ_NEED_WAKEUP, true, 2000), 0);
	/* SQ_WAKEUP with GETEVENTS, as liburing's submit_and_wait does. */
	queue_nops(&r, 2, 5);
	T_ASSERT_EQ(t_enter(r.fd, 2, 2,
			    IORING_ENTER_SQ_WAKEUP | IORING_ENTER_GETEVENTS,
			    NULL, 0),
		    2);
	T_ASSERT_EQ(t_cq_ready(&r), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, 0), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 6, 0), 0);
	t_ring_exit(&r);
}

/* SQ_WAIT returns once the poller made room in a full SQ. */
static void test_sq_wait(void)
{
	struct t_ring r;

	T_ASSERT_EQ(sq_setup(&r, 4, 0, 30), 0);
	/* Not full: returns at once. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_SQ_WAIT, NULL, 0), 0);
	T_ASSERT_EQ(wait_flag(&r, IORING_SQ_NEED_WAKEUP, true, 2000), 0);
	queue_nops(&r, 4, 1);
	T_ASSERT(t_get_sqe(&r) == NULL);
	T_ASSERT_EQ(*r.sq_tail - *r.sq_head, 4);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0,
			    IORING_ENTER_SQ_WAKEUP | IORING_ENTER_SQ_WAIT, NULL,
			    0),
		    0);
	T_ASSERT_LT(*r.sq_tail - __atomic_load_n(r.sq_head, __ATOMIC_ACQUIRE),
		    4);
	for (int i = 0; i < 4; i++)
		T_ASSERT_EQ(poll_cqe(&r, 1 + i, 0, 2000), 0);
	t_ring_exit(&r);
}

/* The first CPU in a Cpus_allowed_list ("3" or "0-1"), or -1. */
static int thread_cpus(pid_t tid, char *buf, size_t len)
{
	char path[64], line[256];
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Cpus_allowed_list:", 18))
			continue;
		snprintf(buf, len, "%s", line + 18 + strspn(line + 18, " \t"));
		buf[strcspn(buf, "\n")] = '\0';
		ret = 0;
	}
	fclose(f);
	return ret;
}

/* SQ_AFF pins the poller; a bad CPU is -EINVAL. */
static void test_sq_aff(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct io_uring_params p;
	struct t_ring r;
	char cpus[64];
	pid_t tid;
	int cpu = (int)(ncpu > 1 ? ncpu - 1 : 0);

	T_ASSERT_EQ(wait_pollers(0, 5000), 0);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
	p.sq_thread_cpu = (unsigned int)cpu;
	T_ASSERT_EQ(t_ring_init(&r, 4, &p), 0);
	T_ASSERT_EQ(wait_pollers(1, 2000), 0);
	T_ASSERT_EQ(pollers(&tid), 1);
	T_ASSERT_EQ(thread_cpus(tid, cpus, sizeof(cpus)), 0);
	T_ASSERT_EQ(atoi(cpus), cpu);
	T_ASSERT(strchr(cpus, '-') == NULL && strchr(cpus, ',') == NULL);
	submit_nops(&r, 1, 1);
	T_ASSERT_EQ(poll_cqe(&r, 1, 0, 2000), 0);
	t_ring_exit(&r);

	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
	p.sq_thread_cpu = 4096;
	T_ASSERT_EQ(t_setup(4, &p), -EINVAL);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
	p.sq_thread_cpu = (unsigned int)sysconf(_SC_NPROCESSORS_CONF);
	T_ASSERT_EQ(t_setup(4, &p), -EINVAL);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQ_AFF;
	T_ASSERT_EQ(t_setup(4, &p), -EINVAL);
}

/* ATTACH_WQ: rings share one poller; the wq_fd checks. */
static void test_attach_wq(void)
{
	struct io_uring_params p;
	struct t_ring a, b, c;
	int pfd[2], plain;

	T_ASSERT_EQ(wait_pollers(0, 5000), 0);
	T_ASSERT_EQ(sq_setup(&a, 8, 0, 1000), 0);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_ATTACH_WQ;
	p.wq_fd = (unsigned int)a.fd;
	T_ASSERT_EQ(t_ring_init(&b, 8, &p), 0);
	/* Attached: the SQ_AFF cpu is not looked at. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_ATTACH_WQ |
		  IORING_SETUP_SQ_AFF;
	p.wq_fd = (unsigned int)b.fd;
	p.sq_thread_cpu = 4096;
	T_ASSERT_EQ(t_ring_init(&c, 8, &p), 0);
	T_ASSERT_EQ(wait_pollers(1, 2000), 0);
	usleep(20000);
	T_ASSERT_EQ(pollers(NULL), 1);
	submit_nops(&a, 2, 1);
	submit_nops(&b, 2, 11);
	submit_nops(&c, 2, 21);
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(poll_cqe(&a, 1 + i, 0, 2000), 0);
		T_ASSERT_EQ(poll_cqe(&b, 11 + i, 0, 2000), 0);
		T_ASSERT_EQ(poll_cqe(&c, 21 + i, 0, 2000), 0);
	}

	/* Bad wq_fd: no fd, not a ring, a ring without a poller. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_ATTACH_WQ;
	p.wq_fd = 9999;
	T_ASSERT_EQ(t_setup(8, &p), -ENXIO);
	T_ASSERT_EQ(pipe(pfd), 0);
	p.wq_fd = (unsigned int)pfd[0];
	T_ASSERT_EQ(t_setup(8, &p), -EINVAL);
	memset(&p, 0, sizeof(p));
	plain = t_setup(8, &p);
	T_ASSERT_GE(plain, 0);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_ATTACH_WQ;
	p.wq_fd = (unsigned int)plain;
	T_ASSERT_EQ(t_setup(8, &p), -EINVAL);
	/* Without SQPOLL only the fd is checked. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_ATTACH_WQ;
	p.wq_fd = (unsigned int)pfd[0];
	T_ASSERT_EQ(t_setup(8, &p), -EINVAL);
	close(pfd[0]);
	close(pfd[1]);
	close(plain);
	t_ring_exit(&c);
	t_ring_exit(&b);
	t_ring_exit(&a);
}

/* A full CQ under SQPOLL: IORING_SQ_CQ_OVERFLOW, flushed by enter. */
static void test_cq_overflow(void)
{
	struct io_uring_params p;
	struct io_uring_cqe cqe;
	struct t_ring r;
	unsigned int i;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	T_ASSERT_EQ(t_ring_init(&r, 4, &p), 0); /* 8 CQEs */
	for (i = 0; i < 3; i++) {
		submit_nops(&r, 4, 4 * i);
		while (__atomic_load_n(r.sq_head, __ATOMIC_ACQUIRE) !=
		       *r.sq_tail)
			usleep(1000);
	}
	T_ASSERT_EQ(wait_flag(&r, IORING_SQ_CQ_OVERFLOW, true, 2000), 0);
	T_ASSERT_EQ(t_cq_ready(&r), 8);
	for (i = 0; i < 8; i++) {
		T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, i);
	}
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(t_cq_ready(&r), 4);
	T_ASSERT_EQ(sq_flags(&r) & IORING_SQ_CQ_OVERFLOW, 0);
	for (i = 8; i < 12; i++)
		T_ASSERT_EQ(t_expect_cqe(&r, i, 0), 0);
	t_ring_exit(&r);
}

struct other {
	struct t_ring *r;
	int reg, enter;
};

static void *other_thread(void *arg)
{
	struct other *o = arg;

	queue_nops(o->r, 1, 7);
	o->enter = t_enter(o->r->fd, 1, 1,
			   IORING_ENTER_GETEVENTS | wake_flag(o->r), NULL, 0);
	o->reg = t_register(o->r->fd, IORING_REGISTER_PROBE, NULL, 0);
	return NULL;
}

/* SINGLE_ISSUER|SQPOLL: the poller issues; any thread may queue. */
static void test_single_issuer(void)
{
	struct io_uring_params p;
	struct other o;
	struct t_ring r;
	pthread_t th;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SINGLE_ISSUER |
		  IORING_SETUP_DEFER_TASKRUN;
	T_ASSERT_EQ(t_setup(4, &p), -EINVAL);
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_COOP_TASKRUN;
	T_ASSERT_EQ(t_setup(4, &p), -EINVAL);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SINGLE_ISSUER;
	T_ASSERT_EQ(t_ring_init(&r, 4, &p), 0);
	o.r = &r;
	T_ASSERT_EQ(pthread_create(&th, NULL, other_thread, &o), 0);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	T_ASSERT_EQ(o.enter, 1);
	/* Registering is still for the creator only. */
	T_ASSERT_EQ(o.reg, -EEXIST);
	T_ASSERT_EQ(t_expect_cqe(&r, 7, 0), 0);
	t_ring_exit(&r);
}

/* A forked child submits on the parent's ring: the parent's poller. */
static void test_fork_child(void)
{
	struct t_ring r;
	pid_t pid;
	int status;

	T_ASSERT_EQ(sq_setup(&r, 4, 0, 30), 0);
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (!pid) {
		struct io_uring_cqe cqe;
		unsigned int fl;

		alarm(10);
		queue_nops(&r, 1, 42);
		fl = wake_flag(&r);
		if (t_enter(r.fd, 1, 1, fl | IORING_ENTER_GETEVENTS, NULL, 0) !=
		    1)
			_exit(2);
		if (t_peek_cqe(&r, &cqe) || cqe.user_data != 42 || cqe.res)
			_exit(3);
		_exit(0);
	}
	status = t_waitpid_timeout(pid, 10000);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), 0);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	r.sqe_tail = *r.sq_tail; /* the child queued one */
	/* The parent's ring still works. */
	queue_nops(&r, 1, 43);
	T_ASSERT_EQ(t_enter(r.fd, 1, 1,
			    IORING_ENTER_SQ_WAKEUP | IORING_ENTER_GETEVENTS,
			    NULL, 0),
		    1);
	T_ASSERT_EQ(t_expect_cqe(&r, 43, 0), 0);
	t_ring_exit(&r);
}

/*
 * A ring inherited from a process that exited: its poller died with it,
 * so enter says -EOWNERDEAD. The middle process makes the ring, forks and
 * exits; its child enters once it is gone and reports through a pipe.
 */
static void test_owner_dead(void)
{
	int p[2], status;
	char res = 0;
	pid_t mid;

#if defined(__SANITIZE_THREAD__)
	return; /* the middle process starts a thread after fork: TSan dies */
#elif defined(__SANITIZE_ADDRESS__)
	/*
	 * Once in CI the middle process (poller thread running, then fork)
	 * did not exit under ASan; not seen without it. Unexplained (the
	 * sanitizer runtime's fork with a running thread is suspected):
	 * see the closing note of 2026-11-30.
	 */
	return;
#endif
	T_ASSERT_EQ(pipe(p), 0);
	mid = fork();
	T_ASSERT_GE(mid, 0);
	if (!mid) {
		struct t_ring r;
		pid_t child;

		if (sq_setup(&r, 4, 0, 30))
			_exit(4);
		child = fork();
		if (child)
			_exit(child < 0 ? 5 : 0); /* the poller ends with us */
		alarm(10);
		for (int i = 0; i < 200 && getppid() == mid; i++)
			usleep(10000);
		usleep(50000);
		res = t_enter(r.fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0) ==
				      -EOWNERDEAD
			      ? 'y'
			      : 'n';
		_exit(write(p[1], &res, 1) == 1 ? 0 : 6);
	}
	close(p[1]);
	status = t_waitpid_timeout(mid, 10000);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), 0);
	T_ASSERT_EQ(read(p[0], &res, 1), 1);
	T_ASSERT_EQ(res, 'y');
	close(p[0]);
}

/* When the ring is let go of (closed, unmapped), its poller ends. */
static void test_teardown(void)
{
	struct t_ring a, b;
	struct io_uring_params p;

	T_ASSERT_EQ(wait_pollers(0, 5000), 0);
	T_ASSERT_EQ(sq_setup(&a, 4, 0, 10), 0);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_ATTACH_WQ;
	p.wq_fd = (unsigned int)a.fd;
	T_ASSERT_EQ(t_ring_init(&b, 4, &p), 0);
	T_ASSERT_EQ(wait_pollers(1, 2000), 0);
	/* Still one ring left: the poller stays and serves it. */
	t_ring_exit(&a);
	usleep(50000);
	T_ASSERT_EQ(pollers(NULL), 1);
	queue_nops(&b, 1, 1);
	T_ASSERT_EQ(t_enter(b.fd, 1, 1,
			    IORING_ENTER_SQ_WAKEUP | IORING_ENTER_GETEVENTS,
			    NULL, 0),
		    1);
	T_ASSERT_EQ(t_expect_cqe(&b, 1, 0), 0);
	t_ring_exit(&b);
	T_ASSERT_EQ(wait_pollers(0, 5000), 0);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_submit_without_enter();
	test_teardown();
	test_need_wakeup();
	test_sq_wait();
	test_sq_aff();
	test_attach_wq();
	test_cq_overflow();
	test_single_issuer();
	test_fork_child();
	test_owner_dead();
	return T_EXIT_PASS;
}
