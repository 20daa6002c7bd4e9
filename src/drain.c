/* SPDX-License-Identifier: MIT */
/*
 * IOSQE_IO_DRAIN: a drained request starts only once every request
 * submitted before it has completed, and the requests submitted after it
 * wait until it has completed.
 *
 * As the kernel does it since 6.16 (io_uring.c io_init_drain, io_drain_req,
 * io_queue_deferred): while draining is on, every new request (or chain)
 * goes on the ring's defer list, in submission order. The list moves only
 * when each request still alive is on it (nr_reqs == nr_drained): then its
 * first entry goes, and the entries after it while none of them is drained
 * (a drained one waits for everything before it again). Draining turns off
 * when a request that is not drained finds the list empty. A DRAIN inside
 * a link drains the whole link and the request or link after it.
 *
 * Requests on the list are linked through tw_next and keep their chains;
 * a chain counts as all its requests. ASYNC_CANCEL and SYNC_CANCEL do not
 * look at the list, as the kernel's do not: a deferred request is only
 * found once it runs. Everything here runs on the submit side.
 */
#include <errno.h>
#include "drain.h"
#include "complete.h"

static unsigned int chain_len(const struct nw_req *req)
{
	unsigned int n = 0;

	for (; req; req = req->link)
		n++;
	return n;
}

int nw_drain_init(struct nw_ring *ring, struct nw_req *req)
{
	if (req->sqe_flags & IOSQE_IO_DRAIN) {
		if (ring->drain_disabled)
			return -EOPNOTSUPP;
		ring->drain_active = true;
		/* Inside a link: the link drains, and whatever comes next. */
		if (ring->link_head) {
			ring->link_head->sqe_flags |= IOSQE_IO_DRAIN;
			ring->drain_next = true;
		}
	}
	if (ring->drain_next && !ring->link_head) {
		ring->drain_next = false;
		ring->drain_active = true;
		req->sqe_flags |= IOSQE_IO_DRAIN;
	}
	return 0;
}

/* Issue the entries that may go now; true if any went. */
static bool drain_release(struct nw_ring *ring)
{
	bool seen = false, first = true, moved = false;

	if (ring->in_drain)
		return false;
	ring->in_drain = true;
	while (ring->defer_first) {
		struct nw_req *req = ring->defer_first;

		seen |= !!(req->sqe_flags & IOSQE_IO_DRAIN);
		if ((seen || first) && ring->nr_reqs != ring->nr_drained)
			break;
		ring->defer_first = req->tw_next;
		if (!ring->defer_first)
			ring->defer_last = NULL;
		req->tw_next = NULL;
		ring->nr_drained -= chain_len(req);
		first = false;
		moved = true;
		req->tw_func(req, true); /* submit.c issues the chain */
	}
	ring->in_drain = false;
	return moved;
}

void nw_drain_flush(struct nw_ring *ring)
{
	/* What the released requests completed inline is published too. */
	if (drain_release(ring))
		nw_cq_flush_batch(ring);
}

void nw_drain_req(struct nw_req *req)
{
	struct nw_ring *ring = req->ring;
	bool drain = req->sqe_flags & IOSQE_IO_DRAIN;

	req->tw_next = NULL;
	if (ring->defer_last)
		ring->defer_last->tw_next = req;
	else
		ring->defer_first = req;
	ring->defer_last = req;
	ring->nr_drained += chain_len(req);
	drain_release(ring);
	if (!drain && !ring->defer_first)
		ring->drain_active = false;
}
