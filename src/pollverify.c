/* SPDX-License-Identifier: MIT */
/*
 * The periodic re-check of the watches of fds with requests parked (see
 * poll.c): a program may close an fd without telling the engine and get
 * the number back for another file, which epoll does not watch. The
 * reactor's harvest calls this every NW_POLL_VERIFY_NS while something is
 * parked, each fd backing off to NW_VERIFY_MAX_NS; what was parked on a
 * stale watch is reissued, a bounded delay instead of a hang.
 * Locks: under poll_lock.
 */
#include "poll-int.h"
#include "ringpoll.h"
#include "fdcache.h"

#define NW_VERIFY_NS	 NW_POLL_VERIFY_NS
#define NW_VERIFY_MAX_NS 5000000000LL

bool nw_poll_verify_due(struct nw_ring *ring)
{
	return ring->nr_parked && nw_poll_now_ns() >= ring->verify_due_ns;
}

/*
 * Re-check the watches of fds that have requests parked (see NW_VERIFY_NS).
 * A stale watch (the fd number now names another file, or none) is
 * replaced, and the reads and writes parked on it go to *ready to be
 * reissued. Called with poll_lock held.
 */
void nw_poll_verify(struct nw_ring *ring, struct nw_list *ready)
{
	long long now = nw_poll_now_ns();
	struct nw_list *bpos, *btmp;

	ring->verify_due_ns = now + NW_VERIFY_NS;
	nw_list_for_each_safe(bpos, btmp, &ring->busy_pfds) {
		struct nw_pollfd *pfd =
			nw_list_entry(bpos, struct nw_pollfd, busy_node);
		struct nw_list *pos, *tmp;
		int r;

		if (now < pfd->verify_due_ns)
			continue;
		if (pfd->verify_ivl_ns < NW_VERIFY_MAX_NS)
			pfd->verify_ivl_ns *= 2;
		pfd->verify_due_ns = now + pfd->verify_ivl_ns;
		if (pfd->target) {
			pfd->target->poll_ops->verify(ring, pfd, ready);
			continue;
		}
		r = nw_loop_add(&ring->loop, pfd->fd, &pfd->io);
		if (r == 1)
			continue; /* still the file we watch */
		nw_fdcache_reset(pfd);
		nw_list_for_each_safe(pos, tmp, &pfd->parked) {
			struct nw_req *req =
				nw_list_entry(pos, struct nw_req, poll_node);

			if (req->flags & (NW_REQ_F_POLL_ADD | NW_REQ_F_MSHOT))
				continue; /* the new watch will wake it */
			nw_poll_unpark(ring, req);
			nw_poll_to_ready(ready, req);
		}
	}
}
