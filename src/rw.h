/* SPDX-License-Identifier: MIT */
/* READ, WRITE, READV, WRITEV, the _FIXED and V_FIXED ones, READ_MULTISHOT. */
#ifndef NW_RW_H
#define NW_RW_H

#include "internal.h"

int nw_read_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_readv_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_write_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_writev_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_read_fixed_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_write_fixed_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_rw_issue(struct nw_req *req, unsigned int issue_flags);
void nw_rw_cleanup(struct nw_req *req);
int nw_readv_fixed_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_writev_fixed_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
/* IORING_OP_READ_MULTISHOT: a multishot read into provided buffers. */
int nw_read_mshot_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_read_mshot_issue(struct nw_req *req, unsigned int issue_flags);

#endif
