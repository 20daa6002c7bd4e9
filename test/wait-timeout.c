/* SPDX-License-Identifier: MIT */
/*
 * io_uring_enter(GETEVENTS) without signals: the EXT_ARG timeout (-ETIME,
 * or 0 and the CQEs when they come first), min_complete above what is in
 * flight or above cq_entries, a non-empty CQ turning -ETIME into 0, a short
 * submit returning at once without waiting, the submit count hiding the
 * wait's error, and the argument checks: argsz, bad pointers, the sigmask
 * size (checked only when the call would sleep). Every case runs on a
 * plain ring and on SINGLE_ISSUER|DEFER_TASKRUN, and on the user engine
 * under several NOWAIT_SPIN_US settings (read at set-up), since a spin
 * before the sleep must keep every rule. Semantics: io_uring.c
 * io_uring_enter/io_get_ext_arg/io_cqring_wait (kernel-semantics.md 4).
 */
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include "helpers.h"

#define MS 1000ULL /* in t_now_us() units */

/* The current configuration, for messages. */
static const char *cur_spin = "-";
static unsigned int cur_flags;

static const char *const spins[] = {"0", "100000", "adaptive"};
static const unsigned int ring_flags[] = {
	0, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};

/* A page nobody can read: the kernel's copy_from_user fails on it. */
static void *bad_page;

#define GETEV_EXT (IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG)

static void ring_init(struct t_ring *r)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = cur_flags;
	setenv("NOWAIT_SPIN_US", cur_spin, 1);
	T_ASSERT_EQ(t_ring_init(r, 8, &p), 0);
	unsetenv("NOWAIT_SPIN_US");
}

static void queue_read(struct t_ring *r, int fd, char *buf, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_READ, fd, buf, 1, 0, ud);
}

static void queue_nop(struct t_ring *r, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, ud);
}

/* A read parked on the empty pipe p: in flight, never completes alone. */
static void park_read(struct t_ring *r, int p[2], char *buf, uint64_t ud)
{
	T_ASSERT_EQ(pipe(p), 0);
	queue_read(r, p[0], buf, ud);
	T_ASSERT_EQ(t_submit(r), 1);
	T_ASSERT_EQ(t_cq_ready(r), 0);
}

/* Complete the parked read by writing a byte, reap it, close the pipe. */
static void unpark_read(struct t_ring *r, int p[2], uint64_t ud)
{
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	t_expect_cqe(r, ud, 1);
	close(p[0]);
	close(p[1]);
}

/* A NOP submitted and left in the CQ. */
static void cqe_present(struct t_ring *r, uint64_t ud)
{
	queue_nop(r, ud);
	T_ASSERT_EQ(t_submit(r), 1);
	T_ASSERT_EQ(t_cq_ready(r), 1);
}

static void ts_ns(struct __kernel_timespec *ts, long long ns)
{
	ts->tv_sec = ns / 1000000000LL;
	ts->tv_nsec = ns % 1000000000LL;
}

/* enter with an EXT_ARG carrying the timeout ts (may be NULL). */
static int enter_ext(struct t_ring *r, unsigned int to_submit,
		     unsigned int min_complete,
		     const struct __kernel_timespec *ts)
{
	struct io_uring_getevents_arg arg;

	memset(&arg, 0, sizeof(arg));
	arg.ts = (uint64_t)(uintptr_t)ts;
	return t_enter(r->fd, to_submit, min_complete, GETEV_EXT, &arg,
		       sizeof(arg));
}

static int enter_timeout_ms(struct t_ring *r, unsigned int min_complete,
			    unsigned int ms)
{
	struct __kernel_timespec ts;

	ts_ns(&ts, ms * 1000000LL);
	return enter_ext(r, 0, min_complete, &ts);
}

/* Nothing in flight: the timeout expires with -ETIME, not before. */
static void test_timeout_idle(void)
{
	struct t_ring r;
	uint64_t t0, dt;

	ring_init(&r);
	t0 = t_now_us();
	T_ASSERT_EQ(enter_timeout_ms(&r, 1, 20), -ETIME);
	dt = t_now_us() - t0;
	T_ASSERT_GE(dt, 19 * MS);
	T_ASSERT_LT(dt, 3000 * MS);
	t_ring_exit(&r);
}

