/* SPDX-License-Identifier: MIT */
/* IORING_OP_MSG_RING (msgring.c). */
#ifndef NW_MSGRING_H
#define NW_MSGRING_H

#include "internal.h"

int nw_msg_ring_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_msg_ring_issue(struct nw_req *req, unsigned int issue_flags);

#endif
