/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_NOP: the request path without I/O. Completion, user_data, batches,
 * ring wrap-around, SQE validation (io_init_req order) and CQE_SKIP_SUCCESS.
 * Semantics: io_uring.c io_init_req/io_submit_sqes, io_uring/nop.c.
 */
#include <unistd.h>
#include <nowait.h>
#include "helpers.h"

/* Queue a NOP with the given SQE flags; returns the SQE for tweaking. */
static struct io_uring_sqe *queue_nop(struct t_ring *r, uint64_t ud,
				      unsigned int sqe_flags)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, ud);
	sqe->flags = sqe_flags;
	return sqe;
}

/* Take one CQE (it must already be there or arrive) and check it. */
static void expect_cqe(struct t_ring *r, uint64_t ud, int res)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, res);
	T_ASSERT_EQ(cqe.flags, 0);
}

/*
 * Take exactly n CQEs, in any order, matching the (ud[i], res[i]) pairs,
 * then check that no more CQE is pending.
 */
static void expect_set(struct t_ring *r, unsigned int n, const uint64_t *ud,
		       const int *res)
{
	struct io_uring_cqe cqe;
	unsigned int seen = 0, i, k;

	T_ASSERT_LE(n, 32);
	for (k = 0; k < n; k++) {
		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		for (i = 0; i < n; i++)
			if (ud[i] == cqe.user_data)
				break;
		T_ASSERT_LT(i, n);
		T_ASSERT_EQ(seen & (1U << i), 0);
		seen |= 1U << i;
		T_ASSERT_EQ(cqe.res, res[i]);
		T_ASSERT_EQ(cqe.flags, 0);
	}
	T_ASSERT_EQ(t_cq_ready(r), 0);
}

static void test_single(void)
{
	struct io_uring_cqe cqe;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	queue_nop(&r, 42, 0);
	T_ASSERT_EQ(t_submit(&r), 1);
	/* An inline NOP has completed by the time submit returns. */
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	T_ASSERT_EQ(*r.sq_head, 1);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 42);
	T_ASSERT_EQ(cqe.res, 0);
	T_ASSERT_EQ(cqe.flags, 0);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), -EAGAIN);
	t_ring_exit(&r);
}

static void test_user_data(void)
{
	static const uint64_t uds[] = {
		0,    1, 0xffffffffULL, 0x100000000ULL, 0xdeadbeefcafef00dULL,
		~0ULL};
	struct t_ring r;
	unsigned int i;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	for (i = 0; i < sizeof(uds) / sizeof(uds[0]); i++)
		queue_nop(&r, uds[i], 0);
	T_ASSERT_EQ(t_submit_and_wait(&r, i), i);
	T_ASSERT_EQ(t_cq_ready(&r), i);
	for (i = 0; i < sizeof(uds) / sizeof(uds[0]); i++)
		expect_cqe(&r, uds[i], 0);
	t_ring_exit(&r);
}

/* Full batches, then many small batches so both rings wrap many times. */
static void test_batches(void)
{
	struct t_ring r;
	uint64_t ud = 0, next = 0;
	unsigned int i, round;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	for (i = 0; i < 8; i++)
		queue_nop(&r, ud++, 0);
	T_ASSERT(t_get_sqe(&r) == NULL);
	T_ASSERT_EQ(t_submit_and_wait(&r, 8), 8);
	for (i = 0; i < 8; i++)
		expect_cqe(&r, next++, 0);

	for (round = 0; round < 1000; round++) {
		unsigned int n = 1 + round % 7;

		for (i = 0; i < n; i++)
			queue_nop(&r, ud++, 0);
		T_ASSERT_EQ(t_submit(&r), n);
		T_ASSERT_EQ(t_cq_ready(&r), n);
		for (i = 0; i < n; i++)
			expect_cqe(&r, next++, 0);
	}
	T_ASSERT_EQ(*r.sq_head, *r.sq_tail);
	T_ASSERT_EQ(*r.cq_head, *r.cq_tail);
	T_ASSERT_EQ(*r.sq_dropped, 0);
	T_ASSERT_EQ(*r.cq_overflow, 0);
	t_ring_exit(&r);
}