/* A parked read that does not complete: -ETIME, the read stays parked. */
static void test_timeout_parked(void)
{
	struct t_ring r;
	uint64_t t0, dt;
	char buf[1];
	int p[2];

	ring_init(&r);
	park_read(&r, p, buf, 1);
	t0 = t_now_us();
	T_ASSERT_EQ(enter_timeout_ms(&r, 1, 30), -ETIME);
	dt = t_now_us() - t0;
	T_ASSERT_GE(dt, 29 * MS);
	T_ASSERT_LT(dt, 3000 * MS);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	/* and again: a second wait times out the same way */
	T_ASSERT_EQ(enter_timeout_ms(&r, 1, 10), -ETIME);
	unpark_read(&r, p, 1);
	t_ring_exit(&r);
}

/* A zero or negative timeout expires at once. */
static void test_timeout_zero(void)
{
	struct __kernel_timespec ts;
	struct t_ring r;
	uint64_t t0;
	char buf[1];
	int p[2];

	ring_init(&r);
	park_read(&r, p, buf, 1);
	t0 = t_now_us();
	ts.tv_sec = 0;
	ts.tv_nsec = 0;
	T_ASSERT_EQ(enter_ext(&r, 0, 1, &ts), -ETIME);
	ts.tv_sec = -1;
	ts.tv_nsec = 0;
	T_ASSERT_EQ(enter_ext(&r, 0, 1, &ts), -ETIME);
	T_ASSERT_LT(t_now_us() - t0, 2000 * MS);
	unpark_read(&r, p, 1);
	t_ring_exit(&r);
}

/* The CQE comes before the timeout: 0 at once, and the CQE is there. */
static void test_cqe_before_timeout(void)
{
	struct io_uring_cqe cqe;
	struct t_writer w;
	struct t_ring r;
	uint64_t t0, dt;
	char buf[1];
	int p[2];

	ring_init(&r);
	park_read(&r, p, buf, 7);
	t_writer_start(&w, p[1], "y", 1, 10000);
	t0 = t_now_us();
	T_ASSERT_EQ(enter_timeout_ms(&r, 1, 5000), 0);
	dt = t_now_us() - t0;
	T_ASSERT_EQ(t_writer_join(&w), 1);
	T_ASSERT_LT(dt, 4000 * MS);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 7);
	T_ASSERT_EQ(cqe.res, 1);
	T_ASSERT_EQ(buf[0], 'y');
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/* EXT_ARG without a timeout (ts 0): waits as long as it takes. */
static void test_ext_arg_no_ts(void)
{
	struct t_writer w;
	struct t_ring r;
	char buf[1];
	int p[2];

	ring_init(&r);
	park_read(&r, p, buf, 8);
	t_writer_start(&w, p[1], "z", 1, 30000);
	T_ASSERT_EQ(enter_ext(&r, 0, 1, NULL), 0);
	T_ASSERT_EQ(t_writer_join(&w), 1);
	t_expect_cqe(&r, 8, 1);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/* Enough CQEs already: 0 at once, however long the timeout. */
static void test_cqe_already_there(void)
{
	struct t_ring r;
	uint64_t t0;

	ring_init(&r);
	cqe_present(&r, 3);
	t0 = t_now_us();
	T_ASSERT_EQ(enter_timeout_ms(&r, 1, 5000), 0);
	/* min_complete 0: run completions, never wait */
	T_ASSERT_EQ(enter_timeout_ms(&r, 0, 5000), 0);
	T_ASSERT_LT(t_now_us() - t0, 2500 * MS);
	t_expect_cqe(&r, 3, 0);
	t_ring_exit(&r);
}

/*
 * min_complete above what is in flight: nothing can satisfy it, so the
 * timeout decides: -ETIME on an empty CQ; with a CQE in the ring the
 * whole timeout is still waited, then -ETIME becomes 0.
 */
static void test_min_complete_above_inflight(void)
{
	struct t_ring r;
	uint64_t t0, dt;
	char buf[1];
	int p[2];

	ring_init(&r);
	park_read(&r, p, buf, 1);
	t0 = t_now_us();
	T_ASSERT_EQ(enter_timeout_ms(&r, 3, 30), -ETIME);
	T_ASSERT_GE(t_now_us() - t0, 29 * MS);

	cqe_present(&r, 2);
	t0 = t_now_us();
	T_ASSERT_EQ(enter_timeout_ms(&r, 3, 30), 0);
	dt = t_now_us() - t0;
	T_ASSERT_GE(dt, 29 * MS);
	T_ASSERT_LT(dt, 3000 * MS);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	t_expect_cqe(&r, 2, 0);
	unpark_read(&r, p, 1);
	t_ring_exit(&r);
}

/* min_complete is clamped to cq_entries: a full CQ satisfies 1000. */
static void test_min_complete_clamped(void)
{
	struct io_uring_cqe cqe;
	struct t_ring r;
	unsigned int i, cq = 0;
	uint64_t t0;

	ring_init(&r);
	while (cq < *r.cq_entries) {
		for (i = 0; i < 4 && cq < *r.cq_entries; i++, cq++)
			queue_nop(&r, 100 + cq);
		T_ASSERT_EQ(t_submit(&r), (int)i);
	}
	T_ASSERT_EQ(t_cq_ready(&r), *r.cq_entries);
	t0 = t_now_us();
	T_ASSERT_EQ(enter_timeout_ms(&r, 1000, 5000), 0);
	T_ASSERT_LT(t_now_us() - t0, 2500 * MS);
	for (i = 0; i < cq; i++) {
		T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, 100 + i);
	}
	t_ring_exit(&r);
}

