/* SPDX-License-Identifier: MIT */
/*
 * What poll.c, pollremove.c, pollverify.c, pollwatch.c and ringpoll.c
 * share: private to them, and only they include this header. ringpoll.c
 * parks a POLL_ADD of a ring's fd with poll.c's machinery (park, unpark, the pfd's watch callback, multishot
 * CQEs); poll.c calls back into ringpoll.c only through the target ring's
 * poll_ops (ringpoll.h).
 */
#ifndef NW_POLL_INT_H
#define NW_POLL_INT_H

#include "poll.h"

/*
 * A POLL_ADD's own state: the ring whose fd it is parked on, if any, and
 * its place in ring->poll_hash while parked (POLL_REMOVE finds it there).
 */
struct nw_poll_ring {
	struct nw_ring *target;
	unsigned int wake_res;	 /* woken by the target's CQ post: POLLIN */
	unsigned int evfd_sig;	 /* ring->evfd_signals when it was armed */
	unsigned int wake_ev;	 /* what the wake-up said (its mask if gone) */
	unsigned short park_gen; /* its pfd's io.gen when it parked */
	struct nw_list hash_node;
};
_Static_assert(sizeof(struct nw_poll_ring) <= NW_REQ_CMD_SIZE, "size");
static inline struct nw_poll_ring *nw_poll_ring_of(struct nw_req *req)
{
	return nw_req_cmd(req, struct nw_poll_ring);
}

/* Park req on pfd until mask is ready. Called with poll_lock held. */
void nw_poll_park(struct nw_ring *ring, struct nw_pollfd *pfd,
		  struct nw_req *req, unsigned int mask);
/* Take a parked req off its fd's list. Called with poll_lock held. */
void nw_poll_unpark(struct nw_ring *ring, struct nw_req *req);
/* A request leaves its fd for the harvest's ready list (poll_node). */
void nw_poll_to_ready(struct nw_list *ready, struct nw_req *req);
/* The watch callback of a pfd (pfd->io.cb), the reactor's harvest. */
void nw_pollfd_fire(struct nw_io *io, unsigned int events,
		    struct nw_harvest *h);
/* The POLL_ADD hash bucket of user_data (ring->poll_hash). */
struct nw_list *nw_poll_bucket(struct nw_ring *ring, uint64_t user_data);
/* A POLL_ADD/POLL_REMOVE SQE's event mask (io_poll_parse_events). */
unsigned int nw_poll_parse_events(const struct io_uring_sqe *sqe);
/* Watch pfd's fd if not yet (epoll). 0 or -errno. Under poll_lock. */
int nw_pollfd_watch(struct nw_ring *ring, struct nw_pollfd *pfd);
/* An edge woke req on pfd: the snapshot its reissue uses. poll_lock. */
void nw_pollfd_snap(struct nw_pollfd *pfd, struct nw_req *req);
/* CLOCK_MONOTONIC_COARSE in ns (the watches' re-check, pollverify.c). */
long long nw_poll_now_ns(void);
/*
 * A POLL_ADD parks on pfd (found ready or not): stamp it with the watch
 * generation, a new one when not ready (pollwatch.c). Under poll_lock.
 */
void nw_poll_stamp(struct nw_ring *ring, struct nw_pollfd *pfd,
		   struct nw_req *req, bool ready);
/*
 * Was req parked after the event of watch generation gen was collected
 * (nw_poll_stamp)? Then the event is not its wake-up.
 */
static inline bool nw_poll_parked_after(const struct nw_pollfd *pfd,
					struct nw_req *req, unsigned short gen)
{
	return (req->flags & NW_REQ_F_POLL_ADD) && !pfd->target &&
	       (int16_t)(uint16_t)(nw_poll_ring_of(req)->park_gen - gen) > 0;
}
/* Post a multishot event CQE (F_MORE) on the submit side, if still so. */
void nw_poll_mshot_post(struct nw_req *req, unsigned int ready);

#endif
