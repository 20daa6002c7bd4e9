/* SPDX-License-Identifier: MIT */
/*
 * How io_uring_enter(2) consumes the SQ and when it waits: the SQ index
 * array and sq_dropped, batch sizes, SUBMIT_ALL, min_complete, and rings
 * whose user-written words are garbage. Semantics: io_uring.c
 * io_submit_sqes/io_get_sqe/io_cqring_wait (kernel-semantics.md 1.1, 4, 6).
 */
#include <unistd.h>
#include <nowait.h>
#include "helpers.h"

/* Write NOP ud into SQE slot idx, bypassing t_get_sqe. */
static void put_nop(struct t_ring *r, unsigned int idx, uint64_t ud)
{
	t_prep_nop(&r->sqes[idx], ud);
}

/* Publish a raw SQ tail (the array is the caller's business). */
static void set_sq_tail(struct t_ring *r, unsigned int tail)
{
	__atomic_store_n(r->sq_tail, tail, __ATOMIC_RELEASE);
	r->sqe_tail = tail;
}

static void expect_cqe(struct t_ring *r, uint64_t ud, int res)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, res);
}

/*
 * An index >= sq_entries in the SQ array is dropped: sq_dropped counts it,
 * the head moves past it, the batch stops there and it is not counted.
 */
static void test_dropped_index(void)
{
	struct t_ring r;
	unsigned int i;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	for (i = 0; i < 4; i++) {
		put_nop(&r, i, 10 + i);
		r.sq_array[i] = i;
	}
	r.sq_array[1] = 4;
	set_sq_tail(&r, 4);
	T_ASSERT_EQ(t_enter(r.fd, 4, 0, 0, NULL, 0), 1);
	T_ASSERT_EQ(*r.sq_dropped, 1);
	T_ASSERT_EQ(*r.sq_head, 2);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	expect_cqe(&r, 10, 0);

	T_ASSERT_EQ(t_enter(r.fd, 4, 0, 0, NULL, 0), 2);
	T_ASSERT_EQ(*r.sq_head, 4);
	expect_cqe(&r, 12, 0);
	expect_cqe(&r, 13, 0);
	T_ASSERT_EQ(*r.sq_dropped, 1);

	/* A dropped entry first: nothing counted, but it is consumed. */
	r.sq_array[0] = 0xffffffffU;
	r.sq_array[1] = 1;
	put_nop(&r, 1, 20);
	set_sq_tail(&r, 6);
	T_ASSERT_EQ(t_enter(r.fd, 2, 0, 0, NULL, 0), 0);
	T_ASSERT_EQ(*r.sq_dropped, 2);
	T_ASSERT_EQ(*r.sq_head, 5);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	T_ASSERT_EQ(t_enter(r.fd, 2, 0, 0, NULL, 0), 1);
	expect_cqe(&r, 20, 0);
	T_ASSERT_EQ(*r.sq_head, 6);
	t_ring_exit(&r);
}

/* The array maps ring slots to SQEs in any order, even twice the same. */
static void test_index_array(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	put_nop(&r, 0, 100);
	put_nop(&r, 1, 101);
	put_nop(&r, 2, 102);
	put_nop(&r, 3, 103);
	r.sq_array[0] = 3;
	r.sq_array[1] = 0;
	r.sq_array[2] = 2;
	r.sq_array[3] = 2;
	set_sq_tail(&r, 4);
	T_ASSERT_EQ(t_enter(r.fd, 4, 4, IORING_ENTER_GETEVENTS, NULL, 0), 4);
	expect_cqe(&r, 103, 0);
	expect_cqe(&r, 100, 0);
	expect_cqe(&r, 102, 0);
	expect_cqe(&r, 102, 0);
	t_ring_exit(&r);
}

