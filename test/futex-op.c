/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_FUTEX_WAIT, FUTEX_WAKE and FUTEX_WAITV against the kernel:
 * the prep and issue errors, wake counts and their order, the wake mask,
 * the index a FUTEX_WAITV completes with, a wake from a plain thread,
 * ASYNC_CANCEL's counts and ring exit with a wait still parked.
 */
#include <limits.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include "helpers.h"

#define F2_U8	   0x00U
#define F2_U32	   0x02U
#define F2_PRIVATE 128U
#define MATCH_ANY  0xffffffffULL

static void prep_futex(struct io_uring_sqe *sqe, int op, uint32_t *uaddr,
		       uint64_t val, uint64_t mask, uint32_t flags, uint64_t ud)
{
	sqe->opcode = (uint8_t)op;
	sqe->addr = (uintptr_t)uaddr;
	sqe->addr2 = val;
	sqe->addr3 = mask;
	sqe->fd = (int)flags;
	sqe->user_data = ud;
}

static int wait_one(struct t_ring *r, uint32_t *f, uint64_t val, uint64_t mask,
		    uint32_t flags)
{
	prep_futex(t_get_sqe(r), NW_OP_FUTEX_WAIT, f, val, mask, flags, 9);
	return t_run(r, 9);
}

static int wake_one(struct t_ring *r, uint32_t *f, uint64_t nr, uint64_t mask,
		    uint32_t flags)
{
	prep_futex(t_get_sqe(r), NW_OP_FUTEX_WAKE, f, nr, mask, flags, 8);
	return t_run(r, 8);
}

static int waitv_run(struct t_ring *r, struct futex_waitv *v, unsigned int nr)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	sqe->opcode = NW_OP_FUTEX_WAITV;
	sqe->addr = (uintptr_t)v;
	sqe->len = nr;
	sqe->user_data = 7;
	return t_run(r, 7);
}

static void test_errors(struct t_ring *r)
{
	uint32_t w[2] = {0, 0};
	struct futex_waitv v[2];
	struct io_uring_sqe *sqe;

	T_ASSERT_EQ(wait_one(r, w, 0, MATCH_ANY, 0x1000), -EINVAL);
	T_ASSERT_EQ(wait_one(r, w, 0, MATCH_ANY, F2_U8), -EINVAL);
	T_ASSERT_EQ(wait_one(r, w, 1ULL << 32, MATCH_ANY, F2_U32), -EINVAL);
	T_ASSERT_EQ(wait_one(r, w, 0, 0, F2_U32), -EINVAL);
	T_ASSERT_EQ(wait_one(r, NULL, 0, MATCH_ANY, F2_U32), -EFAULT);
	T_ASSERT_EQ(
		wait_one(r, (uint32_t *)((char *)w + 1), 0, MATCH_ANY, F2_U32),
		-EINVAL);
	T_ASSERT_EQ(wait_one(r, w, 5, MATCH_ANY, F2_U32 | F2_PRIVATE), -EAGAIN);
	sqe = t_get_sqe(r);
	prep_futex(sqe, NW_OP_FUTEX_WAIT, w, 0, MATCH_ANY, F2_U32, 9);
	sqe->len = 1;
	T_ASSERT_EQ(t_run(r, 9), -EINVAL);

	T_ASSERT_EQ(wake_one(r, w, 1, 0, F2_U32), -EINVAL);
	T_ASSERT_EQ(wake_one(r, w, 1, MATCH_ANY, 0x1000), -EINVAL);
	T_ASSERT_EQ(
		wake_one(r, (uint32_t *)((char *)w + 2), 1, MATCH_ANY, F2_U32),
		-EINVAL);
	T_ASSERT_EQ(wake_one(r, NULL, 1, MATCH_ANY, F2_U32), -EFAULT);
	T_ASSERT_EQ(wake_one(r, w, 0, MATCH_ANY, F2_U32), 0);
	T_ASSERT_EQ(wake_one(r, w, 1, MATCH_ANY, F2_U32 | F2_PRIVATE), 0);

	memset(v, 0, sizeof(v));
	v[0].uaddr = (uintptr_t)&w[0];
	v[0].flags = F2_U32;
	v[1].uaddr = (uintptr_t)&w[1];
	v[1].flags = F2_U32;
	v[1].val = 3;
	T_ASSERT_EQ(waitv_run(r, v, 0), -EINVAL);
	T_ASSERT_EQ(waitv_run(r, v, 129), -EINVAL);
	T_ASSERT_EQ(waitv_run(r, NULL, 1), -EFAULT);
	T_ASSERT_EQ(waitv_run(r, v, 2), -EAGAIN);
	v[1].val = 0;
	v[1].__reserved = 1;
	T_ASSERT_EQ(waitv_run(r, v, 2), -EINVAL);
	v[1].__reserved = 0;
	v[1].flags = F2_U32 | 0x1000;
	T_ASSERT_EQ(waitv_run(r, v, 2), -EINVAL);
}