/*
 * to_submit larger than the SQEs there: the submit comes up short and
 * enter returns what it submitted at once, without waiting (GETEVENTS or
 * not). Bounded by a 5 s timeout, so a wrong engine fails instead of
 * hanging.
 */
static void test_short_submit_no_wait(void)
{
	struct __kernel_timespec ts;
	struct t_ring r;
	uint64_t t0;
	char buf[1];
	int p[2];

	ring_init(&r);
	T_ASSERT_EQ(pipe(p), 0);
	ts_ns(&ts, 5000000000LL);
	queue_read(&r, p[0], buf, 1);
	t_ring_flush(&r);
	t0 = t_now_us();
	T_ASSERT_EQ(enter_ext(&r, 2, 1, &ts), 1);
	T_ASSERT_LT(t_now_us() - t0, 2500 * MS);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	/* nothing in the SQ at all: 0, at once */
	t0 = t_now_us();
	T_ASSERT_EQ(enter_ext(&r, 4, 1, &ts), 0);
	T_ASSERT_LT(t_now_us() - t0, 2500 * MS);
	/* and the same without EXT_ARG (no timeout to bound it) */
	T_ASSERT_EQ(t_enter(r.fd, 4, 1, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	unpark_read(&r, p, 1);
	t_ring_exit(&r);
}

/*
 * A submit that consumed SQEs returns their count: the wait's -ETIME (or
 * argument error) is not seen. The wait itself still happens.
 */
static void test_submit_count_hides_wait_result(void)
{
	struct __kernel_timespec ts;
	struct t_ring r;
	uint64_t t0;
	char buf[1];
	int p[2];

	ring_init(&r);
	T_ASSERT_EQ(pipe(p), 0);
	ts_ns(&ts, 20000000LL);
	queue_read(&r, p[0], buf, 1);
	t0 = t_now_us();
	T_ASSERT_EQ(enter_ext(&r, t_ring_flush(&r), 1, &ts), 1);
	T_ASSERT_GE(t_now_us() - t0, 19 * MS);
	T_ASSERT_EQ(t_cq_ready(&r), 0);

	/* a bad argsz with a submit: the NOP's count, its CQE there */
	queue_nop(&r, 2);
	T_ASSERT_EQ(t_enter(r.fd, t_ring_flush(&r), 1, GETEV_EXT, NULL, 0), 1);
	t_expect_cqe(&r, 2, 0);
	unpark_read(&r, p, 1);
	t_ring_exit(&r);
}

/* EXT_ARG: argsz must be sizeof(struct io_uring_getevents_arg). */
static void test_ext_arg_size(void)
{
	static const size_t sizes[] = {0, 8, 16, 23, 25, 32, 4096};
	struct io_uring_getevents_arg arg[2];
	struct t_ring r;
	size_t i;

	memset(arg, 0, sizeof(arg));
	ring_init(&r);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		T_ASSERT_EQ(t_enter(r.fd, 0, 1, GETEV_EXT, arg, sizes[i]),
			    -EINVAL);
	/* checked before the CQ is looked at */
	cqe_present(&r, 5);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		T_ASSERT_EQ(t_enter(r.fd, 0, 1, GETEV_EXT, arg, sizes[i]),
			    -EINVAL);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, GETEV_EXT, arg, 23), -EINVAL);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	t_expect_cqe(&r, 5, 0);
	t_ring_exit(&r);
}

