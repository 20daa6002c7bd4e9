/* SPDX-License-Identifier: MIT */
/*
 * TIMEOUT, TIMEOUT_REMOVE, LINK_TIMEOUT and ASYNC_CANCEL against the
 * kernel: results, and the order of the CQEs (a canceller's CQE comes
 * before the CQE of what it cancelled, a linked timeout's before its
 * target's), plus the prep checks.
 */
#include <unistd.h>
#include "helpers.h"

static void prep_timeout(struct io_uring_sqe *sqe, int op,
			 struct __kernel_timespec *ts, unsigned int count,
			 unsigned int flags, uint64_t ud)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = op;
	sqe->fd = -1;
	sqe->addr = (uintptr_t)ts;
	sqe->len = 1;
	sqe->off = count;
	sqe->timeout_flags = flags;
	sqe->user_data = ud;
}

static void prep_remove(struct io_uring_sqe *sqe, uint64_t target,
			unsigned int flags, struct __kernel_timespec *ts,
			uint64_t ud)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_TIMEOUT_REMOVE;
	sqe->fd = -1;
	sqe->addr = target;
	sqe->addr2 = (uintptr_t)ts;
	sqe->timeout_flags = flags;
	sqe->user_data = ud;
}

static void prep_cancel(struct io_uring_sqe *sqe, uint64_t target,
			unsigned int flags, uint64_t ud)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->fd = -1;
	sqe->addr = target;
	sqe->cancel_flags = flags;
	sqe->user_data = ud;
}

/* A pure timer fires with -ETIME after about its time. */
static void test_expiry(void)
{
	struct __kernel_timespec ts = {0, 50000000};
	struct io_uring_cqe cqe;
	struct t_ring r;
	uint64_t t0;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_timeout(t_get_sqe(&r), IORING_OP_TIMEOUT, &ts, 0, 0, 1);
	t0 = t_now_us();
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 1);
	T_ASSERT_EQ(cqe.res, -ETIME);
	T_ASSERT_GE(t_now_us() - t0, 45000);
	t_ring_exit(&r);
}

/* A count timeout completes with 0 once that many other CQEs posted. */
static void test_count(void)
{
	struct __kernel_timespec ts = {5, 0};
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_timeout(t_get_sqe(&r), IORING_OP_TIMEOUT, &ts, 2, 0, 1);
	t_prep_nop(t_get_sqe(&r), 2);
	t_prep_nop(t_get_sqe(&r), 3);
	T_ASSERT_EQ(t_submit(&r), 3);
	t_expect_cqe(&r, 2, 0);
	t_expect_cqe(&r, 3, 0);
	t_expect_cqe(&r, 1, 0);
	t_ring_exit(&r);
}

/* TIMEOUT_REMOVE: 0 then the target's -ECANCELED; -ENOENT; UPDATE. */
static void test_remove(void)
{
	struct __kernel_timespec big = {10, 0}, small = {0, 20000000};
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_timeout(t_get_sqe(&r), IORING_OP_TIMEOUT, &big, 0, 0, 1);
	prep_remove(t_get_sqe(&r), 1, 0, NULL, 2);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 2, 0);
	t_expect_cqe(&r, 1, -ECANCELED);
	prep_remove(t_get_sqe(&r), 99, 0, NULL, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 3, -ENOENT);
	/* UPDATE a 10 s timeout to 20 ms: it fires soon. */
	prep_timeout(t_get_sqe(&r), IORING_OP_TIMEOUT, &big, 0, 0, 4);
	prep_remove(t_get_sqe(&r), 4, IORING_TIMEOUT_UPDATE, &small, 5);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 5, 0);
	t_expect_cqe(&r, 4, -ETIME);
	t_ring_exit(&r);
}

/* LINK_TIMEOUT on a read that never completes: -ETIME, then -ECANCELED. */
static void test_link_timeout(void)
{
	struct __kernel_timespec ts = {0, 30000000};
	struct io_uring_sqe *sqe;
	struct t_ring r;
	char buf[4];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1);
	sqe->flags |= IOSQE_IO_LINK;
	prep_timeout(t_get_sqe(&r), IORING_OP_LINK_TIMEOUT, &ts, 0, 0, 2);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 2, -ETIME);
	t_expect_cqe(&r, 1, -ECANCELED);

	/* The read completes first: the timeout is -ECANCELED after it. */
	T_ASSERT_EQ(write(p[1], "abcd", 4), 4);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 3);
	sqe->flags |= IOSQE_IO_LINK;
	prep_timeout(t_get_sqe(&r), IORING_OP_LINK_TIMEOUT, &ts, 0, 0, 4);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 3, 4);
	t_expect_cqe(&r, 4, -ECANCELED);

	/* A LINK_TIMEOUT outside a link is -EINVAL. */
	prep_timeout(t_get_sqe(&r), IORING_OP_LINK_TIMEOUT, &ts, 0, 0, 5);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 5, -EINVAL);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/* ASYNC_CANCEL: a parked read, by user_data, -ENOENT, ANY, a timeout. */
static void test_cancel(void)
{
	struct __kernel_timespec big = {10, 0};
	struct t_ring r;
	char buf[4];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	t_prep_rw(t_get_sqe(&r), IORING_OP_READ, p[0], buf, 4, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	prep_cancel(t_get_sqe(&r), 1, 0, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 2, 0);
	t_expect_cqe(&r, 1, -ECANCELED);
	prep_cancel(t_get_sqe(&r), 1, 0, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 3, -ENOENT);

	/* ANY: both parked reads and a timeout, counted. */
	t_prep_rw(t_get_sqe(&r), IORING_OP_READ, p[0], buf, 4, 0, 4);
	t_prep_rw(t_get_sqe(&r), IORING_OP_READ, p[0], buf, 4, 0, 5);
	prep_timeout(t_get_sqe(&r), IORING_OP_TIMEOUT, &big, 0, 0, 6);
	T_ASSERT_EQ(t_submit(&r), 3);
	prep_cancel(t_get_sqe(&r), 0, IORING_ASYNC_CANCEL_ANY, 7);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 7, 3);
	for (int i = 0; i < 3; i++) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.res, -ECANCELED);
	}
	/* Bad flag combinations. */
	prep_cancel(t_get_sqe(&r), 0,
		    IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_FD, 8);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 8, -EINVAL);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/* Prep checks: len must be 1, no two clocks, no negative times. */
static void test_prep(void)
{
	struct __kernel_timespec ts = {0, 1000}, neg = {-1, 0};
	struct io_uring_sqe *sqe;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	sqe = t_get_sqe(&r);
	prep_timeout(sqe, IORING_OP_TIMEOUT, &ts, 0, 0, 1);
	sqe->len = 2;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 1, -EINVAL);
	prep_timeout(t_get_sqe(&r), IORING_OP_TIMEOUT, &ts, 0,
		     IORING_TIMEOUT_BOOTTIME | IORING_TIMEOUT_REALTIME, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 2, -EINVAL);
	prep_timeout(t_get_sqe(&r), IORING_OP_TIMEOUT, &neg, 0, 0, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 3, -EINVAL);
	prep_timeout(t_get_sqe(&r), IORING_OP_TIMEOUT, (void *)8, 0, 0, 4);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 4, -EFAULT);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_expiry();
	test_count();
	test_remove();
	test_link_timeout();
	test_cancel();
	test_prep();
	return T_EXIT_PASS;
}