/*
 * An SQE that fails init gets a CQE with its error; the batch stops after
 * it and the failing SQE counts as submitted. The rest stays queued.
 */
static void test_bad_flags(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_nop(&r, 1, 0);
	queue_nop(&r, 2, 1U << 7);
	queue_nop(&r, 3, 0);
	queue_nop(&r, 4, 0);
	T_ASSERT_EQ(t_submit(&r), 2);
	T_ASSERT_EQ(*r.sq_head, 2);
	T_ASSERT_EQ(t_cq_ready(&r), 2);
	expect_cqe(&r, 1, 0);
	expect_cqe(&r, 2, -EINVAL);
	/* The remaining two are still there for the next enter. */
	T_ASSERT_EQ(t_enter(r.fd, 8, 0, 0, NULL, 0), 2);
	expect_cqe(&r, 3, 0);
	expect_cqe(&r, 4, 0);

	/* A bad SQE first: submit returns 1. */
	queue_nop(&r, 5, 1U << 7 | IOSQE_ASYNC);
	queue_nop(&r, 6, 0);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 5, -EINVAL);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 6, 0);

	/*
	 * A failing SQE that also carries IO_LINK keeps the chain (and the
	 * batch) going: the next SQE joins the failed link and is cancelled.
	 * The order of the cancellation against later CQEs is not fixed.
	 */
	queue_nop(&r, 7, 1U << 7 | IOSQE_IO_LINK);
	queue_nop(&r, 8, 0);
	queue_nop(&r, 9, 0);
	T_ASSERT_EQ(t_submit(&r), 3);
	{
		static const uint64_t ud[] = {7, 8, 9};
		static const int res[] = {-EINVAL, -ECANCELED, 0};

		expect_set(&r, 3, ud, res);
	}
	queue_nop(&r, 10, 1U << 7 | IOSQE_IO_HARDLINK);
	queue_nop(&r, 11, 0);
	T_ASSERT_EQ(t_submit(&r), 2);
	{
		static const uint64_t ud[] = {10, 11};
		static const int res[] = {-EINVAL, -ECANCELED};

		expect_set(&r, 2, ud, res);
	}
	/* A failed head with CQE_SKIP_SUCCESS suppresses its followers. */
	queue_nop(&r, 12, 0xff);
	queue_nop(&r, 13, 0);
	queue_nop(&r, 14, 0);
	T_ASSERT_EQ(t_submit(&r), 3);
	{
		static const uint64_t ud[] = {12, 14};
		static const int res[] = {-EINVAL, 0};

		expect_set(&r, 2, ud, res);
	}
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	t_ring_exit(&r);
}

static void test_bad_opcode(void)
{
	static const unsigned char ops[] = {200, 255, 128, 100};
	struct io_uring_sqe *sqe;
	struct t_ring r;
	unsigned int i;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	for (i = 0; i < sizeof(ops); i++) {
		sqe = queue_nop(&r, 10 + i, 0);
		sqe->opcode = ops[i];
		queue_nop(&r, 20 + i, 0);
		T_ASSERT_EQ(t_submit(&r), 1);
		expect_cqe(&r, 10 + i, -EINVAL);
		T_ASSERT_EQ(t_submit(&r), 1);
		expect_cqe(&r, 20 + i, 0);
	}
	t_ring_exit(&r);
}

/* IOSQE_CQE_SKIP_SUCCESS: no CQE on success, a CQE on failure. */
static void test_skip_success(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_nop(&r, 1, IOSQE_CQE_SKIP_SUCCESS);
	queue_nop(&r, 2, 0);
	queue_nop(&r, 3, IOSQE_CQE_SKIP_SUCCESS);
	queue_nop(&r, 4, IOSQE_CQE_SKIP_SUCCESS);
	queue_nop(&r, 5, 0);
	T_ASSERT_EQ(t_submit(&r), 5);
	T_ASSERT_EQ(t_cq_ready(&r), 2);
	expect_cqe(&r, 2, 0);
	expect_cqe(&r, 5, 0);

	/* An init failure still posts, skip or not. */
	sqe = queue_nop(&r, 6, IOSQE_CQE_SKIP_SUCCESS);
	sqe->opcode = 200;
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 6, -EINVAL);

	/* After a CQE_SKIP_SUCCESS, IO_DRAIN is refused on this ring. */
	queue_nop(&r, 7, IOSQE_IO_DRAIN);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 7, -EOPNOTSUPP);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	t_ring_exit(&r);
}

