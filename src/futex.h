/* SPDX-License-Identifier: MIT */
/* IORING_OP_FUTEX_WAIT, FUTEX_WAKE, FUTEX_WAITV (futex.c). */
#ifndef NW_FUTEX_H
#define NW_FUTEX_H

#include "internal.h"

int nw_futex_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_futexv_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_futex_wait_issue(struct nw_req *req, unsigned int issue_flags);
int nw_futex_wake_issue(struct nw_req *req, unsigned int issue_flags);
void nw_futex_cleanup(struct nw_req *req);

#endif
