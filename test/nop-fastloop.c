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
 * unknown NOP flag), which fails -EINVAL and ends the batch. The loop
 * runs in stretches that wrap neither the SQ nor the CQ: a batch with a
 * bad SQE at each place, at every offset of the SQ against the CQ, the
 * index array naming SQEs out of order, and an index out of range.
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

/*
 * SQ position pos names SQE slot (3 pos + rot) mod ENTRIES in the index
 * array, a bijection over any ENTRIES positions in a row; without the
 * array the slot is the position's.
 */
static struct io_uring_sqe *sqe_for(struct t_ring *r, unsigned int pos,
				    unsigned int rot)
{
	unsigned int mask = ENTRIES - 1, slot = pos & mask;

	if (r->sq_array) {
		slot = (3 * pos + rot) & mask;
		r->sq_array[pos & mask] = slot;
	}
	return &r->sqes[slot << t_sqe_shift(r)];
}

/* How the bad SQE of a batch is bad (test_stretches). */
enum stretch_bad {
	BAD_OPCODE,
	BAD_IOPRIO,
	BAD_PERSONALITY,
	BAD_NOP_FLAG,
	BAD_INDEX,
	NR_BAD
};

/* Publish ENTRIES NOPs from ud on, the one at bad made bad by how. */
static void queue_batch(struct t_ring *r, uint64_t ud, unsigned int bad,
			enum stretch_bad how, unsigned int rot)
{
	unsigned int tail = *r->sq_tail, i;
	struct io_uring_sqe *sqe;

	for (i = 0; i < ENTRIES; i++) {
		sqe = sqe_for(r, tail + i, rot);
		t_prep_nop(sqe, ud + i);
		if (i != bad)
			continue;
		if (how == BAD_OPCODE)
			sqe->opcode = 255;
		else if (how == BAD_IOPRIO)
			sqe->ioprio = 1;
		else if (how == BAD_PERSONALITY)
			sqe->personality = 1;
		else if (how == BAD_NOP_FLAG)
			sqe->rw_flags = 1U << 30;
		else
			r->sq_array[(tail + i) & (ENTRIES - 1)] = ENTRIES;
	}
	__atomic_store_n(r->sq_tail, tail + ENTRIES, __ATOMIC_RELEASE);
}

/*
 * NOPs in batches of at most ENTRIES, skip (CQE_SKIP_SUCCESS: no CQE)
 * or not, each batch reaped and checked; *ud is the next user_data.
 */
static void run_nops(struct t_ring *r, unsigned int nr, bool skip, uint64_t *ud)
{
	unsigned int n, i;

	for (; nr; nr -= n) {
		n = nr < ENTRIES ? nr : ENTRIES;
		for (i = 0; i < n; i++) {
			struct io_uring_sqe *sqe =
				sqe_for(r, *r->sq_tail + i, 0);

			t_prep_nop(sqe, *ud + i);
			sqe->flags = skip ? IOSQE_CQE_SKIP_SUCCESS : 0;
		}
		__atomic_store_n(r->sq_tail, *r->sq_tail + n, __ATOMIC_RELEASE);
		T_ASSERT_EQ(t_enter(r->fd, n, 0, 0, NULL, 0), (int)n);
		for (i = 0; i < n && !skip; i++)
			expect(r, *ud + i, 0);
		T_ASSERT_EQ(t_cq_ready(r), 0);
		*ud += n;
	}
}

/* Bring the SQ tail to position sq and the CQ tail to cq (mod sizes). */
static void move_to(struct t_ring *r, unsigned int sq, unsigned int cq,
		    uint64_t *ud)
{
	unsigned int cq_size = *r->cq_entries;

	run_nops(r, (cq - *r->cq_tail) & (cq_size - 1), false, ud);
	run_nops(r, (sq - *r->sq_tail) & (ENTRIES - 1), true, ud);
	T_ASSERT_EQ(*r->sq_tail & (ENTRIES - 1), sq);
	T_ASSERT_EQ(*r->cq_tail & (cq_size - 1), cq);
}

/*
 * A batch of ENTRIES NOPs from every pair of SQ and CQ positions, with a
 * bad one at each place (none at bad == ENTRIES), so that the stretches
 * end everywhere: the ones before it complete, a bad SQE fails -EINVAL
 * and ends the batch, a bad index is dropped (sq_dropped, no CQE, not
 * counted) and ends it too; the rest wait for the next enter.
 */
static void test_stretches(unsigned int flags)
{
	unsigned int pos, bad, before, dropped = 0, nr_pos;
	enum stretch_bad how;
	uint64_t ud = 1, i;
	struct t_ring r;
	int want;

	ring_open(&r, flags);
	nr_pos = ENTRIES * *r.cq_entries;
	for (pos = 0; pos < nr_pos; pos++) {
		how = (enum stretch_bad)(pos % NR_BAD);
		if (how == BAD_INDEX && !r.sq_array)
			how = BAD_OPCODE;
		for (bad = 0; bad <= ENTRIES; bad++) {
			move_to(&r, pos % ENTRIES, pos / ENTRIES, &ud);
			before = bad < ENTRIES ? bad : ENTRIES;
			want = bad == ENTRIES	  ? ENTRIES
			       : how == BAD_INDEX ? (int)bad
						  : (int)bad + 1;
			queue_batch(&r, ud, bad, how, pos + bad);
			T_ASSERT_EQ(t_enter(r.fd, ENTRIES, 0, 0, NULL, 0),
				    want);
			for (i = 0; i < before; i++)
				expect(&r, ud + i, 0);
			if (bad < ENTRIES && how == BAD_INDEX)
				T_ASSERT_EQ(*r.sq_dropped, ++dropped);
			else if (bad < ENTRIES)
				expect(&r, ud + bad, -EINVAL);
			T_ASSERT_EQ(t_cq_ready(&r), 0);
			if (bad + 1 < ENTRIES) {
				want = (int)(ENTRIES - bad - 1);
				T_ASSERT_EQ(*r.sq_tail - *r.sq_head, want);
				T_ASSERT_EQ(t_enter(r.fd, want, 0, 0, NULL, 0),
					    want);
				for (i = bad + 1; i < ENTRIES; i++)
					expect(&r, ud + i, 0);
			}
			T_ASSERT_EQ(*r.sq_tail, *r.sq_head);
			T_ASSERT_EQ(t_cq_ready(&r), 0);
			ud += ENTRIES;
		}
	}
	T_ASSERT_EQ(*r.sq_dropped, dropped);
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
		test_stretches(shapes[s]);
	}
	return T_EXIT_PASS;
}
