/* SPDX-License-Identifier: MIT */
/* SPLICE and TEE (splice.c). */
#ifndef NW_SPLICE_H
#define NW_SPLICE_H

#include "internal.h"

int nw_splice_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_tee_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
/* Both ops: nonblocking and parked when both ends are pipes, else a worker. */
int nw_splice_issue(struct nw_req *req, unsigned int issue_flags);
/* Drop the fixed input slot's reference (SPLICE_F_FD_IN_FIXED). */
void nw_splice_cleanup(struct nw_req *req);

#endif
