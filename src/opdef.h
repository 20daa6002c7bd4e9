/* SPDX-License-Identifier: MIT */
/*
 * The per-opcode tables, split as the kernel's io_uring/opdef.h splits
 * them: what each opcode needs from the core on the submit, issue and park
 * paths (struct nw_issue_def, read for every request), and what only
 * teardown and the start-up check read (struct nw_cold_def), so the hot
 * table stays small. The core (submit.c), the probe (register.c) and the
 * readiness machinery read them; no opcode-specific code lives elsewhere.
 */
#ifndef NW_OPDEF_H
#define NW_OPDEF_H

#include "internal.h"

/* One entry per byte value of sqe->opcode: no range check on the hot path. */
#define NW_OP_TABLE_SIZE 256U

struct nw_issue_def {
	unsigned needs_file : 1; /* sqe->fd names a file */
	unsigned pollin : 1;	 /* on NW_RETRY, wait for EPOLLIN and reissue */
	unsigned pollout : 1; /* on NW_RETRY, wait for EPOLLOUT and reissue */
	unsigned buffer_select : 1;	  /* accepts IOSQE_BUFFER_SELECT */
	unsigned ioprio : 1;		  /* accepts sqe->ioprio */
	unsigned iopoll : 1;		  /* allowed on an IOPOLL ring */
	unsigned unbound_nonreg_file : 1; /* may block forever on non-files */
	/*
	 * Never queues: may run on a stack req in the submit fast path,
	 * which skips init_req's checks (so no file, and IOPOLL allowed).
	 */
	unsigned always_inline : 1;
	/* always blocks (the kernel forces it async): no inline try */
	unsigned always_punt : 1;
	/*
	 * An always-inline op whose flag-free form (sqe->rw_flags, the op's
	 * own flags word, 0; no SQE flags, ioprio or personality) completes
	 * with res 0 and cflags 0 and does nothing else: the submit fast
	 * loop posts its CQE without calling prep or issue. Any other form
	 * takes the general path, which validates it fully.
	 */
	unsigned trivial : 1;
	/* Validate the SQE and copy what issue needs. Runs on the submitter. */
	int (*prep)(struct nw_req *req, const struct io_uring_sqe *sqe);
	/* Do the operation: NW_COMPLETE, NW_QUEUED, NW_RETRY or -errno. */
	int (*issue)(struct nw_req *req, unsigned int issue_flags);
} __attribute__((aligned(32))); /* a def's index is one shift */

/*
 * The opcodes marked trivial in nw_issue_defs, as a mask of opcodes below
 * 64, for the submit fast loop: a constant test, no table load per SQE.
 * nw_optable_init checks that it names exactly the trivial ones.
 */
#define NW_TRIVIAL_OPS (1ULL << IORING_OP_NOP)

static inline bool nw_op_trivial(unsigned int opcode)
{
	return opcode < 64 && ((NW_TRIVIAL_OPS >> opcode) & 1);
}

struct nw_cold_def {
	const char *name;
	/* sqe->addr names a path: the trace (trace.c) shows it as a string. */
	unsigned path_arg : 1;
	/* Free what prep allocated (optional; only when req->async is set). */
	void (*cleanup)(struct nw_req *req);
};

/*
 * Every byte value: entries without .issue (unimplemented opcodes, all of
 * them from NW_OP_LAST on) are all zero.
 */
extern const struct nw_issue_def nw_issue_defs[NW_OP_TABLE_SIZE];
extern const struct nw_cold_def nw_cold_defs[NW_OP_LAST];

/* True when the engine implements the opcode (what the probe reports). */
static inline bool nw_op_supported(unsigned int opcode)
{
	return opcode < NW_OP_LAST && nw_issue_defs[opcode].issue != NULL;
}

/*
 * Check a pair of tables against the rules the core relies on (the
 * kernel's io_uring_optable_init): returns the first opcode that breaks
 * one, with *why saying which, NW_OP_TABLE_SIZE when a length (nr_issue,
 * nr_cold) is wrong, or -1 (and *why NULL) when they hold.
 */
int nw_optable_check(const struct nw_issue_def *issue, unsigned int nr_issue,
		     const struct nw_cold_def *cold, unsigned int nr_cold,
		     const char **why);
/* The first opcode whose trivial bit NW_TRIVIAL_OPS gets wrong, or -1. */
int nw_trivial_mask_check(const struct nw_issue_def *issue);
/* Check the engine's own tables, once; nw_bug on a violation. */
void nw_optable_init(void);

#endif /* NW_OPDEF_H */
