/* SPDX-License-Identifier: MIT */
/*
 * CQ overflow with IORING_FEAT_NODROP: more completions than CQ slots are
 * kept on a backlog, flagged with IORING_SQ_CQ_OVERFLOW, flushed in order by
 * GETEVENTS enters, and never dropped. Semantics: io_uring.c
 * io_cqring_event_overflow/__io_cqring_overflow_flush (kernel-semantics.md 6).
 */
#include <unistd.h>
#include <nowait.h>
#include "helpers.h"

/* Submit n NOPs with consecutive user_data from *ud, without reaping. */
static void submit_nops(struct t_ring *r, unsigned int n, uint64_t *ud)
{
	while (n) {
		unsigned int batch = 0;
		struct io_uring_sqe *sqe;

		while (batch < n && (sqe = t_get_sqe(r)) != NULL) {
			t_prep_nop(sqe, (*ud)++);
			batch++;
		}
		/* Overflow never makes submission fail (no -EBUSY). */
		T_ASSERT_EQ(t_submit(r), batch);
		n -= batch;
	}
}

/* Reap everything visible, checking order; returns how many. */
static unsigned int reap_in_order(struct t_ring *r, uint64_t *next)
{
	struct io_uring_cqe cqe;
	unsigned int n = 0;

	while (!t_peek_cqe(r, &cqe)) {
		T_ASSERT_EQ(cqe.user_data, *next);
		T_ASSERT_EQ(cqe.res, 0);
		T_ASSERT_EQ(cqe.flags, 0);
		(*next)++;
		n++;
	}
	return n;
}

/*
 * Drain the backlog: reap, flush with GETEVENTS, repeat. Every flush must
 * make progress while the flag is set. Returns the number reaped.
 */
static unsigned int drain(struct t_ring *r, uint64_t *next, unsigned int limit)
{
	unsigned int total = 0, rounds = 0;

	for (;;) {
		total += reap_in_order(r, next);
		if (!(__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) &
		      IORING_SQ_CQ_OVERFLOW))
			break;
		T_ASSERT_EQ(
			t_enter(r->fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0),
			0);
		/* The CQ was empty, so a flush must have posted something. */
		T_ASSERT_GT(t_cq_ready(r), 0);
		T_ASSERT_LT(rounds++, limit);
	}
	total += reap_in_order(r, next);
	return total;
}

static void test_basic(void)
{
	struct t_ring r;
	uint64_t ud = 0, next = 0;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	T_ASSERT_EQ(*r.cq_entries, 8);
	submit_nops(&r, 8, &ud);
	T_ASSERT_EQ(t_cq_ready(&r), 8);
	T_ASSERT_EQ(*r.sq_flags & IORING_SQ_CQ_OVERFLOW, 0);

	submit_nops(&r, 12, &ud);
	T_ASSERT_EQ(t_cq_ready(&r), 8);
	T_ASSERT(*r.sq_flags & IORING_SQ_CQ_OVERFLOW);
	T_ASSERT_EQ(*r.cq_overflow, 0);

	/* A GETEVENTS with a full CQ flushes nothing and returns at once. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(t_cq_ready(&r), 8);
	T_ASSERT(*r.sq_flags & IORING_SQ_CQ_OVERFLOW);

	/* Reap the ring: the first 8 in order. */
	T_ASSERT_EQ(reap_in_order(&r, &next), 8);
	T_ASSERT_EQ(next, 8);

	/* Flush: the next 8 of the backlog, still flagged (4 remain). */
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(t_cq_ready(&r), 8);
	T_ASSERT(*r.sq_flags & IORING_SQ_CQ_OVERFLOW);
	T_ASSERT_EQ(reap_in_order(&r, &next), 8);

	/* min_complete 1 on an empty CQ with a backlog: the flush satisfies. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(t_cq_ready(&r), 4);
	T_ASSERT_EQ(*r.sq_flags & IORING_SQ_CQ_OVERFLOW, 0);
	T_ASSERT_EQ(reap_in_order(&r, &next), 4);
	T_ASSERT_EQ(next, 20);
	T_ASSERT_EQ(*r.cq_overflow, 0);

	/* The ring works normally afterwards. */
	submit_nops(&r, 3, &ud);
	T_ASSERT_EQ(reap_in_order(&r, &next), 3);
	T_ASSERT_EQ(*r.sq_flags & IORING_SQ_CQ_OVERFLOW, 0);
	t_ring_exit(&r);
}

/* New CQEs queue behind the backlog, even after the app made room. */
static void test_order_behind_backlog(void)
{
	struct t_ring r;
	uint64_t ud = 0, next = 0;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	submit_nops(&r, 10, &ud);
	T_ASSERT(*r.sq_flags & IORING_SQ_CQ_OVERFLOW);
	T_ASSERT_EQ(reap_in_order(&r, &next), 8);
	/* Room in the CQ now, but 2 are backlogged: these go after them. */
	submit_nops(&r, 3, &ud);
	T_ASSERT_EQ(drain(&r, &next, 10), 5);
	T_ASSERT_EQ(next, 13);
	T_ASSERT_EQ(*r.cq_overflow, 0);
	t_ring_exit(&r);
}

/* A large backlog on a ring with cq_entries == sq_entries. */
static void test_large(void)
{
	struct io_uring_params p;
	struct t_ring r;
	uint64_t ud = 0, next = 0;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 16;
	T_ASSERT_EQ(t_ring_init(&r, 16, &p), 0);
	T_ASSERT_EQ(*r.cq_entries, 16);
	submit_nops(&r, 5000, &ud);
	T_ASSERT_EQ(t_cq_ready(&r), 16);
	T_ASSERT(*r.sq_flags & IORING_SQ_CQ_OVERFLOW);
	T_ASSERT_EQ(drain(&r, &next, 5000 / 16 + 2), 5000);
	T_ASSERT_EQ(next, 5000);
	T_ASSERT_EQ(*r.cq_overflow, 0);
	T_ASSERT_EQ(*r.sq_flags & IORING_SQ_CQ_OVERFLOW, 0);
	t_ring_exit(&r);
}

/* Interleave submitting and partial reaping; count everything. */
static void test_interleaved(void)
{
	struct io_uring_cqe cqe;
	struct t_ring r;
	uint64_t ud = 0, next = 0;
	unsigned int round, total = 0;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	for (round = 0; round < 200; round++) {
		submit_nops(&r, 1 + round % 8, &ud);
		/* Reap at most 3 per round: the backlog grows. */
		for (int k = 0; k < 3 && !t_peek_cqe(&r, &cqe); k++) {
			T_ASSERT_EQ(cqe.user_data, next);
			next++;
			total++;
		}
		if (round % 16 == 15) {
			T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS,
					    NULL, 0),
				    0);
		}
	}
	total += drain(&r, &next, 1000);
	T_ASSERT_EQ(total, ud);
	T_ASSERT_EQ(next, ud);
	T_ASSERT_EQ(*r.cq_overflow, 0);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_basic();
	test_order_behind_backlog();
	test_large();
	test_interleaved();
	return T_EXIT_PASS;
}
