/* SPDX-License-Identifier: MIT */
/*
 * The periodic re-check of the watches of fds with requests parked (see
 * poll.c): a program may close an fd without telling the engine and get
 * the number back for another file, which epoll does not watch. The
 * reactor's harvest calls this every NW_POLL_VERIFY_NS while something is
 * parked, each fd backing off to NW_VERIFY_MAX_NS; what was parked on a
 * stale watch is reissued, a bounded delay instead of a hang.
 *
 * And the lazy parks (poll.c's park_lazy). A DEFER_TASKRUN ring posts
 * only in GETEVENTS, where the kernel's task work reissues what its fds'
 * wake-ups queued. A read or write (READ, WRITE and their vectored and
 * fixed forms: rw.c's prep sets lazy_ok; an attempt without a wake-up
 * only says EAGAIN again) that its submit parks on a pipe or socket never
 * watched yet parks unwatched: no EPOLL_CTL_ADD, no epoll
 * wake-up inside the writer's system call, no harvest. The next
 * GETEVENTS (wait.c's defer_look, any driver's nw_reactor_run) tries it
 * again through nw_poll_take_lazy, in the order they parked, and one
 * still not ready parks watched then, as before, so an fd costs at most
 * one attempt more before its watch. Not while the ring's readiness is
 * observed (a registered eventfd, TASKRUN_FLAG, a poll of its fd: the
 * reactor thread must see the fd become ready), and never off the submit
 * (a worker, a continuation run in the wait). An observer that comes
 * later has what is lazy watched (nw_poll_watch_lazy): the eventfd's
 * registration under poll_lock, a poll of the ring's fd after
 * ring_activate's membarrier, which the park's nr_parked store, made
 * before it looks for observers, pairs with. The one thing it changes:
 * such requests that all became ready before one GETEVENTS complete in
 * the order they parked; the kernel's follow the order of the wake-ups,
 * which nothing but a watch could tell.
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

		/*
		 * A park reads no clock: its first check is due one interval
		 * after the first pass that finds it (50 to 150 ms on).
		 */
		if (!pfd->verify_due_ns) {
			pfd->verify_due_ns = now + pfd->verify_ivl_ns;
			continue;
		}
		if (now < pfd->verify_due_ns || (pfd->lazy && !pfd->watched))
			continue; /* not due, or not watched: nothing to check */
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

/*
 * Lazily parked requests, on whichever fd they wait now (a close may have
 * moved them to a dup), onto *ready with the snapshot of a wake-up: the
 * kernel's task work would reissue them now had their fds woken them, in
 * the order they parked. Takes poll_lock.
 */
unsigned int nw_poll_take_lazy(struct nw_ring *ring, struct nw_list *ready)
{
	struct nw_list *bpos, *btmp, *pos, *tmp;
	unsigned int n = 0;

	pthread_mutex_lock(&ring->poll_lock);
	nw_list_for_each_safe(bpos, btmp, &ring->busy_pfds) {
		struct nw_pollfd *pfd =
			nw_list_entry(bpos, struct nw_pollfd, busy_node);

		if (!ring->nr_lazy)
			break;
		pfd->lazy = false;
		nw_list_for_each_safe(pos, tmp, &pfd->parked) {
			struct nw_req *req =
				nw_list_entry(pos, struct nw_req, poll_node);

			if (!req->poll_lazy)
				continue;
			nw_poll_unpark(ring, req);
			nw_pollfd_snap(pfd, req);
			nw_poll_to_ready(ready, req);
			n++;
		}
	}
	pthread_mutex_unlock(&ring->poll_lock);
	return n;
}

/*
 * The ring's readiness became observed (a registered eventfd, a poll of
 * its fd): the fds of lazily parked requests are watched now, so that the
 * reactor thread sees them become ready (an fd ready already is reported
 * by the watch's first harvest). Takes poll_lock.
 */
void nw_poll_watch_lazy(struct nw_ring *ring)
{
	struct nw_list *bpos, *btmp, *pos, *tmp;

	pthread_mutex_lock(&ring->poll_lock);
	nw_list_for_each_safe(bpos, btmp, &ring->busy_pfds) {
		struct nw_pollfd *pfd =
			nw_list_entry(bpos, struct nw_pollfd, busy_node);
		unsigned int lazy = 0;

		if (!ring->nr_lazy)
			break;
		nw_list_for_each_safe(pos, tmp, &pfd->parked)
			lazy += nw_list_entry(pos, struct nw_req, poll_node)
					->poll_lazy;
		/* Left lazy if refused: the next GETEVENTS tries them. */
		if (!lazy || nw_pollfd_watch(ring, pfd))
			continue;
		pfd->lazy = false;
		nw_list_for_each_safe(pos, tmp, &pfd->parked)
			nw_list_entry(pos, struct nw_req, poll_node)
				->poll_lazy = false;
		__atomic_store_n(&ring->nr_lazy, ring->nr_lazy - lazy,
				 __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&ring->poll_lock);
}