/* Three waits, woken two then the rest: FIFO, and the counts. */
static void test_counts(struct t_ring *r)
{
	uint32_t f = 0;

	for (uint64_t ud = 1; ud <= 3; ud++)
		prep_futex(t_get_sqe(r), NW_OP_FUTEX_WAIT, &f, 0, MATCH_ANY,
			   F2_U32 | F2_PRIVATE, ud);
	T_ASSERT_EQ(t_submit(r), 3);
	t_expect_no_cqe(r, 20);
	f = 1;
	prep_futex(t_get_sqe(r), NW_OP_FUTEX_WAKE, &f, 2, MATCH_ANY,
		   F2_U32 | F2_PRIVATE, 100);
	T_ASSERT_EQ(t_submit(r), 1);
	for (int i = 0; i < 3; i++) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe_timeout(r, &cqe, 2000), 0);
		if (cqe.user_data == 100)
			T_ASSERT_EQ(cqe.res, 2);
		else
			T_ASSERT(cqe.user_data == 1 || cqe.user_data == 2);
		if (cqe.user_data != 100)
			T_ASSERT_EQ(cqe.res, 0);
	}
	t_expect_no_cqe(r, 20);
	/* A shared wake does not reach a private wait on the same word. */
	T_ASSERT_EQ(wake_one(r, &f, INT_MAX, MATCH_ANY, F2_U32), 0);
	T_ASSERT_EQ(wake_one(r, &f, INT_MAX, MATCH_ANY, F2_U32 | F2_PRIVATE),
		    1);
	t_expect_cqe(r, 3, 0);
}

/* A wake with a mask reaches only waits whose mask it shares a bit with. */
static void test_mask(struct t_ring *r)
{
	uint32_t f = 0;

	prep_futex(t_get_sqe(r), NW_OP_FUTEX_WAIT, &f, 0, 0x1, F2_U32, 1);
	T_ASSERT_EQ(t_submit(r), 1);
	T_ASSERT_EQ(wake_one(r, &f, 1, 0x2, F2_U32), 0);
	t_expect_no_cqe(r, 20);
	T_ASSERT_EQ(wake_one(r, &f, 1, 0x3, F2_U32), 1);
	t_expect_cqe(r, 1, 0);
}

/* FUTEX_WAITV completes with the index of the futex woken. */
static void test_waitv_index(struct t_ring *r)
{
	uint32_t w[3] = {0, 0, 0};
	struct futex_waitv v[3];
	struct io_uring_sqe *sqe;

	memset(v, 0, sizeof(v));
	for (int i = 0; i < 3; i++) {
		v[i].uaddr = (uintptr_t)&w[i];
		v[i].flags = F2_U32 | F2_PRIVATE;
	}
	sqe = t_get_sqe(r);
	sqe->opcode = NW_OP_FUTEX_WAITV;
	sqe->addr = (uintptr_t)v;
	sqe->len = 3;
	sqe->user_data = 5;
	T_ASSERT_EQ(t_submit(r), 1);
	t_expect_no_cqe(r, 20);
	T_ASSERT_EQ(wake_one(r, &w[2], 1, MATCH_ANY, F2_U32 | F2_PRIVATE), 1);
	t_expect_cqe(r, 5, 2);
}