/* Fields NOP does not use are ignored; ones io_init_req checks are not. */
static void test_fields(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);

	/* Ignored by NOP: fd, off, addr, len, buf_index without flags. */
	sqe = queue_nop(&r, 1, 0);
	sqe->fd = 12345;
	sqe->off = 99;
	sqe->addr = 0x1000;
	sqe->len = 7;
	sqe->buf_index = 3;
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 1, 0);

	/* Unknown nop_flags (the rw_flags word) -> -EINVAL. */
	sqe = queue_nop(&r, 2, 0);
	sqe->rw_flags = 1U << 31;
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 2, -EINVAL);

	/* ioprio on an opcode without ioprio support -> -EINVAL. */
	sqe = queue_nop(&r, 3, 0);
	sqe->ioprio = 1;
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 3, -EINVAL);

	/* An unknown personality -> -EINVAL. */
	sqe = queue_nop(&r, 4, 0);
	sqe->personality = 0x7fff;
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 4, -EINVAL);

	/* BUFFER_SELECT on an opcode that cannot select -> -EOPNOTSUPP. */
	queue_nop(&r, 5, IOSQE_BUFFER_SELECT);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 5, -EOPNOTSUPP);

	/* FIXED_FILE means nothing to an op without a file. */
	queue_nop(&r, 6, IOSQE_FIXED_FILE);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 6, 0);
	t_ring_exit(&r);
}

/* Valid SQE flags on NOP: links, drain, async all complete with 0. */
static void test_valid_flags(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_nop(&r, 1, IOSQE_IO_LINK);
	queue_nop(&r, 2, IOSQE_IO_LINK);
	queue_nop(&r, 3, 0);
	T_ASSERT_EQ(t_submit_and_wait(&r, 3), 3);
	expect_cqe(&r, 1, 0);
	expect_cqe(&r, 2, 0);
	expect_cqe(&r, 3, 0);

	queue_nop(&r, 4, IOSQE_IO_HARDLINK);
	queue_nop(&r, 5, 0);
	queue_nop(&r, 6, IOSQE_IO_DRAIN);
	T_ASSERT_EQ(t_submit_and_wait(&r, 3), 3);
	expect_cqe(&r, 4, 0);
	expect_cqe(&r, 5, 0);
	expect_cqe(&r, 6, 0);

	/* A link left open at the end of the batch is issued anyway. */
	queue_nop(&r, 7, IOSQE_IO_LINK);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect_cqe(&r, 7, 0);

	/* IOSQE_ASYNC completes from a worker: wait for it. */
	queue_nop(&r, 8, IOSQE_ASYNC);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect_cqe(&r, 8, 0);
	t_ring_exit(&r);
}

/* A failed SQE in a link cancels the rest of the chain. */
static void test_link_init_failure(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_nop(&r, 1, IOSQE_IO_LINK);
	sqe = queue_nop(&r, 2, 0);
	sqe->opcode = 200;
	queue_nop(&r, 3, 0);
	/* The batch stops after the failed SQE; the head is cancelled. */
	T_ASSERT_EQ(t_submit(&r), 2);
	{
		static const uint64_t ud[] = {1, 2};
		static const int res[] = {-ECANCELED, -EINVAL};

		expect_set(&r, 2, ud, res);
	}
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 3, 0);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	test_single();
	test_user_data();
	test_batches();
	test_bad_flags();
	test_bad_opcode();
	test_skip_success();
	test_fields();
	test_valid_flags();
	test_link_init_failure();
	return T_EXIT_PASS;
}