/* Bad pointers: the argument itself and the timespec are always read. */
static void test_ext_arg_fault(void)
{
	struct io_uring_getevents_arg arg;
	struct t_ring r;
	int pass;

	ring_init(&r);
	for (pass = 0; pass < 2; pass++) {
		if (pass)
			cqe_present(&r, 6);
		T_ASSERT_EQ(
			t_enter(r.fd, 0, 1, GETEV_EXT, (void *)8, sizeof(arg)),
			-EFAULT);
		T_ASSERT_EQ(
			t_enter(r.fd, 0, 1, GETEV_EXT, bad_page, sizeof(arg)),
			-EFAULT);
		memset(&arg, 0, sizeof(arg));
		arg.ts = (uint64_t)(uintptr_t)bad_page;
		T_ASSERT_EQ(t_enter(r.fd, 0, 1, GETEV_EXT, &arg, sizeof(arg)),
			    -EFAULT);
		arg.ts = 16;
		T_ASSERT_EQ(t_enter(r.fd, 0, 1, GETEV_EXT, &arg, sizeof(arg)),
			    -EFAULT);
	}
	t_expect_cqe(&r, 6, 0);
	t_ring_exit(&r);
}

/*
 * The sigmask in the EXT_ARG (and its size) is only looked at when the
 * call is about to sleep: with enough CQEs a bad one is ignored.
 */
static void test_ext_arg_sigmask_checked_late(void)
{
	struct __kernel_timespec ts;
	struct io_uring_getevents_arg arg;
	sigset_t set;
	struct t_ring r;
	char buf[1];
	int p[2];

	sigemptyset(&set);
	ts_ns(&ts, 10000000LL);
	ring_init(&r);
	park_read(&r, p, buf, 1);
	memset(&arg, 0, sizeof(arg));
	arg.ts = (uint64_t)(uintptr_t)&ts;
	arg.sigmask = (uint64_t)(uintptr_t)&set;
	arg.sigmask_sz = 4;
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, GETEV_EXT, &arg, sizeof(arg)), -EINVAL);
	arg.sigmask_sz = 128;
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, GETEV_EXT, &arg, sizeof(arg)), -EINVAL);
	arg.sigmask_sz = 8;
	arg.sigmask = (uint64_t)(uintptr_t)bad_page;
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, GETEV_EXT, &arg, sizeof(arg)), -EFAULT);
	/* a good one: the timeout */
	arg.sigmask = (uint64_t)(uintptr_t)&set;
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, GETEV_EXT, &arg, sizeof(arg)), -ETIME);

	cqe_present(&r, 9);
	arg.sigmask_sz = 4;
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, GETEV_EXT, &arg, sizeof(arg)), 0);
	arg.sigmask_sz = 8;
	arg.sigmask = (uint64_t)(uintptr_t)bad_page;
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, GETEV_EXT, &arg, sizeof(arg)), 0);
	t_expect_cqe(&r, 9, 0);
	unpark_read(&r, p, 1);
	t_ring_exit(&r);
}

/*
 * Without EXT_ARG the argument is a sigset_t * and argsz its size (8):
 * a wrong size or a bad pointer fails only when the call would sleep.
 */