/* to_submit beyond what is queued: submit what is there, do not wait. */
static void test_to_submit(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	t_prep_nop(t_get_sqe(&r), 1);
	t_prep_nop(t_get_sqe(&r), 2);
	t_ring_flush(&r);
	T_ASSERT_EQ(t_enter(r.fd, 100, 0, 0, NULL, 0), 2);
	expect_cqe(&r, 1, 0);
	expect_cqe(&r, 2, 0);

	/*
	 * Fewer submitted than asked: return at once even with GETEVENTS
	 * and a min_complete that could never be met.
	 */
	t_prep_nop(t_get_sqe(&r), 3);
	t_ring_flush(&r);
	T_ASSERT_EQ(t_enter(r.fd, 5, 5, IORING_ENTER_GETEVENTS, NULL, 0), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	expect_cqe(&r, 3, 0);

	/* to_submit 0 with SQEs queued consumes nothing. */
	t_prep_nop(t_get_sqe(&r), 4);
	t_prep_nop(t_get_sqe(&r), 5);
	t_ring_flush(&r);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, 0, NULL, 0), 0);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(*r.sq_head, 3);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	/* Partial consumption: one of two. */
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, 0, NULL, 0), 1);
	T_ASSERT_EQ(*r.sq_head, 4);
	expect_cqe(&r, 4, 0);
	T_ASSERT_EQ(t_enter(r.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0), 1);
	expect_cqe(&r, 5, 0);
	/* An empty SQ with to_submit > 0 returns 0. */
	T_ASSERT_EQ(t_enter(r.fd, 4, 0, 0, NULL, 0), 0);
	t_ring_exit(&r);
}

/* GETEVENTS returns once min_complete CQEs are there; 0 never waits. */
static void test_min_complete(void)
{
	struct t_ring r;
	unsigned int i;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	T_ASSERT_EQ(*r.cq_entries, 8);
	/* Empty CQ, min_complete 0: run completions, don't wait. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);

	for (i = 0; i < 4; i++)
		t_prep_nop(t_get_sqe(&r), i);
	T_ASSERT_EQ(t_submit_and_wait(&r, 4), 4);
	T_ASSERT_EQ(t_cq_ready(&r), 4);
	/* Already satisfied waits return 0 at once. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 4, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0), 0);

	/* Fill the CQ: min_complete is clamped to cq_entries. */
	for (i = 4; i < 8; i++)
		t_prep_nop(t_get_sqe(&r), i);
	T_ASSERT_EQ(t_submit(&r), 4);
	T_ASSERT_EQ(t_cq_ready(&r), 8);
	T_ASSERT_EQ(t_enter(r.fd, 0, 9, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(t_enter(r.fd, 0, 1000000, IORING_ENTER_GETEVENTS, NULL, 0),
		    0);
	for (i = 0; i < 8; i++)
		expect_cqe(&r, i, 0);

	/* Submit-and-wait in one call, with min_complete < submitted. */
	for (i = 0; i < 4; i++)
		t_prep_nop(t_get_sqe(&r), 50 + i);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 4);
	T_ASSERT_GE(t_cq_ready(&r), 2);
	for (i = 0; i < 4; i++)
		expect_cqe(&r, 50 + i, 0);
	t_ring_exit(&r);
}

/* SUBMIT_ALL: an SQE that fails init no longer ends the batch. */
static void test_submit_all(void)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	struct t_ring r;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SUBMIT_ALL;
	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	t_prep_nop(t_get_sqe(&r), 1);
	sqe = t_get_sqe(&r);
	t_prep_nop(sqe, 2);
	sqe->opcode = 200;
	sqe = t_get_sqe(&r);
	t_prep_nop(sqe, 3);
	sqe->flags = 1U << 7;
	t_prep_nop(t_get_sqe(&r), 4);
	T_ASSERT_EQ(t_submit(&r), 4);
	T_ASSERT_EQ(*r.sq_head, 4);
	T_ASSERT_EQ(t_cq_ready(&r), 4);
	expect_cqe(&r, 1, 0);
	expect_cqe(&r, 2, -EINVAL);
	expect_cqe(&r, 3, -EINVAL);
	expect_cqe(&r, 4, 0);

	/* A dropped index still ends the batch, SUBMIT_ALL or not. */
	put_nop(&r, 4, 5);
	put_nop(&r, 6, 6);
	r.sq_array[4] = 4;
	r.sq_array[5] = 8;
	r.sq_array[6] = 6;
	set_sq_tail(&r, 7);
	T_ASSERT_EQ(t_enter(r.fd, 3, 0, 0, NULL, 0), 1);
	T_ASSERT_EQ(*r.sq_dropped, 1);
	expect_cqe(&r, 5, 0);
	T_ASSERT_EQ(t_enter(r.fd, 3, 0, 0, NULL, 0), 1);
	expect_cqe(&r, 6, 0);
	t_ring_exit(&r);
}

