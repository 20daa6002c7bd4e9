/* SPDX-License-Identifier: MIT */
/*
 * Completion: requests finish here, CQEs reach the CQ ring, the overflow
 * list keeps what does not fit (IORING_FEAT_NODROP), and the registered
 * eventfd and any waiters hear about new CQEs.
 *
 * Inline completions of a submit batch are collected in ring->batch and
 * written with one CQ tail publish per batch (the kernel's
 * io_submit_flush_completions). The tail is store-released after the CQEs
 * are written; the program's cq.head is load-acquired before a slot is
 * reused. Only the submit side posts CQEs (the holder of submit_lock, or
 * the single issuer of a SINGLE_ISSUER|DEFER_TASKRUN ring: lockless_cq);
 * workers and the reactor hand finished requests over as task work.
 * Semantics: kernel io_uring.c (io_cqring_event_overflow, io_fill_cqe_req,
 * __io_commit_cqring_flush), eventfd.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include "complete.h"
#include "opdef.h"
#include "ringpoll.h"
#include "rsrc.h"
#include "timeout.h"
#include "drain.h"
#include "waitq.h"
#include "creds.h"

#define NW_REQ_ALLOC_BATCH 32

#if defined(__SANITIZE_THREAD__)
char nw_tsan_ring_tag;
#endif

/* The request cache's allocations, listed for the ring's teardown. */
struct req_chunk {
	struct req_chunk *next;
	struct nw_req reqs[NW_REQ_ALLOC_BATCH];
};

/* Refill the request cache in bulk: no per-request malloc. */
static struct nw_req *req_refill(struct nw_ring *ring)
{
	struct req_chunk *c = calloc(1, sizeof(*c));
	struct nw_req *reqs;

	if (!c)
		return NULL;
	c->next = ring->req_chunks;
	ring->req_chunks = c;
	reqs = c->reqs;
	for (int i = 1; i < NW_REQ_ALLOC_BATCH - 1; i++)
		reqs[i].link = &reqs[i + 1];
	reqs[NW_REQ_ALLOC_BATCH - 1].link = ring->req_cache;
	ring->req_cache = &reqs[1];
	return &reqs[0];
}

/* True when req is one of the chunks' (not an aux CQE's own calloc). */
static bool req_in_chunks(struct nw_ring *ring, struct nw_req *req)
{
	for (struct req_chunk *c = ring->req_chunks; c; c = c->next)
		if (req >= c->reqs && req < c->reqs + NW_REQ_ALLOC_BATCH)
			return true;
	return false;
}

void nw_req_cache_free(struct nw_ring *ring)
{
	struct nw_req *req, *next;
	struct req_chunk *c;

	for (req = ring->req_cache; req; req = next) {
		next = req->link;
		if (!req_in_chunks(ring, req))
			free(req);
	}
	ring->req_cache = NULL;
	while ((c = ring->req_chunks)) {
		ring->req_chunks = c->next;
		free(c);
	}
}

/* Called with the submit side held (submit_lock or the single issuer). */
struct nw_req *nw_req_alloc(struct nw_ring *ring)
{
	struct nw_req *req = ring->req_cache;

	if (likely(req)) {
		ring->req_cache = req->link;
		return req;
	}
	return req_refill(ring);
}

void nw_req_free(struct nw_ring *ring, struct nw_req *req)
{
	if (unlikely(req->async)) {
		nw_cold_defs[req->opcode].cleanup(req);
		req->async = NULL;
	}
	if (unlikely(req->flags & NW_REQ_F_FIXED_DONE))
		nw_rsrc_file_put(req);
	if (unlikely(req->flags & NW_REQ_F_BUF_NODE))
		nw_rsrc_buf_put(req);
	if (unlikely(req->tag_nodes))
		nw_rsrc_post_tags(req);
	if (unlikely(req->flags & NW_REQ_F_CREDS))
		nw_creds_put(req->creds);
	if (unlikely(nw_traced(ring)))
		nw_trace_free(req);
	if (likely(req->flags & NW_REQ_F_COUNTED)) {
		req->flags &= ~NW_REQ_F_COUNTED;
		ring->nr_reqs--;
	}
	req->link = ring->req_cache;
	ring->req_cache = req;
}

/*
 * Mark a request failed: it breaks its (non-hard) link, and if it asked for
 * CQE_SKIP_SUCCESS its own CQE is posted after all while the rest of the
 * chain's CQEs are suppressed (kernel req_set_fail).
 */
