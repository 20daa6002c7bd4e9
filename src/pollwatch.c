/* SPDX-License-Identifier: MIT */
/*
 * What a watched fd's registration carries besides the fd: the watch
 * generation that tells a POLL_ADD parked after an event was collected
 * from one parked before (nw_poll_stamp), and the coarse clock of the
 * watches' re-checks (pollverify.c). Leaves of poll.c: they call only
 * loop.c. Locks: under poll_lock.
 */
#include <time.h>
#include "poll-int.h"

/*
 * The coarse clock (the last tick's time, no counter read): a re-check due
 * 50 ms on needs no better, and every park of an fd's first request reads
 * it, which the precise clock made cost about as much as the park itself
 * in a VM (pipes: about 60 ns a read). Every reader of the due times uses it.
 */
long long nw_poll_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * A harvest collects its events (epoll_wait) before it takes poll_lock to
 * deliver them, and may be held up in between (a loaded machine). An event
 * collected before a POLL_ADD parks, for data that came and was read
 * before the POLL_ADD looked, must not wake it: the kernel's wake-up
 * finds only the wait queue entries there when it runs, and the wake_ev
 * the event would leave is reported even when nothing is ready (test
 * poll-stale-edge). So each park of a POLL_ADD that found its fd not
 * ready writes a new generation into the fd's watch (EPOLL_CTL_MOD: the
 * kernel copies the data into each event as it is collected) and keeps
 * it; pollfd_event skips it for an event of an older one
 * (nw_poll_parked_after). An fd that became ready since the look is
 * reported by the MOD itself, as an event of the new generation.
 *
 * Not for one found ready (a multishot's first event is queued here: the
 * MOD would report it a second time), nor a ring's fd. Such a multishot
 * may still take an event collected before its arm, a second CQE for what
 * its first one reported: a known gap.
 *
 * Generations wrap at 16 bits: every 8192 parks the stamps of those still
 * parked are brought within 8192 of the watch's, so that the comparison
 * never wraps. Under poll_lock.
 */
#define NW_GEN_CLAMP 0x2000
void nw_poll_stamp(struct nw_ring *ring, struct nw_pollfd *pfd,
		   struct nw_req *req, bool ready)
{
	struct nw_list *pos;

	nw_poll_ring_of(req)->park_gen = pfd->io.gen;
	if (ready || pfd->target)
		return;
	pfd->io.gen++;
	if (nw_loop_mod(&ring->loop, pfd->fd, &pfd->io)) {
		pfd->io.gen--; /* the watch keeps the old one */
		return;
	}
	nw_poll_ring_of(req)->park_gen = pfd->io.gen;
	if (pfd->io.gen % NW_GEN_CLAMP)
		return;
	for (pos = pfd->parked.next; pos != &pfd->parked; pos = pos->next) {
		struct nw_req *r = nw_list_entry(pos, struct nw_req, poll_node);
		unsigned short *g = &nw_poll_ring_of(r)->park_gen;

		if ((r->flags & NW_REQ_F_POLL_ADD) &&
		    (uint16_t)(pfd->io.gen - *g) > NW_GEN_CLAMP)
			*g = (unsigned short)(pfd->io.gen - NW_GEN_CLAMP);
	}
}
