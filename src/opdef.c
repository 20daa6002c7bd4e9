/* SPDX-License-Identifier: MIT */
/*
 * The opcode table. An opcode without .issue is not implemented: its SQEs
 * complete with -EINVAL, as on a kernel that predates it, and the probe
 * leaves it unsupported. Kernel counterpart: io_uring/opdef.c.
 */
#include "opdef.h"
#include "nop.h"
#include "poll.h"
#include "rw.h"

/* clang-format off */
const struct nw_opdef nw_opdefs[NW_OP_LAST] = {
	[IORING_OP_NOP] = {
		.name		= "NOP",
		.iopoll		= 1,
		.always_inline	= 1,
		.fast		= nw_nop_fast,
		.prep		= nw_nop_prep,
		.issue		= nw_nop_issue,
	},
	[IORING_OP_READV] = {
		.name		= "READV",
		.iopoll		= 1,
		.needs_file	= 1,
		.pollin		= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_readv_prep,
		.issue		= nw_rw_issue,
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_WRITEV] = {
		.name		= "WRITEV",
		.iopoll		= 1,
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_writev_prep,
		.issue		= nw_rw_issue,
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_POLL_ADD] = {
		.name		= "POLL_ADD",
		.needs_file	= 1,
		.unbound_nonreg_file = 1,
		.prep		= nw_poll_add_prep,
		.issue		= nw_poll_add_issue,
	},
	[IORING_OP_POLL_REMOVE] = {
		.name		= "POLL_REMOVE",
		.prep		= nw_poll_remove_prep,
		.issue		= nw_poll_remove_issue,
	},
	[IORING_OP_READ] = {
		.name		= "READ",
		.iopoll		= 1,
		.needs_file	= 1,
		.pollin		= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_read_prep,
		.issue		= nw_rw_issue,
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_WRITE] = {
		.name		= "WRITE",
		.iopoll		= 1,
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_write_prep,
		.issue		= nw_rw_issue,
		.cleanup	= nw_rw_cleanup,
	},
};
/* clang-format on */

bool nw_op_always_inline[256];
int (*nw_op_fast[256])(const struct io_uring_sqe *sqe, int32_t *res);

/* Derive the fast-path lookup from the table, once, at load time. */
__attribute__((constructor)) static void opdef_init(void)
{
	for (unsigned int op = 0; op < NW_OP_LAST; op++) {
		if (!nw_opdefs[op].always_inline || !nw_opdefs[op].issue)
			continue;
		nw_op_always_inline[op] = true;
		nw_op_fast[op] = nw_opdefs[op].fast;
	}
}
