/* SPDX-License-Identifier: MIT */
/* IORING_OP_EPOLL_CTL, IORING_OP_EPOLL_WAIT (epoll.c). */
#ifndef NW_EPOLL_H
#define NW_EPOLL_H

#include "internal.h"

int nw_epctl_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_epctl_issue(struct nw_req *req, unsigned int issue_flags);
int nw_epwait_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_epwait_issue(struct nw_req *req, unsigned int issue_flags);

#endif
