/* SPDX-License-Identifier: MIT */
/* IORING_OP_NOP (nop.c). */
#ifndef NW_NOP_H
#define NW_NOP_H

#include "internal.h"

int nw_nop_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_nop_issue(struct nw_req *req, unsigned int issue_flags);

#endif
