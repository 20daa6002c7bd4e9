/* SPDX-License-Identifier: MIT */
/*
 * Garbage SQEs: every SQE the engine accepts yields exactly one CQE, nothing
 * crashes, and the ring stays usable. Random bytes come from a fixed-seed
 * PRNG; fds are forced invalid and pointers non-canonical so that no random
 * request can touch real files or memory. Semantics: kernel-semantics.md 1.1.
 */
#include <unistd.h>
#include <nowait.h>
#include "helpers.h"

#define RING_ENTRIES 64
#define MAX_SQES     20000

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: deterministic, so both engines see the same SQEs. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/* What each user_data was: to check the CQE against it. */
struct sent {
	unsigned char opcode;
	unsigned char flags;
	unsigned char seen;
};

static struct sent sent[MAX_SQES];

static void fill_random(struct io_uring_sqe *sqe)
{
	uint64_t *w = (uint64_t *)sqe;
	unsigned int i;

	for (i = 0; i < sizeof(*sqe) / sizeof(*w); i++)
		w[i] = rnd();
}

/* Make a random SQE harmless: no real fd, no real address, no skip. */
static void defuse(struct io_uring_sqe *sqe)
{
	const uint64_t noncanon = 0xdead000000000000ULL;

	sqe->fd = 0x40000000 | (int)(rnd() & 0xffff);
	sqe->addr = noncanon | (sqe->addr & 0xffffffffULL);
	sqe->off = noncanon | (sqe->off & 0xffffffffULL);
	sqe->addr3 = noncanon | (sqe->addr3 & 0xffffffffULL);
	sqe->splice_fd_in = 0x40000000 | (int)(rnd() & 0xffff);
	sqe->flags &= ~IOSQE_CQE_SKIP_SUCCESS;
	/* Opcodes 0..63 in half the cases: most ops are real ones. */
	if (rnd() & 1)
		sqe->opcode &= 63;
	/* Valid SQE flags most of the time, so prep runs. */
	if (rnd() & 3)
		sqe->flags &= 0x3f & ~IOSQE_CQE_SKIP_SUCCESS;
}

/* Take CQEs until *got == want, checking each against what was sent. */
static void reap(struct t_ring *r, unsigned int *got, unsigned int want)
{
	struct io_uring_cqe cqe;

	while (*got < want) {
		struct sent *s;

		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		T_ASSERT_LT(cqe.user_data, MAX_SQES);
		s = &sent[cqe.user_data];
		T_ASSERT_EQ(s->seen, 0);
		s->seen = 1;
		/* No opcode number reaches 128: always -EINVAL. */
		if (s->opcode >= 128 || (s->flags & 0x80))
			T_ASSERT_EQ(cqe.res, -EINVAL);
		(*got)++;
	}
}

/*
 * Queue n SQEs made by make(), submit until all are consumed, and check
 * that every consumed SQE gets one CQE. Returns the number consumed.
 */
static unsigned int run_batch(struct t_ring *r, unsigned int *ud,
			      unsigned int n,
			      void (*make)(struct io_uring_sqe *))
{
	unsigned int i, consumed = 0, got = 0, start = *ud;
	int ret;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = t_get_sqe(r);

		T_ASSERT(sqe != NULL);
		make(sqe);
		T_ASSERT_LT(*ud, MAX_SQES);
		sqe->user_data = *ud;
		sent[*ud].opcode = sqe->opcode;
		sent[*ud].flags = sqe->flags;
		(*ud)++;
	}
	t_ring_flush(r);
	while (consumed < n) {
		ret = t_enter(r->fd, n - consumed, 0, 0, NULL, 0);
		/* A failing SQE still counts: each enter makes progress. */
		T_ASSERT_GT(ret, 0);
		T_ASSERT_LE(ret, n - consumed);
		consumed += ret;
	}
	T_ASSERT_EQ(*r->sq_head, *r->sq_tail);
	reap(r, &got, consumed);
	for (i = start; i < *ud; i++)
		T_ASSERT_EQ(sent[i].seen, 1);
	return consumed;
}

static void make_zero(struct io_uring_sqe *sqe)
{
	memset(sqe, 0, sizeof(*sqe));
}

/* All ones but CQE_SKIP_SUCCESS (a failed skip head hides its link). */
static void make_ones(struct io_uring_sqe *sqe)
{
	memset(sqe, 0xff, sizeof(*sqe));
	sqe->flags &= ~IOSQE_CQE_SKIP_SUCCESS;
}

static void make_random_unknown(struct io_uring_sqe *sqe)
{
	fill_random(sqe);
	sqe->opcode |= 128;
	sqe->flags &= ~IOSQE_CQE_SKIP_SUCCESS;
}

static void make_random(struct io_uring_sqe *sqe)
{
	fill_random(sqe);
	defuse(sqe);
}

static void test_zero_and_ones(void)
{
	struct io_uring_cqe cqe;
	struct t_ring r;
	unsigned int ud = 0, i;

	T_ASSERT_EQ(t_ring_init(&r, RING_ENTRIES, NULL), 0);
	/* An all-zero SQE is a NOP with user_data 0: it succeeds. */
	for (i = 0; i < 4; i++) {
		make_zero(t_get_sqe(&r));
		T_ASSERT_EQ(t_submit(&r), 1);
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, 0);
		T_ASSERT_EQ(cqe.res, 0);
	}
	/* All 0xff: opcode 255, bad flag bits: -EINVAL, one CQE each. */
	memset(sent, 0, sizeof(sent));
	T_ASSERT_EQ(run_batch(&r, &ud, 8, make_ones), 8);
	t_ring_exit(&r);
}

static void test_random_unknown(void)
{
	struct t_ring r;
	unsigned int ud = 0, i;

	memset(sent, 0, sizeof(sent));
	T_ASSERT_EQ(t_ring_init(&r, RING_ENTRIES, NULL), 0);
	for (i = 0; i < 50; i++)
		run_batch(&r, &ud, 1 + rnd() % RING_ENTRIES,
			  make_random_unknown);
	t_ring_exit(&r);
}

static void test_random(void)
{
	struct io_uring_cqe cqe;
	struct t_ring r;
	unsigned int ud = 0, i;

	memset(sent, 0, sizeof(sent));
	T_ASSERT_EQ(t_ring_init(&r, RING_ENTRIES, NULL), 0);
	for (i = 0; i < 200; i++)
		run_batch(&r, &ud, 1 + rnd() % 32, make_random);

	/* Nothing extra arrives later, and the ring still works. */
	usleep(50000);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	T_ASSERT_EQ(*r.sq_dropped, 0);
	T_ASSERT_EQ(*r.cq_overflow, 0);
	t_prep_nop(t_get_sqe(&r), 77);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 77);
	T_ASSERT_EQ(cqe.res, 0);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(40);
	test_zero_and_ones();
	test_random_unknown();
	test_random();
	return T_EXIT_PASS;
}
