/* SPDX-License-Identifier: MIT */
/*
 * The opcode tables (src/opdef.c) and what they mean at the ABI:
 * - the start-up check (nw_optable_check) passes on the engine's tables
 *   and catches each rule broken in a copy of them; the submit fast
 *   loop's constant NW_TRIVIAL_OPS names exactly the trivial opcodes;
 * - the probe reports exactly the table's implemented opcodes, each with
 *   a prep, an issue and a name (user engine);
 * - every opcode the probe leaves unsupported, and every byte value past
 *   last_op up to 255, completes -EINVAL, flag-free (the fast path's
 *   unchecked table lookup) or not, alone or heading a link (both engines);
 * - the table's iopoll bit is what an IOPOLL ring accepts (both engines).
 * Kernel side: io_uring/opdef.c, io_init_req.
 */
#include "helpers.h"
#include "opdef.h"

#define PROBE_OPS 256

struct probe_buf {
	struct io_uring_probe hdr;
	struct io_uring_probe_op ops[PROBE_OPS];
};

static struct probe_buf probe;

static struct nw_issue_def issue_copy[NW_OP_TABLE_SIZE];
static struct nw_cold_def cold_copy[NW_OP_LAST];

static void reset_copies(void)
{
	memcpy(issue_copy, nw_issue_defs, sizeof(issue_copy));
	memcpy(cold_copy, nw_cold_defs, sizeof(cold_copy));
}

/* The check on the copies must name op (and say why). */
static void expect_bad(int op, int line)
{
	const char *why = NULL;
	int got = nw_optable_check(issue_copy, NW_OP_TABLE_SIZE, cold_copy,
				   NW_OP_LAST, &why);

	if (got != op || !why) {
		fprintf(stderr, "opdef.c:%d: check gave %d (%s), want %d\n",
			line, got, why ? why : "no reason", op);
		abort();
	}
	reset_copies();
}
#define EXPECT_BAD(op) expect_bad(op, __LINE__)

static void test_check(void)
{
	const char *why = "unset";

	T_ASSERT_EQ(nw_optable_check(nw_issue_defs, NW_OP_TABLE_SIZE,
				     nw_cold_defs, NW_OP_LAST, &why),
		    -1);
	T_ASSERT(why == NULL);
	nw_optable_init(); /* returns: it would abort on a violation */

	reset_copies();
	T_ASSERT_EQ(nw_optable_check(issue_copy, NW_OP_TABLE_SIZE, cold_copy,
				     NW_OP_LAST, &why),
		    -1);
	/* Wrong lengths. */
	T_ASSERT_EQ(nw_optable_check(issue_copy, NW_OP_LAST, cold_copy,
				     NW_OP_LAST, &why),
		    NW_OP_TABLE_SIZE);
	T_ASSERT_EQ(nw_optable_check(issue_copy, NW_OP_TABLE_SIZE, cold_copy,
				     NW_OP_LAST - 1, &why),
		    NW_OP_TABLE_SIZE);

	issue_copy[IORING_OP_READ].prep = NULL;
	EXPECT_BAD(IORING_OP_READ);
	cold_copy[IORING_OP_SOCKET].name = NULL;
	EXPECT_BAD(IORING_OP_SOCKET);
	issue_copy[IORING_OP_NOP].always_punt = 1;
	EXPECT_BAD(IORING_OP_NOP);
	issue_copy[IORING_OP_NOP].needs_file = 1;
	EXPECT_BAD(IORING_OP_NOP);
	issue_copy[IORING_OP_NOP].iopoll = 0;
	EXPECT_BAD(IORING_OP_NOP);
	issue_copy[IORING_OP_READ].trivial = 1;
	EXPECT_BAD(IORING_OP_READ);
	/* The fast loop's constant mask names the trivial opcodes. */
	T_ASSERT_EQ(nw_trivial_mask_check(nw_issue_defs), -1);
	issue_copy[IORING_OP_MSG_RING].always_inline = 1;
	issue_copy[IORING_OP_MSG_RING].trivial = 1;
	T_ASSERT_EQ(nw_trivial_mask_check(issue_copy), IORING_OP_MSG_RING);
	issue_copy[IORING_OP_MSG_RING] = nw_issue_defs[IORING_OP_MSG_RING];
	issue_copy[IORING_OP_NOP].trivial = 0;
	T_ASSERT_EQ(nw_trivial_mask_check(issue_copy), IORING_OP_NOP);
	reset_copies();
	issue_copy[IORING_OP_TIMEOUT].pollin = 1;
	EXPECT_BAD(IORING_OP_TIMEOUT);
	issue_copy[IORING_OP_RECV].pollout = 1;
	EXPECT_BAD(IORING_OP_RECV);
	issue_copy[IORING_OP_OPENAT].unbound_nonreg_file = 1;
	EXPECT_BAD(IORING_OP_OPENAT);
	/*
	 * An unimplemented opcode (RECV_ZC needs a NIC's queue) carries
	 * nothing, below NW_OP_LAST...
	 */
	issue_copy[NW_OP_RECV_ZC].needs_file = 1;
	EXPECT_BAD(NW_OP_RECV_ZC);
	cold_copy[NW_OP_RECV_ZC].name = "RECV_ZC";
	EXPECT_BAD(NW_OP_RECV_ZC);
	/* ...or past it, where nothing may be implemented at all. */
	issue_copy[255].always_inline = 1;
	EXPECT_BAD(255);
	issue_copy[NW_OP_LAST] = issue_copy[IORING_OP_NOP];
	EXPECT_BAD(NW_OP_LAST);
}

