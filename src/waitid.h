/* SPDX-License-Identifier: MIT */
/* IORING_OP_WAITID (waitid.c). */
#ifndef NW_WAITID_H
#define NW_WAITID_H

#include "internal.h"

int nw_waitid_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_waitid_issue(struct nw_req *req, unsigned int issue_flags);
void nw_waitid_cleanup(struct nw_req *req);

#endif
