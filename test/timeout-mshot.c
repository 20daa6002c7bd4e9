/* SPDX-License-Identifier: MIT */
/*
 * IORING_TIMEOUT_MULTISHOT against the kernel (6.4+; skips where the
 * kernel says -EINVAL): off expiries then the end, for ever until removed,
 * ended by a full CQ, with ABS (-EINVAL), and its expiries waking a waiter
 * and not counting for count-based timeouts.
 */
#include <unistd.h>
#include "helpers.h"

static void prep_timeout(struct t_ring *r, struct __kernel_timespec *ts,
			 unsigned int off, unsigned int flags, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_TIMEOUT;
	sqe->fd = -1;
	sqe->addr = (uintptr_t)ts;
	sqe->len = 1;
	sqe->off = off;
	sqe->timeout_flags = flags;
	sqe->user_data = ud;
}

/* Three expiries: two with F_MORE, the last one without. */
static bool test_repeats(void)
{
	struct __kernel_timespec ts = {0, 10000000};
	struct io_uring_cqe cqe;
	struct t_ring r;
	uint64_t t0;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_timeout(&r, &ts, 3, IORING_TIMEOUT_MULTISHOT, 1);
	t0 = t_now_us();
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	if (cqe.res == -EINVAL) {
		t_ring_exit(&r);
		return false; /* no multishot timeouts in this kernel */
	}
	T_ASSERT_EQ(cqe.user_data, 1);
	T_ASSERT_EQ(cqe.res, -ETIME);
	T_ASSERT_EQ(cqe.flags, IORING_CQE_F_MORE);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -ETIME), IORING_CQE_F_MORE);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -ETIME), 0);
	T_ASSERT_GE(t_now_us() - t0, 28000);
	t_expect_no_cqe(&r, 30);

	/* One expiry: a single CQE without F_MORE. */
	prep_timeout(&r, &ts, 1, IORING_TIMEOUT_MULTISHOT, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, -ETIME), 0);
	t_ring_exit(&r);
	return true;
}

/* The same on a DEFER_TASKRUN ring, where CQEs are posted in enter. */
static void test_defer_taskrun(void)
{
	struct __kernel_timespec ts = {0, 5000000};
	struct io_uring_params p;
	struct t_ring r;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	prep_timeout(&r, &ts, 3, IORING_TIMEOUT_MULTISHOT, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -ETIME), IORING_CQE_F_MORE);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -ETIME), IORING_CQE_F_MORE);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -ETIME), 0);
	t_expect_no_cqe(&r, 20);
	t_ring_exit(&r);
}

/* off 0: for ever, until removed (-ECANCELED, no F_MORE). */
static void test_forever(void)
{
	struct __kernel_timespec ts = {0, 5000000};
	struct io_uring_sqe *sqe;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_timeout(&r, &ts, 0, IORING_TIMEOUT_MULTISHOT, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	for (int i = 0; i < 5; i++)
		T_ASSERT_EQ(t_expect_cqe(&r, 1, -ETIME), IORING_CQE_F_MORE);
	sqe = t_get_sqe(&r);
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_TIMEOUT_REMOVE;
	sqe->fd = -1;
	sqe->addr = 1;
	sqe->user_data = 2;
	T_ASSERT_EQ(t_submit(&r), 1);
	/* An expiry may slip in before the remove. */
	for (;;) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		if (cqe.user_data == 2) {
			T_ASSERT_EQ(cqe.res, 0);
			break;
		}
		T_ASSERT_EQ(cqe.res, -ETIME);
	}
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -ECANCELED), 0);
	t_expect_no_cqe(&r, 20);
	t_ring_exit(&r);
}

/*
 * Until the CQ holds n and a CQE waits in the overflow list (the flag the
 * kernel sets at the first one): a nap of a fixed length is not enough
 * for three 2 ms expiries on a loaded machine. Bounded by the clock.
 */
static void wait_overflowed(struct t_ring *r, unsigned int n)
{
	uint64_t end = t_now_us() + 10000000;

	while (t_cq_ready(r) < n ||
	       !(__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) &
		 IORING_SQ_CQ_OVERFLOW)) {
		if (t_now_us() > end)
			break; /* the asserts after this say what is missing */
		usleep(1000);
	}
}

/* A full CQ ends it: the last CQE (no F_MORE) goes to the overflow list. */
static void test_cq_full(void)
{
	struct __kernel_timespec ts = {0, 2000000};
	struct io_uring_params p;
	struct t_ring r;

	memset(&p, 0, sizeof(p));
	T_ASSERT_EQ(t_ring_init(&r, 1, &p), 0); /* 2 CQ entries */
	prep_timeout(&r, &ts, 0, IORING_TIMEOUT_MULTISHOT, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	wait_overflowed(&r, 2);
	T_ASSERT_EQ(t_cq_ready(&r), 2);
	T_ASSERT(*r.sq_flags & IORING_SQ_CQ_OVERFLOW);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -ETIME), IORING_CQE_F_MORE);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -ETIME), IORING_CQE_F_MORE);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -ETIME), 0);
	t_expect_no_cqe(&r, 20);
	t_ring_exit(&r);
}

/* Prep: MULTISHOT with ABS is -EINVAL; so is a count on LINK_TIMEOUT. */
static void test_prep(void)
{
	struct __kernel_timespec ts = {0, 1000};
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_timeout(&r, &ts, 2, IORING_TIMEOUT_MULTISHOT | IORING_TIMEOUT_ABS,
		     1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 1, -EINVAL);
	t_ring_exit(&r);
}

/*
 * Its expiries wake a waiter below min_complete and are not counted by a
 * count-based timeout (they are timeout CQEs).
 */
static void test_wake_count(void)
{
	struct __kernel_timespec ts = {0, 10000000}, big = {5, 0};
	struct t_ring r;
	uint64_t t0;
	int ret;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_timeout(&r, &ts, 2, IORING_TIMEOUT_MULTISHOT, 1);
	prep_timeout(&r, &big, 1, 0, 2);
	t_ring_flush(&r);
	t0 = t_now_us();
	ret = t_enter(r.fd, 2, 4, IORING_ENTER_GETEVENTS, NULL, 0);
	T_ASSERT_EQ(ret, 2);
	T_ASSERT_LT(t_now_us() - t0, 2000000);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -ETIME), IORING_CQE_F_MORE);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -ETIME), 0);
	t_expect_no_cqe(&r, 20); /* the count timeout still waits */
	t_prep_nop(t_get_sqe(&r), 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 3, 0);
	t_expect_cqe(&r, 2, 0);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	if (!test_repeats())
		return T_EXIT_SKIP;
	test_forever();
	test_defer_taskrun();
	test_cq_full();
	test_prep();
	test_wake_count();
	return T_EXIT_PASS;
}
