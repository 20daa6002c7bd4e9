/* SPDX-License-Identifier: MIT */
/*
 * The per-opcode table, the kernel's io_uring/opdef.c in shape: what each
 * opcode needs from the core and the functions that prepare and issue it.
 * The core (submit.c), the probe (register.c) and the readiness machinery
 * read it; no opcode-specific code lives elsewhere.
 */
#ifndef NW_OPDEF_H
#define NW_OPDEF_H

#include "internal.h"

struct nw_opdef {
	const char *name;
	unsigned needs_file : 1; /* sqe->fd names a file */
	unsigned pollin : 1;	 /* on NW_RETRY, wait for EPOLLIN and reissue */
	unsigned pollout : 1; /* on NW_RETRY, wait for EPOLLOUT and reissue */
	unsigned buffer_select : 1;	  /* accepts IOSQE_BUFFER_SELECT */
	unsigned ioprio : 1;		  /* accepts sqe->ioprio */
	unsigned iopoll : 1;		  /* allowed on an IOPOLL ring */
	unsigned unbound_nonreg_file : 1; /* may block forever on non-files */
	unsigned always_inline : 1; /* never queues: may run on a stack req */
	/* always blocks (the kernel forces it async): no inline try */
	unsigned always_punt : 1;
	/*
	 * Optional: prep and issue in one call for the common, flag-free
	 * form of an always-inline op. Returns 0 with *res set, or -1 to
	 * send the SQE down the general path (which validates it fully).
	 */
	int (*fast)(const struct io_uring_sqe *sqe, int32_t *res);
	/* Validate the SQE and copy what issue needs. Runs on the submitter. */
	int (*prep)(struct nw_req *req, const struct io_uring_sqe *sqe);
	/* Do the operation: NW_COMPLETE, NW_QUEUED, NW_RETRY or -errno. */
	int (*issue)(struct nw_req *req, unsigned int issue_flags);
	/* Free what prep allocated (optional). */
	void (*cleanup)(struct nw_req *req);
};

extern const struct nw_opdef nw_opdefs[NW_OP_LAST];

/*
 * always_inline and fast of every byte value, so the submit fast path
 * tests an opcode with one load and no range check (filled from the table).
 */
extern bool nw_op_always_inline[256];
extern int (*nw_op_fast[256])(const struct io_uring_sqe *sqe, int32_t *res);

/* True when the engine implements the opcode (what the probe reports). */
static inline bool nw_op_supported(unsigned int opcode)
{
	return opcode < NW_OP_LAST && nw_opdefs[opcode].issue != NULL;
}

#endif /* NW_OPDEF_H */