/* A garbage SQ tail is clamped to sq_entries SQEs per enter. */
static void test_garbage_sq_tail(void)
{
	struct t_ring r;
	unsigned int i, head;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	for (i = 0; i < 4; i++) {
		put_nop(&r, i, 30 + i);
		r.sq_array[i] = i;
	}
	head = *r.sq_head;
	set_sq_tail(&r, head + 10000);
	T_ASSERT_EQ(t_enter(r.fd, 10000, 0, 0, NULL, 0), 4);
	T_ASSERT_EQ(*r.sq_head, head + 4);
	T_ASSERT_EQ(t_cq_ready(&r), 4);
	for (i = 0; i < 4; i++)
		expect_cqe(&r, 30 + i, 0);
	T_ASSERT_EQ(t_enter(r.fd, 2, 0, 0, NULL, 0), 2);
	T_ASSERT_EQ(*r.sq_head, head + 6);
	expect_cqe(&r, 30, 0);
	expect_cqe(&r, 31, 0);

	/* A tail behind the head looks like ~4G entries: still clamped. */
	set_sq_tail(&r, *r.sq_head - 1);
	T_ASSERT_EQ(t_enter(r.fd, 3, 0, 0, NULL, 0), 3);
	for (i = 0; i < 3; i++)
		expect_cqe(&r, 30 + (6 + i) % 4, 0);

	/* Put the tail back; the ring is usable again. */
	set_sq_tail(&r, *r.sq_head);
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, 0, NULL, 0), 0);
	t_prep_nop(t_get_sqe(&r), 99);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 99, 0);
	T_ASSERT_EQ(*r.sq_dropped, 0);
	t_ring_exit(&r);
}

/* The SQ head belongs to the engine: an app write to it is overwritten. */
static void test_garbage_sq_head(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	t_prep_nop(t_get_sqe(&r), 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, 1, 0);
	*r.sq_head = 12345;
	put_nop(&r, 1, 2);
	r.sq_array[1] = 1;
	set_sq_tail(&r, 2);
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, 0, NULL, 0), 1);
	T_ASSERT_EQ(*r.sq_head, 2);
	expect_cqe(&r, 2, 0);
	t_ring_exit(&r);
}

/*
 * A CQ head the app corrupted: nothing crashes, nothing is lost. With the
 * head ahead of the tail the CQ looks full, so CQEs go to the overflow
 * list; once the head is sane again a GETEVENTS flush delivers them in
 * order.
 */
static void test_garbage_cq_head(void)
{
	struct t_ring r;
	unsigned int i, head;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	head = *r.cq_head;
	*r.cq_head = head + 1000;
	for (i = 0; i < 3; i++) {
		t_prep_nop(t_get_sqe(&r), 40 + i);
		T_ASSERT_EQ(t_submit(&r), 1);
	}
	T_ASSERT_EQ(*r.cq_tail, head);
	T_ASSERT(*r.sq_flags & IORING_SQ_CQ_OVERFLOW);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	*r.cq_head = head;
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(*r.sq_flags & IORING_SQ_CQ_OVERFLOW, 0);
	T_ASSERT_EQ(t_cq_ready(&r), 3);
	for (i = 0; i < 3; i++)
		expect_cqe(&r, 40 + i, 0);

	/*
	 * A head far behind the tail: whether the engine posts or defers,
	 * after restoring the head every CQE is there exactly once.
	 */
	head = *r.cq_head;
	*r.cq_head = head - 100000;
	for (i = 0; i < 3; i++) {
		t_prep_nop(t_get_sqe(&r), 50 + i);
		T_ASSERT_EQ(t_submit(&r), 1);
	}
	*r.cq_head = head;
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(t_cq_ready(&r), 3);
	for (i = 0; i < 3; i++)
		expect_cqe(&r, 50 + i, 0);
	T_ASSERT_EQ(*r.sq_flags & IORING_SQ_CQ_OVERFLOW, 0);
	T_ASSERT_EQ(*r.cq_overflow, 0);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(20);
	test_dropped_index();
	test_index_array();
	test_to_submit();
	test_min_complete();
	test_submit_all();
	test_garbage_sq_tail();
	test_garbage_sq_head();
	test_garbage_cq_head();
	return T_EXIT_PASS;
}