void nw_req_set_fail(struct nw_req *req, int res)
{
	req->res = res;
	req->flags |= NW_REQ_F_FAIL;
	if (req->flags & NW_REQ_F_CQE_SKIP) {
		req->flags &= ~NW_REQ_F_CQE_SKIP;
		req->flags |= NW_REQ_F_SKIP_LINK_CQES;
	}
}

/*
 * The lock word of a ring shared across fork (docs/fork.md), in the ring
 * memory both processes map: 0 when free, else the holder's pid, with
 * XL_WAITERS when someone sleeps on it (a shared futex). A holder that
 * died holding it (a child killed mid-submit) is found by its pid after
 * a sleep times out, and the word taken from it.
 */
#define XL_WAITERS 0x80000000U

static unsigned int *xlock_word(struct nw_ring *ring)
{
	return (unsigned int *)((char *)ring->rings_map + NW_SQ_OFF_XLOCK);
}

static void xlock_take(struct nw_ring *ring)
{
	unsigned int *w = xlock_word(ring), me = (unsigned int)nw_getpid();
	unsigned int cur, want = me;

	for (;;) {
		struct timespec ts = {0, 10000000};
		pid_t holder;

		cur = 0;
		if (__atomic_compare_exchange_n(w, &cur, want, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		want = me | XL_WAITERS; /* others may sleep: wake them */
		if (!(cur & XL_WAITERS) &&
		    !__atomic_compare_exchange_n(w, &cur, cur | XL_WAITERS,
						 false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			continue;
		if (syscall(SYS_futex, w, FUTEX_WAIT, cur | XL_WAITERS, &ts,
			    NULL, 0) == 0 ||
		    errno != ETIMEDOUT)
			continue;
		holder = (pid_t)(cur & ~XL_WAITERS);
		if (holder != (pid_t)me && kill(holder, 0) && errno == ESRCH) {
			cur |= XL_WAITERS;
			__atomic_compare_exchange_n(w, &cur, 0, false,
						    __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
		}
	}
}

static void xlock_drop(struct nw_ring *ring)
{
	unsigned int *w = xlock_word(ring);

	if (__atomic_exchange_n(w, 0, __ATOMIC_RELEASE) & XL_WAITERS)
		syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/*
 * A hold of the submit side of a forked ring: the other process may have
 * consumed SQEs and posted CQEs since ours, so the heads start from the
 * shared ring, and everything is published before the lock goes.
 */
static void xside_enter(struct nw_ring *ring)
{
	xlock_take(ring);
	ring->xheld = true;
	ring->cached_sq_head = load_acquire(ring->sq_head);
	ring->cached_cq_tail = load_acquire(ring->cq_tail);
}

static void xside_leave(struct nw_ring *ring)
{
	ring->xheld = false;
	if (ring->nr_batch || ring->cached_cq_tail != READ_ONCE(*ring->cq_tail))
		nw_cq_flush_batch(ring);
	store_release(ring->sq_head, ring->cached_sq_head);
	xlock_drop(ring);
}

void nw_submit_lock(struct nw_ring *ring)
{
	if (ring->lockless_cq)
		return;
	pthread_mutex_lock(&ring->submit_lock);
	if (unlikely(__atomic_load_n(&ring->forked, __ATOMIC_RELAXED)))
		xside_enter(ring);
}

void nw_submit_unlock(struct nw_ring *ring)
{
	if (ring->lockless_cq)
		return;
	if (unlikely(ring->xheld))
		xside_leave(ring);
	pthread_mutex_unlock(&ring->submit_lock);
}

/*
 * Does c fit in the space left (taken off it if so)? On a CQE_MIXED ring
 * a 32-byte CQE takes two slots and never wraps: at the last slot a
 * padding CQE (IORING_CQE_F_SKIP) fills it first, room or not for the
 * CQE itself, as the kernel's io_get_cqe_overflow does.
 */
static bool cq_fits(struct nw_ring *ring, const struct nw_cqe *c,
		    unsigned int *space)
{
	unsigned int need = 1;

	if (unlikely(ring->cqe_mixed) && (c->flags & IORING_CQE_F_32)) {
		unsigned int slot = ring->cached_cq_tail & ring->cq_mask;

		if (slot == ring->cq_mask && *space) {
			struct io_uring_cqe *pad =
				(void *)(ring->cqes + ((size_t)slot << 4));

			pad->user_data = 0;
			pad->res = 0;
			pad->flags = IORING_CQE_F_SKIP;
			ring->cached_cq_tail++;
			--*space;
		}
		need = 2;
	}
	if (need > *space)
		return false;
	*space -= need;
	return true;
}

static void cq_write(struct nw_ring *ring, const struct nw_cqe *c)
{
	unsigned int slot = ring->cached_cq_tail++ & ring->cq_mask;
	struct io_uring_cqe *cqe =
		(void *)(ring->cqes + ((size_t)slot << ring->cqe_shift));

	if (unlikely(ring->cqe_mixed) && (c->flags & IORING_CQE_F_32)) {
		ring->cached_cq_tail++; /* cq_fits made it fit unwrapped */
		cqe->big_cqe[0] = c->big[0];
		cqe->big_cqe[1] = c->big[1];
	}
	cqe->user_data = c->user_data;
	cqe->res = c->res;
	cqe->flags = c->flags;
	if (ring->cqe_shift == 5) {
		cqe->big_cqe[0] = c->big[0];
		cqe->big_cqe[1] = c->big[1];
	}
}

/* Queue a CQE that does not fit; lose it only when memory is gone. */
static void cq_overflow(struct nw_ring *ring, const struct nw_cqe *c)
{
	struct nw_ovf *ovf = malloc(sizeof(*ovf));

	if (unlikely(!ovf)) {
		WRITE_ONCE(*ring->cq_overflow,
			   READ_ONCE(*ring->cq_overflow) + 1);
		ring->cq_dropped = true;
		return;
	}
	ring->nr_overflowed++;
	ovf->next = NULL;
	ovf->cqe = *c;
	/* A waiter looks at ovf_head unlocked (wait.c): a relaxed store. */
	WRITE_ONCE(*ring->ovf_tail, ovf);
	ring->ovf_tail = &ovf->next;
	__atomic_fetch_or(ring->sq_flags, IORING_SQ_CQ_OVERFLOW,
			  __ATOMIC_RELEASE);
}

/* Called on the submit side. */
static void cq_fill(struct nw_ring *ring, const struct nw_cqe *c,
		    unsigned int n)
{
	unsigned int space = ring->ovf_head ? 0 : nw_cq_space(ring);
	unsigned int i;

	for (i = 0; i < n && cq_fits(ring, &c[i], &space); i++)
		cq_write(ring, &c[i]);
	for (; i < n; i++)
		cq_overflow(ring, &c[i]);
}

/*
 * Polls of the ring's own fd hear of the new state: after a full fence
 * between the tail store (or the task work push: work) and the look at
 * ring_pollers (ringpoll.c, its poll_ops), paid only by rings that were
 * ever polled.
 */
static void ring_poll_wake(struct nw_ring *ring, bool work)
{
	if (likely(!__atomic_load_n(&ring->poll_activated, __ATOMIC_ACQUIRE)))
		return;
#if defined(__SANITIZE_THREAD__)
	{
		/* TSan does not model fences (-Wtsan): a seq_cst RMW instead */
		static int tsan_fence;

		__atomic_fetch_add(&tsan_fence, 0, __ATOMIC_SEQ_CST);
	}
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
	if (work)
		ring->poll_ops->work(ring);
	else
		ring->poll_ops->wake(ring);
}

/* Publish the tail and tell the eventfd. Called on the submit side. */
static void cq_commit(struct nw_ring *ring, bool from_worker)
{
	unsigned int tail = ring->cached_cq_tail;

	NW_TSAN_RELEASE();
	store_release(ring->cq_tail, tail);
	if (unlikely(ring->evfd >= 0) && tail != ring->evfd_last_tail &&
	    (!ring->evfd_async || from_worker) &&
	    !(READ_ONCE(*ring->cq_flags) & IORING_CQ_EVENTFD_DISABLED)) {
		ring->evfd_last_tail = tail;
		__atomic_add_fetch(&ring->evfd_signals, 1, __ATOMIC_RELAXED);
		eventfd_write(ring->evfd, 1);
	}
	ring_poll_wake(ring, false);
}

/*
 * Waiters announce themselves, then check the tail; posters publish, then
 * check for waiters. The RMW is a full barrier between the two sides.
 */
static void ring_wake(struct nw_ring *ring)
{
	if (unlikely(__atomic_fetch_add(&ring->waiters, 0, __ATOMIC_SEQ_CST)))
		nw_wake_waiters(ring);
}

static void cq_wake(struct nw_ring *ring)
{
	/* On lockless rings the only waiter is the poster itself. */
	if (!ring->lockless_cq)
		ring_wake(ring);
}

/* Write the inline batch: one lock, one tail publish, one wakeup. */
void nw_cq_flush_batch(struct nw_ring *ring)
{
	bool moved = ring->cached_cq_tail != READ_ONCE(*ring->cq_tail);

	ring->cq_room = 0;
	if (ring->nr_batch) {
		cq_fill(ring, ring->batch, ring->nr_batch);
		ring->nr_batch = 0;
		moved = true;
	}
	if (moved) {
		cq_commit(ring, ring->batch_async);
		ring->batch_async = false;
	}
	/* A timeout fired: every waiter wakes, whatever its min_complete. */
	if (unlikely(ring->batch_timeout)) {
		ring->batch_timeout = false;
		__atomic_add_fetch(&ring->tmo_seq, 1, __ATOMIC_RELEASE);
		moved = true;
	}
	if (moved)
		cq_wake(ring);
	/* Timeouts waiting for a count of CQEs look at the new tail. */
	if (unlikely(ring->nr_count_tmo) && !ring->in_tmo_flush) {
		ring->in_tmo_flush = true;
		nw_timeout_flush_count(ring);
		ring->in_tmo_flush = false;
		if (ring->nr_batch)
			nw_cq_flush_batch(ring);
	}
	/* Drained requests go once all before them are done (drain.c). */
	if (unlikely(ring->defer_first) && !ring->in_drain)
		nw_drain_flush(ring);
}

/*
 * Move overflowed CQEs into the ring as space allows; true if any moved.
 * Called on the submit side.
 */
bool nw_cq_flush_overflow(struct nw_ring *ring)
{
	unsigned int space;
	bool moved = false;

	if (!ring->ovf_head)
		return false;
	space = nw_cq_space(ring);
	while (ring->ovf_head && cq_fits(ring, &ring->ovf_head->cqe, &space)) {
		struct nw_ovf *ovf = ring->ovf_head;

		cq_write(ring, &ovf->cqe);
		WRITE_ONCE(ring->ovf_head, ovf->next);
		free(ovf);
		moved = true;
	}
	if (!ring->ovf_head) {
		ring->ovf_tail = &ring->ovf_head;
		__atomic_fetch_and(ring->sq_flags, ~IORING_SQ_CQ_OVERFLOW,
				   __ATOMIC_RELEASE);
	}
	if (moved) {
		cq_commit(ring, false);
		cq_wake(ring);
	}
	return moved;
}

/*
 * Whether one more CQE fits in the CQ now, behind the batch and with no
 * backlog (kernel io_fill_cqe_aux, which does not overflow). Submit side.
 */
bool nw_cq_has_room(struct nw_ring *ring)
{
	return !ring->ovf_head && nw_cq_space(ring) > ring->nr_batch;
}

/*
 * Would a CQE posted now overflow (the ring full counting the batch, or a
 * backlog)? Multishot ops stop rather than overflow, as the kernel's
 * io_req_post_cqe fails then. Called on the submit side.
 */
bool nw_cq_full(struct nw_ring *ring)
{
	return ring->ovf_head || nw_cq_space(ring) <= ring->nr_batch;
}

/* CQEs the program can see now (clamped like the kernel's). */
/* The batch path of nw_cq_add: no reserved room left. */
void nw_cq_add_batch(struct nw_ring *ring, const struct nw_req *req, int res)
{
	struct nw_cqe *c;

	if (unlikely(ring->nr_batch == NW_CQE_BATCH))
		nw_cq_flush_batch(ring);
	c = &ring->batch[ring->nr_batch++];
	c->user_data = req->user_data;
	c->res = res;
	c->flags = req->cflags;
	c->big[0] = req->big[0];
	c->big[1] = req->big[1];
}

/*
 * A failed request ends its chain: every follower completes with its own
 * init error if it had one, else -ECANCELED, and no CQE flags (kernel
 * io_fail_links, io_req_tw_fail_links): a SEND_ZC follower whose prep
 * armed its notification loses its F_MORE but still gets the notification
 * when freed. The followers' CQEs are suppressed when the failed request
 * had asked for CQE_SKIP_SUCCESS.
 */
static void fail_links(struct nw_ring *ring, struct nw_req *req)
{
	bool ignore = req->flags & NW_REQ_F_SKIP_LINK_CQES;
	struct nw_req *link = req->link, *next;

	req->link = NULL;
	for (; link; link = next) {
		int res =
			(link->flags & NW_REQ_F_FAIL) ? link->res : -ECANCELED;

		next = link->link;
		link->cflags = 0;
		nw_trace_path(link, NW_PATH_LINKED);
		if (!ignore)
			nw_cq_add(ring, link, res);
		nw_req_free(ring, link);
	}
}

/*
 * Complete a request inline: queue its CQE into the batch, settle its
 * chain, and free it. Returns the next request of the chain to issue, if
 * any. Called on the submit side.
 */
struct nw_req *nw_req_complete_inline(struct nw_req *req)
{
	struct nw_ring *ring = req->ring;
	struct nw_req *next = req->link;

	/* Tags of slots it emptied come first, as the kernel posts them. */
	if (unlikely(req->tag_nodes))
		nw_rsrc_post_tags(req);
	if (likely(!(req->flags & NW_REQ_F_CQE_SKIP)))
		nw_cq_add(ring, req, req->res);
	if (unlikely(req->flags & NW_REQ_F_TIMER))
		ring->batch_timeout = true;
	if (unlikely(__atomic_load_n(&req->ltimeout, __ATOMIC_RELAXED)))
		nw_link_timeout_disarm(req);
	if (unlikely(next)) {
		if ((req->flags & NW_REQ_F_FAIL) &&
		    !(req->sqe_flags & IOSQE_IO_HARDLINK)) {
			fail_links(ring, req);
			next = NULL;
		}
		req->link = NULL;
	}
	nw_req_free(ring, req);
	return next;
}

/*
 * Queue a request for the submit side, which runs its tw_func, like the
 * kernel's task_work. Lockless (DEFER_TASKRUN) rings run it only inside
 * enter; other rings run it now if the submit side is free, else its
 * holder does before letting go.
 */
void nw_req_task_queue(struct nw_req *req)
{
	struct nw_ring *ring = req->ring;
	struct nw_req *old = __atomic_load_n(&ring->tw_head, __ATOMIC_RELAXED);
	/* Read before the push: once pushed, req may be run and freed. */
	bool own_evfd = req->fd >= 0 && req->fd == READ_ONCE(ring->evfd_user);

	do {
		req->tw_next = old;
	} while (!__atomic_compare_exchange_n(&ring->tw_head, &old, req, true,
					      __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	if (!ring->lockless_cq) {
		nw_run_tw_trylock(ring);
		return;
	}
	/*
	 * Only the push onto an empty list wakes: the woken thread drains
	 * the whole list, this entry included. DEFER_TASKRUN: the eventfd
	 * hears of queued work, not of CQEs. Work for a request on that
	 * eventfd itself was woken by it: the kernel defers a signal from
	 * inside the eventfd's own wake-up (to RCU, after the program has
	 * read it, as a rule), so none is sent here.
	 */
	if (old)
		return;
	if (ring->flags & IORING_SETUP_TASKRUN_FLAG)
		__atomic_fetch_or(ring->sq_flags, IORING_SQ_TASKRUN,
				  __ATOMIC_RELEASE);
	if (READ_ONCE(ring->evfd) >= 0 && !own_evfd &&
	    !(READ_ONCE(*ring->cq_flags) & IORING_CQ_EVENTFD_DISABLED)) {
		__atomic_add_fetch(&ring->evfd_signals, 1, __ATOMIC_RELAXED);
		eventfd_write(READ_ONCE(ring->evfd), 1);
	}
	/*
	 * Queued work makes the ring's fd readable (ringpoll.c's mask, the
	 * kernel's io_has_work): the poll, select and epoll of the program
	 * hear of it (the kernel wakes the submitter, whose poll looks).
	 */
	ring_poll_wake(ring, true);
	ring_wake(ring);
}

/* The task work of a finished request: its CQE, then its chain goes on. */
static void complete_tw(struct nw_req *req, bool submit_side)
{
	if (req->flags & NW_REQ_F_WORKER)
		req->ring->batch_async = true;
	nw_req_finish(req, submit_side);
}

/*
 * Post an extra CQE (a tag, a MSG_RING message) to ring from any thread,
 * through a request of its own that joins the ring's cache afterwards.
 * Without memory: -ENOMEM, nothing posted (MSG_RING's sender gets it, as
 * from the kernel's io_msg_data_remote); lost says the CQE has no one to
 * report to and must be accounted as the kernel's dropped overflow CQE
 * (cq_overflow, -EBADR at the next wait), folded on the submit side.
 */
int nw_post_aux_async(struct nw_ring *ring, uint64_t user_data, int res,
		      uint32_t cflags, bool lost)
{
	struct nw_req *req = calloc(1, sizeof(*req));

	if (unlikely(!req)) {
		if (lost) {
			__atomic_fetch_add(&ring->aux_lost, 1,
					   __ATOMIC_SEQ_CST);
			ring_wake(ring);
		}
		return -ENOMEM;
	}
	req->ring = ring;
	req->opcode = IORING_OP_NOP;
	req->user_data = user_data;
	req->res = res;
	req->cflags = cflags;
	nw_req_complete_async(req);
	return 0;
}

/* The submit side takes the aux CQEs lost meanwhile into its counts. */
static void fold_aux_lost(struct nw_ring *ring)
{
	unsigned int n =
		__atomic_exchange_n(&ring->aux_lost, 0, __ATOMIC_ACQUIRE);

	if (!n)
		return;
	WRITE_ONCE(*ring->cq_overflow, READ_ONCE(*ring->cq_overflow) + n);
	ring->cq_dropped = true;
}

void nw_cq_take_lost(struct nw_ring *ring)
{
	nw_submit_lock(ring);
	fold_aux_lost(ring);
	nw_submit_unlock(ring);
}

/*
 * Hand a request finished off the submit side (by a worker, the reactor,
 * a canceller) to the submit side, which posts its CQE.
 */
void nw_req_complete_async(struct nw_req *req)
{
	req->tw_func = complete_tw;
	nw_req_task_queue(req);
}

void nw_run_tw(struct nw_ring *ring)
{
	struct nw_req *list, *fifo = NULL, *next;

	if (unlikely(__atomic_load_n(&ring->aux_lost, __ATOMIC_RELAXED)))
		fold_aux_lost(ring);
	if (!__atomic_load_n(&ring->tw_head, __ATOMIC_ACQUIRE))
		return;
	/* Cleared first: a push after the exchange sets it again. */
	if (unlikely(ring->lockless_cq &&
		     (ring->flags & IORING_SETUP_TASKRUN_FLAG)))
		__atomic_fetch_and(ring->sq_flags, ~IORING_SQ_TASKRUN,
				   __ATOMIC_SEQ_CST);
	list = __atomic_exchange_n(&ring->tw_head, NULL, __ATOMIC_ACQUIRE);
	for (; list; list = next) {
		next = list->tw_next;
		list->tw_next = fifo;
		fifo = list;
	}
	for (; fifo; fifo = next) {
		next = fifo->tw_next;
		fifo->tw_func(fifo, true);
	}
}

void nw_run_tw_trylock(struct nw_ring *ring)
{
	while (__atomic_load_n(&ring->tw_head, __ATOMIC_SEQ_CST)) {
		if (pthread_mutex_trylock(&ring->submit_lock))
			return; /* the holder runs it before unlocking */
		if (unlikely(__atomic_load_n(&ring->forked, __ATOMIC_RELAXED)))
			xside_enter(ring);
		nw_run_tw(ring);
		nw_cq_flush_batch(ring);
		nw_submit_unlock(ring);
	}
}

/*
 * Finish a request that was waiting (reactor, timer, cancel): inline on
 * the submit side, with its chain going on; as task work elsewhere.
 */
void nw_req_finish(struct nw_req *req, bool submit_side)
{
	struct nw_req *next;

	if (!submit_side) {
		nw_req_complete_async(req);
		return;
	}
	next = nw_req_complete_inline(req);
	if (next)
		next->tw_func(next, true); /* submit.c's issue of the chain */
}

void nw_cq_copy(struct nw_ring *ring, unsigned int head, unsigned int tail,
		void *buf, bool in)
{
	size_t cqe = (size_t)1 << ring->cqe_shift;
	char *cqes = nw_cq_entries(ring), *b = buf;

	for (unsigned int i = head; i != tail; i++) {
		char *slot = cqes + (i & ring->cq_mask) * cqe;

		if (in)
			memcpy(slot, b + (size_t)(i - head) * cqe, cqe);
		else
			memcpy(b + (size_t)(i - head) * cqe, slot, cqe);
	}
}
