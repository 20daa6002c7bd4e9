/* SPDX-License-Identifier: MIT */
/*
 * Timeouts far in the future, against the kernel: a TIMEOUT of 2^62 s
 * (relative, and ABS on each clock), of LLONG_MAX s, and a LINK_TIMEOUT
 * of 2^62 s do not fire; they stay armed until removed (-ECANCELED) or
 * their request completes. The kernel saturates such deadlines
 * (timespec64_to_ktime, ktime_add_safe); a wrapped deadline would lie in
 * the past and fire at once with -ETIME. But a tv_nsec that takes
 * tv_sec * 10^9 + tv_nsec past KTIME_MAX (tv_sec below KTIME_SEC_MAX)
 * wraps in ktime_set: relative, ktime_add_safe makes that "never" again;
 * ABS on REALTIME or BOOTTIME, a time long past that fires (found by
 * diff-fuzz). (ABS on MONOTONIC, the kernel's timer waits behind the
 * tick's: not tested, as an idle CPU without a tick would fire it.)
 * Semantics: io_uring/timeout.c (kernel-semantics.md 9).
 */
#include <limits.h>
#include <unistd.h>
#include "helpers.h"

static void prep_timeout(struct io_uring_sqe *sqe, int op,
			 const struct __kernel_timespec *ts, unsigned int flags,
			 uint64_t ud)
{
	sqe->opcode = (uint8_t)op;
	sqe->fd = -1;
	sqe->addr = (uint64_t)(uintptr_t)ts;
	sqe->len = 1;
	sqe->timeout_flags = flags;
	sqe->user_data = ud;
}

static void remove_timeout(struct t_ring *r, uint64_t target, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	sqe->opcode = IORING_OP_TIMEOUT_REMOVE;
	sqe->fd = -1;
	sqe->addr = target;
	sqe->user_data = ud;
}

/* A TIMEOUT of sec seconds under flags: armed, not fired, removable. */
static void test_huge(long long sec, long long nsec, unsigned int flags)
{
	struct __kernel_timespec ts = {.tv_sec = sec, .tv_nsec = nsec};
	struct io_uring_cqe cqe;
	struct t_ring r;
	int i, seen_rm = 0, seen_tmo = 0;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_timeout(t_get_sqe(&r), IORING_OP_TIMEOUT, &ts, flags, 1);
	t_prep_nop(t_get_sqe(&r), 2);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 2, 0);
	/* Wrapped into the past, it would be here by now. */
	t_expect_no_cqe(&r, 50);
	remove_timeout(&r, 1, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	for (i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		if (cqe.user_data == 1) {
			T_ASSERT_EQ(cqe.res, -ECANCELED);
			seen_tmo++;
		} else {
			T_ASSERT_EQ(cqe.user_data, 3);
			T_ASSERT_EQ(cqe.res, 0);
			seen_rm++;
		}
	}
	T_ASSERT_EQ(seen_tmo, 1);
	T_ASSERT_EQ(seen_rm, 1);
	t_ring_exit(&r);
}

/*
 * An ABS TIMEOUT (REALTIME, BOOTTIME) whose sec * 10^9 + nsec wraps
 * expires: -ETIME. The kernel's hrtimer keeps the wrapped (past) soft
 * expiry but clamps the hard one it programs (ktime_add_safe), so the
 * timer runs at the next hrtimer interrupt of its CPU, such as a timed
 * wait's (nowait: at once). Bounded: 200 waits of 10 ms.
 */
static void test_wrapped_abs(long long sec, long long nsec, unsigned int flags)
{
	struct __kernel_timespec ts = {.tv_sec = sec, .tv_nsec = nsec};
	struct io_uring_cqe cqe;
	struct t_ring r;
	int ret = -ETIME;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_timeout(t_get_sqe(&r), IORING_OP_TIMEOUT, &ts,
		     IORING_TIMEOUT_ABS | flags, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	for (int i = 0; i < 200 && ret == -ETIME; i++)
		ret = t_wait_cqe_timeout(&r, &cqe, 10);
	T_ASSERT_EQ(ret, 0);
	T_ASSERT_EQ(cqe.user_data, 1);
	T_ASSERT_EQ(cqe.res, -ETIME);
	t_ring_exit(&r);
}

/* A read of an empty pipe guarded by a LINK_TIMEOUT of 2^62 s. */
static void test_link(void)
{
	struct __kernel_timespec ts = {.tv_sec = 1LL << 62};
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	struct t_ring r;
	char buf[4];
	int p[2], i;

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1);
	sqe->flags |= IOSQE_IO_LINK;
	prep_timeout(t_get_sqe(&r), IORING_OP_LINK_TIMEOUT, &ts, 0, 2);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_no_cqe(&r, 50);
	T_ASSERT_EQ(write(p[1], "abc", 3), 3);
	for (i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		if (cqe.user_data == 1)
			T_ASSERT_EQ(cqe.res, 3);
		else
			T_ASSERT_EQ(cqe.res, -ECANCELED);
	}
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	const long long ns = 999999999;

	test_huge(1LL << 62, ns, 0);
	test_huge(LLONG_MAX, ns, 0);
	test_huge(1LL << 62, ns, IORING_TIMEOUT_ABS);
	test_huge(1LL << 62, ns, IORING_TIMEOUT_ABS | IORING_TIMEOUT_BOOTTIME);
	test_huge(1LL << 62, ns, IORING_TIMEOUT_ABS | IORING_TIMEOUT_REALTIME);
	test_huge(1LL << 62, ns, IORING_TIMEOUT_BOOTTIME);
	/* The sum wraps: relative, never; absolute, long past. */
	test_huge(1, LLONG_MAX, 0);
	test_huge(9223372035LL, 1LL << 62, IORING_TIMEOUT_REALTIME);
	test_wrapped_abs(9223372035LL, 1LL << 62, IORING_TIMEOUT_REALTIME);
	test_wrapped_abs(1, LLONG_MAX, IORING_TIMEOUT_BOOTTIME);
	test_wrapped_abs(1, LLONG_MAX, IORING_TIMEOUT_REALTIME);
	test_link();
	return T_EXIT_PASS;
}
