/* SPDX-License-Identifier: MIT */
/* TIMEOUT, TIMEOUT_REMOVE, LINK_TIMEOUT and the ring's timer (timeout.c). */
#ifndef NW_TIMEOUT_H
#define NW_TIMEOUT_H

#include "internal.h"

int nw_timeout_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_timeout_issue(struct nw_req *req, unsigned int issue_flags);
int nw_timeout_remove_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_timeout_remove_issue(struct nw_req *req, unsigned int issue_flags);
int nw_link_timeout_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_link_timeout_issue(struct nw_req *req, unsigned int issue_flags);

/* Complete count-based timeouts whose count was reached. Submit side. */
void nw_timeout_flush_count(struct nw_ring *ring);
/* req is in flight with lt (spliced out of its chain) guarding it: arm lt. */
void nw_link_timeout_arm(struct nw_req *req, struct nw_req *lt);
/* req (a LINK_TIMEOUT's target) finished: its timeout is cancelled. */
void nw_link_timeout_disarm(struct nw_req *req);
/* Disarm timeouts matching onto *out, failed -ECANCELED: count/-ENOENT. */
int nw_timeout_cancel(struct nw_ring *ring,
		      bool (*match)(struct nw_req *, void *), void *arg,
		      bool all, struct nw_list *out);

#endif
