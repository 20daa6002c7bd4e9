/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_CQE_MIXED: 16-byte CQEs, and 32-byte ones (a NOP with
 * IORING_NOP_CQE32) in two slots flagged IORING_CQE_F_32; one that would
 * wrap goes after a padding CQE flagged IORING_CQE_F_SKIP; one that does
 * not fit goes to the overflow list and comes back whole. The CQ is read
 * slot by slot, as the program's memory. Semantics: io_uring.c
 * io_get_cqe_overflow / io_fill_nop_cqe, nop.c.
 */
#include <unistd.h>
#include "helpers.h"

static struct io_uring_cqe *slot(struct t_ring *r, unsigned int i)
{
	return &r->cqes[i & *r->cq_mask];
}

static void queue_nop(struct t_ring *r, uint64_t ud, bool big)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, ud);
	if (big) {
		sqe->rw_flags = IORING_NOP_CQE32;
		sqe->off = ud * 16 + 1;
		sqe->addr = ud * 16 + 2;
	}
}

/* Expect the CQE at head (skipping a pad) and consume it. */
static void expect(struct t_ring *r, uint64_t ud, bool big)
{
	unsigned int head = *r->cq_head;
	struct io_uring_cqe *c = slot(r, head);

	if (c->flags & IORING_CQE_F_SKIP) {
		T_ASSERT_EQ(c->user_data, 0);
		T_ASSERT_EQ(c->res, 0);
		T_ASSERT_EQ(head & *r->cq_mask, *r->cq_mask);
		c = slot(r, ++head);
	}
	T_ASSERT_EQ(c->user_data, ud);
	T_ASSERT_EQ(c->res, 0);
	T_ASSERT_EQ(c->flags & IORING_CQE_F_32, big ? IORING_CQE_F_32 : 0);
	if (big) {
		T_ASSERT_NE(head & *r->cq_mask, *r->cq_mask);
		T_ASSERT_EQ(c->big_cqe[0], ud * 16 + 1);
		T_ASSERT_EQ(c->big_cqe[1], ud * 16 + 2);
		head++;
	}
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
}

static void test_setup(void)
{
	struct io_uring_params p;
	struct t_ring r;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQE_MIXED | IORING_SETUP_CQE32;
	T_ASSERT_EQ(t_setup(4, &p), -EINVAL);
	/* CQE32 NOPs need a CQE32 or a mixed ring. */
	memset(&p, 0, sizeof(p));
	T_ASSERT_EQ(t_ring_init(&r, 4, &p), 0);
	queue_nop(&r, 1, true);
	T_ASSERT_EQ(t_run(&r, 1), -EINVAL);
	t_ring_exit(&r);
}

static void test_layout(void)
{
	struct io_uring_params p;
	struct t_ring r;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQE_MIXED;
	T_ASSERT_EQ(t_ring_init(&r, 4, &p), 0); /* 8 CQ slots */
	T_ASSERT_EQ(*r.cq_entries, 8);
	queue_nop(&r, 1, false);
	queue_nop(&r, 2, true);
	queue_nop(&r, 3, false);
	T_ASSERT_EQ(t_submit(&r), 3);
	T_ASSERT_EQ(*r.cq_tail, 4);
	expect(&r, 1, false);
	expect(&r, 2, true);
	expect(&r, 3, false);
	/* Tail at 4: three more, then a big one at the last slot wraps. */
	queue_nop(&r, 4, false);
	queue_nop(&r, 5, false);
	queue_nop(&r, 6, false);
	queue_nop(&r, 7, true);
	T_ASSERT_EQ(t_submit(&r), 4);
	T_ASSERT_EQ(*r.cq_tail, 4 + 3 + 3);
	expect(&r, 4, false);
	expect(&r, 5, false);
	expect(&r, 6, false);
	expect(&r, 7, true);
	T_ASSERT_EQ(*r.cq_head, *r.cq_tail);
	t_ring_exit(&r);
}

/* A big CQE with one slot free overflows, and comes back whole. */
static void test_overflow(void)
{
	struct io_uring_params p;
	struct t_ring r;
	int i;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQE_MIXED;
	T_ASSERT_EQ(t_ring_init(&r, 4, &p), 0);
	for (i = 0; i < 7; i++) {
		queue_nop(&r, 10 + i, false);
		if (i == 3)
			T_ASSERT_EQ(t_submit(&r), 4);
	}
	T_ASSERT_EQ(t_submit(&r), 3);
	queue_nop(&r, 20, true);
	T_ASSERT_EQ(t_submit(&r), 1);
	/* The pad took the last slot all the same. */
	T_ASSERT_EQ(*r.cq_tail, 8);
	T_ASSERT(*r.sq_flags & IORING_SQ_CQ_OVERFLOW);
	for (i = 0; i < 7; i++)
		expect(&r, 10 + i, false);
	T_ASSERT_EQ(slot(&r, 7)->flags, IORING_CQE_F_SKIP);
	__atomic_store_n(r.cq_head, 8, __ATOMIC_RELEASE);
	/* GETEVENTS flushes the backlog: the CQE at slots 0 and 1. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(*r.cq_tail, 10);
	expect(&r, 20, true);
	T_ASSERT_EQ(*r.sq_flags & IORING_SQ_CQ_OVERFLOW, 0);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_setup();
	test_layout();
	test_overflow();
	return T_EXIT_PASS;
}
