/* SPDX-License-Identifier: MIT */
/* IORING_OP_ASYNC_CANCEL and cancelling one request (cancel.c). */
#ifndef NW_CANCEL_H
#define NW_CANCEL_H

#include "internal.h"

int nw_cancel_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_cancel_issue(struct nw_req *req, unsigned int issue_flags);
/*
 * Cancel target if it is still the request with seq: 0 (it is put on *out,
 * failed with -ECANCELED, for the caller to complete), -EALREADY (running
 * in a worker), or -ENOENT.
 */
int nw_cancel_req(struct nw_ring *ring, struct nw_req *target, uint64_t seq,
		  struct nw_list *out);

#endif