static void *plain_waker(void *arg)
{
	uint32_t *f = arg;
	long n;

	__atomic_store_n(f, 1, __ATOMIC_SEQ_CST);
	n = syscall(SYS_futex, f, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return (void *)n;
}

/* A wake from a thread of the program, by the system call. */
static void test_plain_wake(struct t_ring *r)
{
	uint32_t f = 0;
	pthread_t th;
	void *n;

	prep_futex(t_get_sqe(r), NW_OP_FUTEX_WAIT, &f, 0, MATCH_ANY,
		   F2_U32 | F2_PRIVATE, 4);
	T_ASSERT_EQ(t_submit(r), 1);
	T_ASSERT_EQ(pthread_create(&th, NULL, plain_waker, &f), 0);
	T_ASSERT_EQ(pthread_join(th, &n), 0);
	T_ASSERT_EQ((long)n, 1);
	t_expect_cqe(r, 4, 0);
}

static int cancel_run(struct t_ring *r, uint64_t ud, unsigned int flags)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->addr = ud;
	sqe->cancel_flags = flags;
	sqe->user_data = 50;
	return t_run(r, 50);
}

static void submit_waits(struct t_ring *r, uint32_t *f, uint64_t ud, int n)
{
	for (int i = 0; i < n; i++)
		prep_futex(t_get_sqe(r), NW_OP_FUTEX_WAIT, f, 0, MATCH_ANY,
			   F2_U32, ud + (uint64_t)i);
	T_ASSERT_EQ(t_submit(r), n);
}

static void expect_cancelled(struct t_ring *r, int n)
{
	struct io_uring_cqe cqe;

	for (int i = 0; i < n; i++) {
		T_ASSERT_EQ(t_wait_cqe_timeout(r, &cqe, 2000), 0);
		T_ASSERT_EQ(cqe.res, -ECANCELED);
	}
	t_expect_no_cqe(r, 10);
}

static void test_cancel(struct t_ring *r)
{
	uint32_t f = 0;

	submit_waits(r, &f, 1, 1);
	T_ASSERT_EQ(cancel_run(r, 1, 0), 1);
	expect_cancelled(r, 1);
	T_ASSERT_EQ(cancel_run(r, 1, 0), -ENOENT);
	submit_waits(r, &f, 1, 3);
	T_ASSERT_EQ(cancel_run(r, 0, IORING_ASYNC_CANCEL_ANY), 3);
	expect_cancelled(r, 3);
	/* ALL by user_data: one pass of the kernel's loop takes them all. */
	submit_waits(r, &f, 1, 1);
	submit_waits(r, &f, 1, 1);
	T_ASSERT_EQ(cancel_run(r, 1, IORING_ASYNC_CANCEL_ALL), 1);
	expect_cancelled(r, 2);
	/* They have no file. */
	submit_waits(r, &f, 1, 1);
	{
		struct io_uring_sqe *sqe = t_get_sqe(r);

		sqe->opcode = IORING_OP_ASYNC_CANCEL;
		sqe->fd = 0;
		sqe->cancel_flags = IORING_ASYNC_CANCEL_FD;
		sqe->user_data = 50;
		T_ASSERT_EQ(t_run(r, 50), -ENOENT);
	}
	T_ASSERT_EQ(cancel_run(r, 1, 0), 1);
	expect_cancelled(r, 1);
}

/* Ring exit with a wait still parked does not hang. */
static void test_exit(void)
{
	static uint32_t f;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	submit_waits(&r, &f, 1, 2);
	t_ring_exit(&r);
}

int main(void)
{
	struct t_ring r;

	t_require_engine();
	t_watchdog(60);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	test_errors(&r);
	test_counts(&r);
	test_mask(&r);
	test_waitv_index(&r);
	test_plain_wake(&r);
	test_cancel(&r);
	t_ring_exit(&r);
	test_exit();
	return T_EXIT_PASS;
}