/* The table itself, and the probe against it (user engine). */
static void test_table_and_probe(void)
{
	struct t_ring r;
	unsigned int op, nr = 0;

	for (op = 0; op < NW_OP_TABLE_SIZE; op++) {
		const struct nw_issue_def *d = &nw_issue_defs[op];

		T_ASSERT_EQ(nw_op_supported(op), d->issue != NULL);
		if (op >= NW_OP_LAST) {
			T_ASSERT(!d->issue && !d->prep && !d->trivial);
			continue;
		}
		if (!d->issue)
			continue;
		nr++;
		T_ASSERT(d->prep != NULL);
		T_ASSERT(nw_cold_defs[op].name != NULL);
		T_ASSERT_GT(strlen(nw_cold_defs[op].name), 0);
	}
	T_ASSERT(nw_op_supported(IORING_OP_NOP));
	T_ASSERT(nw_issue_defs[IORING_OP_NOP].always_inline);
	T_ASSERT(!nw_op_supported(NW_OP_TABLE_SIZE));
	T_ASSERT(!nw_op_supported(~0U));

	if (t_engine() != T_ENGINE_USER)
		return;
	memset(&probe, 0, sizeof(probe));
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, &probe, PROBE_OPS),
		    0);
	T_ASSERT_EQ(probe.hdr.last_op, NW_OP_LAST - 1);
	T_ASSERT_EQ(probe.hdr.ops_len, NW_OP_LAST);
	for (op = 0; op < NW_OP_LAST; op++) {
		bool sup = probe.ops[op].flags & IO_URING_OP_SUPPORTED;

		T_ASSERT_EQ(probe.ops[op].op, op);
		T_ASSERT_EQ(sup, nw_issue_defs[op].issue != NULL);
		if (sup)
			nr--;
	}
	T_ASSERT_EQ(nr, 0);
	t_ring_exit(&r);
}

/* Queue an SQE that is a NOP in every field but opcode and flags. */
static void prep_op(struct t_ring *r, unsigned int op, unsigned int flags,
		    uint64_t user_data)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, user_data);
	sqe->opcode = (uint8_t)op;
	sqe->flags = (uint8_t)flags;
}

