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

/*
 * An opcode family whose requests wait in a list of its own, as the
 * kernel's futex_list and waitid_list (futex.c, waitid.c), registered once
 * by its first prep: the ops floor reaches the cancel through these
 * pointers. cancel() cancels the requests of ring that match() accepts
 * (the first, or all), each completing -ECANCELED later, and returns how
 * many; owns() says req waits in that list now, so that the worker pool's
 * search leaves it to cancel(). Not asked for CANCEL_FD (they have no
 * file). A match counts as the kernel's io_futex_cancel and
 * io_waitid_cancel return it: 1 without ALL (not 0 as a poll's), and a
 * list counts once in a pass with CANCEL_ALL.
 */
struct nw_cancel_list {
	int (*cancel)(struct nw_ring *ring,
		      bool (*match)(struct nw_req *req, void *arg), void *arg,
		      bool all);
	bool (*owns)(struct nw_req *req);
};
void nw_cancel_list_add(const struct nw_cancel_list *list);

#endif
