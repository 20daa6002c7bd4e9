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
/*
 * Ring exit (the program let go of the ring): cancel every request of it
 * still in flight, interrupting those running in a worker. Any thread.
 */
void nw_cancel_ring_exit(struct nw_ring *ring);
/*
 * IORING_REGISTER_SYNC_CANCEL (register.c's table; arg: the reg struct).
 * Called under reg_lock; it lets go of it while it waits.
 */
int nw_sync_cancel(struct nw_ring *ring, void *arg, unsigned int nr_args);

#endif