/*
 * Every unsupported opcode completes -EINVAL: in batches (the submit fast
 * path looks each byte up with no range check), then with a flag (the
 * general path; past last_op the kernel rejects the opcode before it
 * looks at BUFFER_SELECT), then at the head of a link, whose NOP is
 * canceled.
 */
static void test_unsupported(void)
{
	/* A failed SQE ends the batch unless SUBMIT_ALL. */
	struct io_uring_params p = {.flags = IORING_SETUP_SUBMIT_ALL};
	struct io_uring_cqe cqe;
	struct t_ring r;
	unsigned int op, last, queued = 0, i;
	bool seen[PROBE_OPS] = {false};

	memset(&probe, 0, sizeof(probe));
	T_ASSERT_EQ(t_ring_init(&r, 64, &p), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, &probe, PROBE_OPS),
		    0);
	last = probe.hdr.last_op;
	T_ASSERT_LT(last, PROBE_OPS);
	T_ASSERT(t_engine() != T_ENGINE_USER || last == NW_OP_LAST - 1);

	for (op = 0; op < PROBE_OPS; op++) {
		if (op <= last && (probe.ops[op].flags & IO_URING_OP_SUPPORTED))
			continue;
		prep_op(&r, op, 0, op);
		if (++queued == 32 || op == PROBE_OPS - 1) {
			T_ASSERT_EQ(t_submit_and_wait(&r, queued), (int)queued);
			for (i = 0; i < queued; i++) {
				T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
				T_ASSERT_LT(cqe.user_data, PROBE_OPS);
				T_ASSERT(!seen[cqe.user_data]);
				seen[cqe.user_data] = true;
				/* Below last_op a kernel may say EOPNOTSUPP. */
				if (cqe.user_data > last ||
				    t_engine() == T_ENGINE_USER)
					T_ASSERT_EQ(cqe.res, -EINVAL);
				else
					T_ASSERT(cqe.res == -EINVAL ||
						 cqe.res == -EOPNOTSUPP);
			}
			queued = 0;
		}
	}
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	for (op = last + 1; op < PROBE_OPS; op++)
		T_ASSERT(seen[op]);

	for (op = last + 1; op < PROBE_OPS; op += 17) {
		prep_op(&r, op, IOSQE_BUFFER_SELECT, op);
		T_ASSERT_EQ(t_run(&r, op), -EINVAL);
		prep_op(&r, op, IOSQE_IO_LINK, op);
		prep_op(&r, IORING_OP_NOP, 0, 1000 + op);
		T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
		t_expect_cqe(&r, op, -EINVAL);
		t_expect_cqe(&r, 1000 + op, -ECANCELED);
	}
	/* 255 itself, flag-free and alone. */
	prep_op(&r, 255, 0, 255);
	T_ASSERT_EQ(t_run(&r, 255), -EINVAL);
	/* And the ring still runs a NOP. */
	prep_op(&r, IORING_OP_NOP, 0, 7);
	T_ASSERT_EQ(t_run(&r, 7), 0);
	t_ring_exit(&r);
}

/* iopoll: NOP runs on an IOPOLL ring (fast path too), TIMEOUT does not. */
static void test_iopoll(void)
{
	struct io_uring_params p = {.flags = IORING_SETUP_IOPOLL};
	struct io_uring_sqe *sqe;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 4, &p), 0);
	T_ASSERT(nw_issue_defs[IORING_OP_NOP].iopoll);
	T_ASSERT(!nw_issue_defs[IORING_OP_TIMEOUT].iopoll);
	prep_op(&r, IORING_OP_NOP, 0, 1);
	T_ASSERT_EQ(t_run(&r, 1), 0);
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, 2);
	sqe->opcode = IORING_OP_TIMEOUT; /* addr 0: would fault, if prepped */
	sqe->len = 1;
	T_ASSERT_EQ(t_run(&r, 2), -EINVAL);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_check();
	test_table_and_probe();
	test_unsupported();
	test_iopoll();
	return T_EXIT_PASS;
}
