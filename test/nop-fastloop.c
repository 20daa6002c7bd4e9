/* SPDX-License-Identifier: MIT */
/*
 * NOP batches through the submit side's fast loop on every ring shape it
 * has a variant for: with and without the SQ index array (NO_SQARRAY),
 * 64- and 128-byte SQEs (SQE128), with and without a submit lock
 * (SINGLE_ISSUER | DEFER_TASKRUN, as the bench's rings). Many laps of
 * both rings with batches of every size, the CQEs in order with res 0 and
 * flags 0; batches that the fast loop must hand over in their middle (an
 * injected result, CQE_SKIP_SUCCESS, an unknown opcode that ends the
 * batch) and take up again; and a NOP the fast loop must not complete
 * because of a field it checks (ioprio, an unregistered personality, an
 * unknown NOP flag), which fails -EINVAL and ends the batch.
 * Semantics: io_uring.c io_submit_sqes/io_get_sqe/io_init_req, nop.c.
 */
#include <unistd.h>
#include <nowait.h>
#include "helpers.h"

#define ENTRIES 8
#define LAPS	40 /* of batch sizes 1..ENTRIES: 180 SQ ring laps */

static const unsigned int shapes[] = {
	0,
	IORING_SETUP_NO_SQARRAY,
	IORING_SETUP_SQE128,
	IORING_SETUP_NO_SQARRAY | IORING_SETUP_SQE128,
	IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
		IORING_SETUP_NO_SQARRAY,
};

#define NR_SHAPES (sizeof(shapes) / sizeof(shapes[0]))

static void ring_open(struct t_ring *r, unsigned int flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	T_ASSERT_EQ(t_ring_init(r, ENTRIES, &p), 0);
	T_ASSERT_EQ(r->p.sq_entries, ENTRIES);
	T_ASSERT_EQ(r->sq_array == NULL, !!(flags & IORING_SETUP_NO_SQARRAY));
}

static void expect(struct t_ring *r, uint64_t ud, int res)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_peek_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, res);
	T_ASSERT_EQ(cqe.flags, 0);
}

/* Batches of 1..ENTRIES NOPs, each reaped in order before the next. */
static void test_laps(unsigned int flags)
{
	uint64_t ud = 1, next = 1;
	struct t_ring r;
	unsigned int lap, n, i;

	ring_open(&r, flags);
	for (lap = 0; lap < LAPS; lap++) {
		for (n = 1; n <= ENTRIES; n++) {
			for (i = 0; i < n; i++)
				t_prep_nop(t_get_sqe(&r), ud++);
			T_ASSERT_EQ(t_submit(&r), (int)n);
			T_ASSERT_EQ(t_cq_ready(&r), n);
			while (next < ud)
				expect(&r, next++, 0);
			T_ASSERT_EQ(t_cq_ready(&r), 0);
		}
	}
	T_ASSERT_EQ(*r.sq_head, *r.sq_tail);
	T_ASSERT_EQ(*r.sq_dropped, 0);
	t_ring_exit(&r);
}

/*
 * [NOP NOP INJECT(77) NOP SKIP-NOP BAD-OPCODE NOP NOP]: the skipped
 * success posts nothing, the unknown opcode fails with -EINVAL and ends
 * the batch (it counts as submitted); the two after it stay queued until
 * the next enter.
 */
static void test_handover(unsigned int flags)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int round;

	ring_open(&r, flags);
	for (round = 0; round < 3; round++) { /* the SQ ring wraps */
		t_prep_nop(t_get_sqe(&r), 1);
		t_prep_nop(t_get_sqe(&r), 2);
		sqe = t_get_sqe(&r);
		t_prep_nop(sqe, 3);
		sqe->rw_flags = IORING_NOP_INJECT_RESULT;
		sqe->len = 77;
		t_prep_nop(t_get_sqe(&r), 4);
		sqe = t_get_sqe(&r);
		t_prep_nop(sqe, 5);
		sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
		sqe = t_get_sqe(&r);
		t_prep_nop(sqe, 6);
		sqe->opcode = 255;
		t_prep_nop(t_get_sqe(&r), 7);
		t_prep_nop(t_get_sqe(&r), 8);
		T_ASSERT_EQ(t_submit(&r), 6);
		T_ASSERT_EQ(t_cq_ready(&r), 5);
		expect(&r, 1, 0);
		expect(&r, 2, 0);
		expect(&r, 3, 77);
		expect(&r, 4, 0);
		expect(&r, 6, -EINVAL);
		T_ASSERT_EQ(*r.sq_tail - *r.sq_head, 2);
		T_ASSERT_EQ(t_submit(&r), 2);
		expect(&r, 7, 0);
		expect(&r, 8, 0);
		T_ASSERT_EQ(t_cq_ready(&r), 0);
	}
	t_ring_exit(&r);
}

/* Which field of the third NOP of a batch is set (test_rejects). */
enum reject { REJ_IOPRIO, REJ_PERSONALITY, REJ_NOP_FLAG, NR_REJ };

/*
 * [NOP NOP BAD NOP]: BAD fails -EINVAL in io_init_req (ioprio on an op
 * without it, a personality never registered) or in the NOP's prep (a
 * flag it does not know), and ends the batch, counted as submitted; the
 * NOP after it waits for the next enter.
 */
static void test_rejects(unsigned int flags)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int rej;

	ring_open(&r, flags);
	for (rej = 0; rej < NR_REJ; rej++) {
		t_prep_nop(t_get_sqe(&r), 1);
		t_prep_nop(t_get_sqe(&r), 2);
		sqe = t_get_sqe(&r);
		t_prep_nop(sqe, 3);
		if (rej == REJ_IOPRIO)
			sqe->ioprio = 1;
		else if (rej == REJ_PERSONALITY)
			sqe->personality = 1;
		else
			sqe->rw_flags = 1U << 30;
		t_prep_nop(t_get_sqe(&r), 4);
		T_ASSERT_EQ(t_submit(&r), 3);
		T_ASSERT_EQ(t_cq_ready(&r), 3);
		expect(&r, 1, 0);
		expect(&r, 2, 0);
		expect(&r, 3, -EINVAL);
		T_ASSERT_EQ(t_submit(&r), 1);
		expect(&r, 4, 0);
		T_ASSERT_EQ(t_cq_ready(&r), 0);
	}
	t_ring_exit(&r);
}

int main(void)
{
	unsigned int s;

	t_require_engine();
	t_watchdog(30);
	for (s = 0; s < NR_SHAPES; s++) {
		test_laps(shapes[s]);
		test_handover(shapes[s]);
		test_rejects(shapes[s]);
	}
	return T_EXIT_PASS;
}