static void test_plain_sigmask_arg(void)
{
	struct t_writer w;
	sigset_t set;
	struct t_ring r;
	char buf[1];
	int p[2];

	sigemptyset(&set);
	ring_init(&r);
	park_read(&r, p, buf, 1);
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, &set, 7),
		    -EINVAL);
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, &set, 16),
		    -EINVAL);
	T_ASSERT_EQ(
		t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, &set, sizeof(set)),
		-EINVAL);
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, bad_page, 8),
		    -EFAULT);
	T_ASSERT_EQ(t_cq_ready(&r), 0);

	/* a good mask: waits until the CQE */
	t_writer_start(&w, p[1], "s", 1, 20000);
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, &set, 8), 0);
	T_ASSERT_EQ(t_writer_join(&w), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	/* CQE there: the bad sizes and pointers are never looked at */
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, &set, 7), 0);
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, bad_page, 8),
		    0);
	t_expect_cqe(&r, 1, 1);

	/* NULL is no mask, whatever argsz says */
	queue_read(&r, p[0], buf, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_writer_start(&w, p[1], "t", 1, 20000);
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 5), 0);
	T_ASSERT_EQ(t_writer_join(&w), 1);
	t_expect_cqe(&r, 2, 1);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/* EXT_ARG without GETEVENTS: nothing waits, the argument is not read. */
static void test_ext_arg_without_getevents(void)
{
	struct t_ring r;

	ring_init(&r);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_EXT_ARG, bad_page, 3), 0);
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_EXT_ARG, NULL, 0), 0);
	queue_nop(&r, 4);
	T_ASSERT_EQ(t_enter(r.fd, t_ring_flush(&r), 1, IORING_ENTER_EXT_ARG,
			    bad_page, 3),
		    1);
	t_expect_cqe(&r, 4, 0);
	t_ring_exit(&r);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{"timeout_idle", test_timeout_idle},
	{"timeout_parked", test_timeout_parked},
	{"timeout_zero", test_timeout_zero},
	{"cqe_before_timeout", test_cqe_before_timeout},
	{"ext_arg_no_ts", test_ext_arg_no_ts},
	{"cqe_already_there", test_cqe_already_there},
	{"min_complete_above_inflight", test_min_complete_above_inflight},
	{"min_complete_clamped", test_min_complete_clamped},
	{"short_submit_no_wait", test_short_submit_no_wait},
	{"submit_count_hides_wait_result", test_submit_count_hides_wait_result},
	{"ext_arg_size", test_ext_arg_size},
	{"ext_arg_fault", test_ext_arg_fault},
	{"ext_arg_sigmask_checked_late", test_ext_arg_sigmask_checked_late},
	{"plain_sigmask_arg", test_plain_sigmask_arg},
	{"ext_arg_without_getevents", test_ext_arg_without_getevents},
};

/*
 * Arguments, all optional, to narrow a run down: the one test to run
 * ("all" for every one), the ring flags (hex), the spin setting.
 */
int main(int argc, char **argv)
{
	const char *only = argc > 1 && strcmp(argv[1], "all") ? argv[1] : NULL;
	const char *only_spin = argc > 3 ? argv[3] : NULL;
	long only_flags = argc > 2 ? strtol(argv[2], NULL, 16) : -1;
	size_t f, s, i;

	t_require_engine();
	t_watchdog(60);
	bad_page =
		mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(bad_page != MAP_FAILED);
	for (f = 0; f < sizeof(ring_flags) / sizeof(ring_flags[0]); f++) {
		cur_flags = ring_flags[f];
		if (only_flags >= 0 && cur_flags != (unsigned long)only_flags)
			continue;
		/* the kernel has no spin setting: one pass is enough */
		for (s = 0; s < sizeof(spins) / sizeof(spins[0]); s++) {
			cur_spin = spins[s];
			if (only_spin && strcmp(only_spin, cur_spin))
				continue;
			if (t_engine() == T_ENGINE_KERNEL && s)
				break;
			for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
				if (only && strcmp(only, tests[i].name))
					continue;
				fprintf(stderr, "[%s] flags 0x%x spin %s: %s\n",
					t_engine_name(), cur_flags, cur_spin,
					tests[i].name);
				tests[i].fn();
			}
		}
	}
	return T_EXIT_PASS;
}
