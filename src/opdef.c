/* SPDX-License-Identifier: MIT */
/*
 * The opcode table. An opcode without .issue is not implemented: its SQEs
 * complete with -EINVAL, as on a kernel that predates it, and the probe
 * leaves it unsupported. Kernel counterpart: io_uring/opdef.c.
 */
#include "opdef.h"
#include "nop.h"

/* clang-format off */
const struct nw_opdef nw_opdefs[NW_OP_LAST] = {
	[IORING_OP_NOP] = {
		.name		= "NOP",
		.always_inline	= 1,
		.fast		= nw_nop_fast,
		.prep		= nw_nop_prep,
		.issue		= nw_nop_issue,
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
