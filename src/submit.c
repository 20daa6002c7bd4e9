/* SPDX-License-Identifier: MIT */
/*
 * Submission: consume SQEs from the SQ ring, initialise requests the way
 * the kernel's io_init_req does, assemble links, and issue through the
 * opcode table. Runs on the thread that called enter, under submit_lock
 * (not taken on SINGLE_ISSUER rings, where only one thread may submit).
 * Semantics: kernel io_uring.c io_submit_sqes / io_submit_sqe /
 * io_init_req / io_submit_fail_init (reference/kernel-semantics.md 1.1, 5).
 */
#include <errno.h>
#include <string.h>
#include "internal.h"
#include "complete.h"
#include "submit.h"
#include "opdef.h"
#include "poll.h"
#include "ringpoll.h"
#include "reactor.h"
#include "loop.h"
#include "timeout.h"
#include "rsrc.h"
#include "drain.h"
#include "trace.h"
#include "creds.h"

#define IO_REQ_LINK_FLAGS (IOSQE_IO_LINK | IOSQE_IO_HARDLINK)

static void reissue_tw(struct nw_req *req, bool submit_side);

/*
 * Lower files start no threads: what a request parked or armed (a watch,
 * a timer) may need the ring's reactor thread for, started here, and the
 * reactor of a DEFER_TASKRUN ring that a POLL_ADD of its fd began to poll.
 */
static void start_drivers(struct nw_ring *ring)
{
	struct nw_ring *t = nw_poll_activated;

	if (nw_loop_ready(&ring->loop))
		nw_reactor_ensure(ring);
	if (unlikely(t)) {
		nw_poll_activated = NULL;
		nw_poll_watch_lazy(
			t); /* observed now: the reactor must see it */
		nw_reactor_ensure(t);
	}
}

/*
 * The blocking attempt in a worker, which a cancel may interrupt
 * (iowq.c): it then ends -EINTR as in io-wq, or -ECANCELED when it never
 * started or stood in for a poll the kernel would have armed (WQ_POLL).
 */
static int issue_blocking(struct nw_req *req, const struct nw_issue_def *def)
{
	int ret = nw_iowq_block_begin(&req->work);

	if (!ret && unlikely(req->flags & NW_REQ_F_CREDS_SWITCH)) {
		struct nw_creds *saved = nw_creds_enter(req->creds, &ret);

		if (!ret)
			ret = def->issue(req, 0);
		nw_creds_leave(saved);
	} else if (!ret) {
		ret = def->issue(req, 0);
	}
	if (!nw_iowq_block_end(&req->work) || !(req->flags & NW_REQ_F_WQ_POLL))
		return ret;
	if (ret < 0)
		return -ECANCELED;
	if (ret == NW_COMPLETE && req->res < 0)
		nw_req_set_fail(req, -ECANCELED);
	return ret;
}

/*
 * A worker runs the request, then hands it back to the ring. A request
 * sent here by IOSQE_ASYNC on a pollable op is still tried nonblocking
 * first and parked on readiness if it would block, as io-wq does; all
 * else blocks in the worker.
 */
static void req_work(struct nw_work *work)
{
	struct nw_req *req = container_of(work, struct nw_req, work);
	const struct nw_issue_def *def = &nw_issue_defs[req->opcode];
	struct nw_ring *ring = req->ring;
	int ret = NW_PUNT;

	if ((req->sqe_flags & IOSQE_ASYNC) && !(req->flags & NW_REQ_F_BLOCK) &&
	    (def->pollin || def->pollout)) {
		ret = def->issue(req, NW_ISSUE_F_NONBLOCK);
		if (ret == NW_PUNT) {
			req->flags |= NW_REQ_F_WQ_POLL;
			__atomic_store_n(&work->wq_poll, 1, __ATOMIC_RELAXED);
		}
		if (ret == NW_RETRY) {
			nw_iowq_done(work); /* a cancel now finds it parked */
			req->tw_func = reissue_tw;
			if (nw_poll_arm(req,
					def->pollin ? NW_POLLIN : NW_POLLOUT) ==
			    NW_POLL_OK) {
				start_drivers(ring); /* req may be gone */
				return;
			}
			ret = def->issue(req, 0);
			goto done;
		}
	}
	if (ret == NW_RETRY || ret == NW_PUNT)
		ret = issue_blocking(req, def);
	nw_iowq_done(work);
done:
	if (ret == NW_QUEUED) {
		start_drivers(ring); /* it parked or armed something */
		return;
	}
	/*
	 * A POLL_ADD of a ring's fd that completed at once may have left
	 * that ring in nw_poll_activated: consume it now, while the ring
	 * lives, not at this worker's next start_drivers (reg-fuzz: a
	 * heap-use-after-free there, the ring released meanwhile).
	 */
	if (unlikely(nw_poll_activated))
		start_drivers(ring);
	if (ret < 0)
		nw_req_set_fail(req, ret);
	req->flags |= NW_REQ_F_WORKER;
	nw_req_complete_async(req);
}

/* Send a request to the worker pool (io_queue_iowq). 0 or -EAGAIN. */
static int req_punt(struct nw_req *req)
{
	const struct nw_issue_def *def = &nw_issue_defs[req->opcode];
	enum nw_wq_class cls = NW_WQ_BOUND;

	if (def->unbound_nonreg_file && !(req->flags & NW_REQ_F_REG_FILE))
		cls = NW_WQ_UNBOUND;
	nw_trace_path(req, NW_PATH_WORKER);
	req->work.fn = req_work;
	req->work.wq_poll = !!(req->flags & NW_REQ_F_WQ_POLL);
	return nw_iowq_enqueue(&req->work, cls);
}

/*
 * IOSQE_FIXED_FILE: the request's fd is a slot of the registered file
 * table; take the engine's own fd in it, and a reference that keeps it
 * open until the request is freed. Done once.
 */
static int resolve_fixed(struct nw_req *req)
{
	int fd;

	if (!(req->sqe_flags & IOSQE_FIXED_FILE) ||
	    !nw_issue_defs[req->opcode].needs_file ||
	    (req->flags & NW_REQ_F_FIXED_DONE))
		return 0;
	fd = nw_rsrc_file_get(req, (unsigned int)req->fd);
	if (fd < 0)
		return fd;
	req->fd = fd;
	req->flags |= NW_REQ_F_FIXED_DONE;
	return 0;
}

/*
 * Issue a request nonblocking; if it would block, park it on readiness
 * (reissuing at once when data raced in) or hand it to a worker: the
 * kernel's io_issue_sqe + io_queue_async. Returns NW_COMPLETE (the result
 * is in req->res) or NW_QUEUED (it completes later). Whatever parks it
 * (here, or the op itself) leaves it to be reissued on readiness.
 */
static int req_issue(struct nw_req *req)
{
	const struct nw_issue_def *def = &nw_issue_defs[req->opcode];
	int ret;

	req->tw_func = reissue_tw;
	if (unlikely(req->sqe_flags & IOSQE_FIXED_FILE)) {
		ret = resolve_fixed(req);
		if (ret) {
			nw_req_set_fail(req, ret);
			return NW_COMPLETE;
		}
	}
	for (;;) {
		/* Another thread's credentials: only a worker can take them. */
		ret = unlikely(def->always_punt ||
			       (req->flags & NW_REQ_F_CREDS_SWITCH))
			      ? NW_PUNT
			      : def->issue(req, NW_ISSUE_F_NONBLOCK);
		if (likely(ret == NW_COMPLETE || ret == NW_QUEUED))
			return ret;
		if (ret < 0) {
			nw_req_set_fail(req, ret);
			return NW_COMPLETE;
		}
		if (ret == NW_RETRY && (def->pollin || def->pollout)) {
			int r = nw_poll_arm(req, def->pollin ? NW_POLLIN
							     : NW_POLLOUT);

			if (r == NW_POLL_OK) {
				nw_trace_path(req, NW_PATH_PARKED);
				return NW_QUEUED;
			}
			if (r == NW_POLL_READY) {
				nw_trace_path(req, NW_PATH_REISSUED);
				continue;
			}
		}
		if (ret == NW_PUNT && (def->pollin || def->pollout))
			req->flags |= NW_REQ_F_WQ_POLL;
		req->flags |= NW_REQ_F_BLOCK;
		ret = req_punt(req);
		if (!ret)
			return NW_QUEUED;
		nw_req_set_fail(req, ret);
		return NW_COMPLETE;
	}
}

/*
 * Issue a request and, while it completes inline, the rest of its chain.
 * Links are issued serially: the next one only once this one is done.
 */
static void issue_chain(struct nw_req *req)
{
	while (req) {
		struct nw_req *lt = NULL, *next;
		bool queued;
		int ret;

		if (unlikely(req->flags & NW_REQ_F_FAIL)) {
			/* Failed at init: complete with its own error. */
			req = nw_req_complete_inline(req);
			continue;
		}
		/* A LINK_TIMEOUT after it is taken out of the chain. */
		if (unlikely(req->link &&
			     (req->link->flags & NW_REQ_F_LTIMEOUT))) {
			lt = req->link;
			req->link = lt->link;
			lt->link = NULL;
		}
		if (unlikely(req->sqe_flags & IOSQE_ASYNC)) {
			ret = resolve_fixed(req);
			if (!ret)
				ret = req_punt(req);
			if (ret)
				nw_req_set_fail(req, ret);
			queued = !ret;
		} else {
			queued = req_issue(req) == NW_QUEUED;
		}
		/*
		 * It starts timing once its request is in flight, as in the
		 * kernel (which arms it after the issue): still on the submit
		 * side, so the request cannot complete before it is armed.
		 */
		if (queued) {
			if (lt)
				nw_link_timeout_arm(req, lt);
			return;
		}
		next = nw_req_complete_inline(req);
		if (lt) {
			lt->res = -ECANCELED; /* its request finished first */
			nw_req_finish(lt, true);
		}
		req = next;
	}
}

/*
 * The continuations submit.c leaves in req->tw_func for lower files: the
 * next request of a chain (set at init: a link released by completion or
 * by the drain list), and a parked request whose fd became ready.
 */
static void chain_tw(struct nw_req *req, bool submit_side)
{
	struct nw_ring *ring = req->ring;

	issue_chain(req);
	start_drivers(ring); /* req may be complete and gone by now */
}

static void reissue_tw(struct nw_req *req, bool submit_side)
{
	struct nw_ring *ring = req->ring;

	if (req_issue(req) == NW_QUEUED) {
		start_drivers(ring); /* req may be complete and gone by now */
		return;
	}
	nw_req_finish(req, submit_side);
}

/*
 * Queue a request that cannot go the inline way (io_queue_sqe_fallback):
 * a failed one fails its whole chain, hard links included, since a chain
 * that could not be submitted is never run.
 */
static void queue_fallback(struct nw_req *req)
{
	if (req->flags & NW_REQ_F_FAIL) {
		req->sqe_flags &= ~IOSQE_IO_HARDLINK;
	} else if (unlikely(req->ring->drain_active)) {
		nw_drain_req(req);
		return;
	}
	issue_chain(req);
}

/* A request's state from its last use, made new for this SQE. */
static inline void req_reset(struct nw_ring *ring, struct nw_req *req,
			     unsigned int sqe_flags)
{
	/* Counted until freed: a drained request waits for all of them. */
	req->flags =
		NW_REQ_F_COUNTED |
		((sqe_flags & IOSQE_CQE_SKIP_SUCCESS) ? NW_REQ_F_CQE_SKIP : 0);
	ring->nr_reqs++;
	req->link = NULL;
	req->cflags = 0;
	req->async = NULL;
	req->task_tid = nw_gettid();
	__atomic_store_n(&req->ltimeout, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&req->seq, ++ring->req_seq, __ATOMIC_RELAXED);
	req->poll_arms = req->poll_events = req->poll_snap = 0;
	req->sync_wake = req->lazy_ok = false;
	if (ring->cqe_shift == 5)
		req->big[0] = req->big[1] = 0;
}

/* io_init_req: validate the SQE in the kernel's order, then prep. */
static int init_req(struct nw_ring *ring, struct nw_req *req,
		    const struct io_uring_sqe *sqe)
{
	const struct nw_issue_def *def;
	unsigned int sqe_flags;

	req->tw_func = chain_tw;
	req->opcode = READ_ONCE(sqe->opcode);
	if (unlikely(nw_traced(ring)))
		nw_trace_submit(req, sqe);
	req->sqe_flags = sqe_flags = READ_ONCE(sqe->flags);
	req->user_data = READ_ONCE(sqe->user_data);
	req_reset(ring, req, sqe_flags);
	/*
	 * The table has every byte value (past NW_OP_LAST all zero), but an
	 * unknown opcode fails here, before the flag checks, as in the kernel.
	 */
	if (unlikely(req->opcode >= NW_OP_LAST))
		return -EINVAL;
	def = &nw_issue_defs[req->opcode];
	if (unlikely(sqe_flags & ~NW_SQE_VALID_FLAGS))
		return -EINVAL;
	if (unlikely(sqe_flags)) {
		if ((sqe_flags & IOSQE_BUFFER_SELECT) && !def->buffer_select)
			return -EOPNOTSUPP;
		if (sqe_flags & IOSQE_CQE_SKIP_SUCCESS)
			ring->drain_disabled = true;
	}
	/* After the flag checks, drain_disabled's -EOPNOTSUPP included. */
	if (unlikely(ring->restricted) &&
	    !((sqe_flags & IOSQE_IO_DRAIN) && ring->drain_disabled) &&
	    !nw_restrict_sqe_ok(ring, req->opcode, sqe_flags))
		return -EACCES;
	if (unlikely((sqe_flags & IOSQE_IO_DRAIN) || ring->drain_next)) {
		int ret = nw_drain_init(ring, req);

		if (ret)
			return ret;
	}
	if (unlikely(!def->issue))
		return -EINVAL; /* not implemented: as on an older kernel */
	if (unlikely(READ_ONCE(sqe->ioprio) && !def->ioprio))
		return -EINVAL;
	if (unlikely((ring->flags & IORING_SETUP_IOPOLL) && !def->iopoll))
		return -EINVAL;
	if (unlikely(READ_ONCE(sqe->personality))) {
		int ret = nw_creds_attach(req, READ_ONCE(sqe->personality));

		if (ret)
			return ret;
	}
	if (def->needs_file)
		req->fd = READ_ONCE(sqe->fd);
	return def->prep(req, sqe);
}

/*
 * io_submit_fail_init: fail the request; keep assembling its link if it
 * carries a link flag (the whole chain fails when it is flushed), else fail
 * it, or its chain, now.
 */
static void submit_fail_init(struct nw_ring *ring, struct nw_req *req, int ret)
{
	struct nw_req *head = ring->link_head;

	nw_req_set_fail(req, ret);
	if (head && !(head->flags & NW_REQ_F_FAIL))
		nw_req_set_fail(head, -ECANCELED);
	if (head)
		ring->link_tail->link = req;
	if (!(req->sqe_flags & IO_REQ_LINK_FLAGS)) {
		if (head) {
			ring->link_head = NULL;
			req = head;
		}
		queue_fallback(req);
		return;
	}
	if (!head)
		ring->link_head = req;
	ring->link_tail = req;
}

/*
 * The fast path: an SQE with no flags, outside a link, for an opcode that
 * always completes inline (NOP) runs on a request on the stack: no cache,
 * no chain handling, the CQE straight into the batch. Returns -1 when the
 * SQE must take the general path, else whether the batch must stop.
 */
static inline int submit_fast(struct nw_ring *ring,
			      const struct io_uring_sqe *sqe)
{
	/* opcode, flags and ioprio in one load: flags and ioprio must be 0 */
	uint32_t head = READ_ONCE(*(const uint32_t *)sqe);
	unsigned int opcode = head & 0xff;
	const struct nw_issue_def *def = &nw_issue_defs[opcode];
	struct nw_req req;
	int ret;

	if (unlikely((head & 0xffffff00) || !def->always_inline ||
		     nw_traced(ring) || READ_ONCE(sqe->personality) ||
		     ring->link_head || ring->drain_active ||
		     ring->restricted || ring->cqe_shift != 4))
		return -1;
	req.ring = ring;
	req.opcode = opcode;
	req.sqe_flags = 0;
	req.flags = 0;
	req.link = NULL;
	req.cflags = 0;
	req.user_data = READ_ONCE(sqe->user_data);
	ret = def->prep(&req, sqe);
	if (likely(!ret)) {
		ret = def->issue(&req, NW_ISSUE_F_NONBLOCK);
		NW_BUG_ON(ret == NW_QUEUED);
		nw_cq_add(ring, &req, ret < 0 ? ret : req.res);
		return 0;
	}
	nw_cq_add(ring, &req, ret);
	return 1;
}

/*
 * Whether the fast loop may post an SQE's CQE itself: a trivial opcode
 * (NW_TRIVIAL_OPS) with no SQE flags, ioprio, personality or rw_flags.
 * The word at the SQE's start is opcode, flags and ioprio: below 64 only
 * when the last two are 0. With NOP (0) the only trivial opcode the
 * compiler makes it one test of the three words or'ed together.
 */
static __attribute__((always_inline)) inline bool
sqe_trivial(const struct io_uring_sqe *sqe)
{
	uint32_t word = READ_ONCE(*(const uint32_t *)sqe);
	uint32_t rest = READ_ONCE(sqe->rw_flags) | READ_ONCE(sqe->personality);

	return !rest && nw_op_trivial(word);
}

/*
 * The fast path in bulk, for lockless rings with reserved CQ room: post
 * the CQEs of consecutive flag-free SQEs of trivial ops (opdef.h) with no
 * call, the ring's hot fields in locals (CQE stores may alias anything,
 * so fields read through ring would be reloaded after each one). It goes
 * in stretches that wrap neither the SQ nor the CQ, so the SQ index, the
 * SQE (NO_SQARRAY) and the CQE slot each move by one step, with no mask.
 * Stops without consuming at the first SQE it cannot finish: another
 * opcode, flags, an invalid index; the general path takes that one.
 * has_array is a constant at each call site, so the compiler makes a
 * loop without the index array for NO_SQARRAY rings. Returns the new SQ
 * head.
 */
static __attribute__((always_inline)) inline unsigned int
fast_loop(struct nw_ring *ring, unsigned int sq_head, unsigned int end,
	  bool has_array)
{
	const unsigned int *const array = ring->sq_array;
	const unsigned int sq_mask = ring->sq_mask, cq_mask = ring->cq_mask;
	const unsigned int nr_sqes = ring->sq_entries, shift = ring->sqe_shift;
	const char *const sqes = ring->sqes;
	char *const cqes = nw_cq_entries(ring);
	unsigned int cq_tail = ring->cached_cq_tail, n, done;

	while (sq_head != end) {
		unsigned int sq_pos = sq_head & sq_mask,
			     cq_pos = cq_tail & cq_mask;
		const unsigned int *a = array + sq_pos;
		const char *next = sqes + ((size_t)sq_pos << shift);
		char *const first = cqes + ((size_t)cq_pos << 4);
		char *cqe = first, *stop;

		n = end - sq_head;
		if (n > sq_mask + 1 - sq_pos)
			n = sq_mask + 1 - sq_pos;
		if (n > cq_mask + 1 - cq_pos)
			n = cq_mask + 1 - cq_pos;
		for (stop = first + ((size_t)n << 4); cqe != stop; cqe += 16) {
			const struct io_uring_sqe *sqe = (const void *)next;

			if (has_array) {
				unsigned int idx = READ_ONCE(*a++);

				if (unlikely(idx >= nr_sqes))
					break;
				sqe = (const void *)(sqes +
						     ((size_t)idx << shift));
			} else {
				next += (size_t)1 << shift;
			}
			if (unlikely(!sqe_trivial(sqe)))
				break;
			nw_cqe16_write_ok(cqe, &sqe->user_data);
		}
		done = (unsigned int)((size_t)(cqe - first) >> 4);
		sq_head += done;
		cq_tail += done;
		if (done != n)
			break;
	}
	ring->cached_cq_tail = cq_tail;
	return sq_head;
}

/*
 * Returns the number of SQEs consumed (see fast_loop). Not inlined: apart
 * from nw_submit_sqes' live values the loop keeps every local in a
 * register, none reloaded from the stack per SQE.
 */
static __attribute__((noinline)) unsigned int
submit_fast_run(struct nw_ring *ring, unsigned int left)
{
	unsigned int head = ring->cached_sq_head, end, n;

	end = head + (left < ring->cq_room ? left : ring->cq_room);
	if (ring->sq_array)
		end = fast_loop(ring, head, end, true);
	else
		end = fast_loop(ring, head, end, false);
	n = end - head;
	ring->cached_sq_head = end;
	ring->cq_room -= n;
	return n;
}

/* io_submit_sqe: returns nonzero when the batch must stop. */
static int submit_one(struct nw_ring *ring, struct nw_req *req,
		      const struct io_uring_sqe *sqe)
{
	int ret = init_req(ring, req, sqe);

	if (unlikely(ret)) {
		submit_fail_init(ring, req, ret);
		return !(req->sqe_flags & IO_REQ_LINK_FLAGS);
	}
	if (unlikely(ring->link_head)) {
		ring->link_tail->link = req;
		ring->link_tail = req;
		if (req->sqe_flags & IO_REQ_LINK_FLAGS)
			return 0;
		req = ring->link_head;
		ring->link_head = NULL;
		if (unlikely(req->flags & NW_REQ_F_FAIL)) {
			queue_fallback(req);
			return 0;
		}
	} else if (unlikely(req->sqe_flags & IO_REQ_LINK_FLAGS)) {
		ring->link_head = ring->link_tail = req;
		return 0;
	}
	if (unlikely(ring->drain_active)) {
		nw_drain_req(req);
		return 0;
	}
	issue_chain(req);
	return 0;
}

/* The SQE at the SQ head, or NULL when its index is out of range. */
static const struct io_uring_sqe *next_sqe(struct nw_ring *ring)
{
	unsigned int head = ring->cached_sq_head++;
	unsigned int idx = head & ring->sq_mask;

	if (ring->sq_array) {
		idx = READ_ONCE(ring->sq_array[idx]);
		if (unlikely(idx >= ring->sq_entries)) {
			WRITE_ONCE(*ring->sq_dropped,
				   READ_ONCE(*ring->sq_dropped) + 1);
			return NULL;
		}
	}
	/* With SQE128 each entry is two slots wide (nw_sqe_at's shift). */
	return nw_sqe_at(ring, idx);
}

/*
 * Before a request or a harvest of an enter(GETEVENTS) whose
 * signals are not held yet: a signal handler that runs from here on goes
 * unseen, which matters only if the wait then sleeps, where the kernel
 * says -EINTR. So hold them now unless the wait cannot sleep: the CQEs
 * posted so far (the ring's, the batch's) reach its min_complete. The CQ
 * only fills during the enter (the program reaps between enters), so a
 * wait found satisfied here stays so. Any request may park instead of
 * posting (a SEND into a full socket, a RECV of an empty one), and a
 * signal from elsewhere is delivered as its call returns: so a request
 * whose own CQE would end the wait does not excuse the hold.
 */
static inline void sighold_before(struct nw_ring *ring)
{
	struct nw_sighold *sh = nw_sighold_cur;
	unsigned int have;

	if (likely(!sh || sh->held))
		return;
	have = ring->cached_cq_tail - load_acquire(ring->cq_head) +
	       ring->nr_batch;
	if (have >= sh->cq_need)
		return;
	nw_sighold_block(sh);
}

/*
 * The end of a batch: what it left open or parked goes on, the SQ head
 * tells the program its slots are free, and its CQEs are published. The
 * head goes first: an SQPOLL program that reaps a CQE reuses the slot at
 * once (liburing's get_sqe reads the head), so a CQE seen before the head
 * moved made the SQ look full (reg-fd-only's SQPOLL NOPs, a NULL SQE).
 */
static void submit_end(struct nw_ring *ring, unsigned int parks_before)
{
	/* Links never span enter calls: issue an unterminated chain now. */
	if (unlikely(ring->link_head)) {
		struct nw_req *head = ring->link_head;

		ring->link_head = NULL;
		queue_fallback(head);
	}
	if (!ring->lockless_cq)
		nw_run_tw(ring);
	/*
	 * Requests parked by this batch whose data raced in meanwhile are
	 * reissued now, before anyone sleeps: one epoll check per batch.
	 */
	if (unlikely(nw_parks != parks_before)) {
		static const struct timespec zero;

		sighold_before(ring); /* it may reissue anything parked */
		/* Unless the harvest came full, the wait need not look again. */
		if (nw_reactor_run(ring, &zero, NULL, NW_RUN_SUBMIT) <
			    NW_LOOP_BATCH &&
		    nw_sighold_cur)
			nw_sighold_cur->looked = true;
	}
	store_release(ring->sq_head, ring->cached_sq_head);
	nw_cq_flush_batch(ring);
	start_drivers(ring);
}

int nw_submit_sqes(struct nw_ring *ring, unsigned int nr)
{
	unsigned int entries, left, ret, parks_before;
	bool no_req = false;

	entries = load_acquire(ring->sq_tail) - ring->cached_sq_head;
	if (entries > ring->sq_entries)
		entries = ring->sq_entries;
	ret = left = nr < entries ? nr : entries;
	if (unlikely(!left))
		return 0;
	parks_before = nw_parks;
	__atomic_store_n(&ring->submit_gen, ring->submit_gen + 1,
			 __ATOMIC_RELAXED);
	nw_cq_begin_batch(ring);
	nw_park_lazy = ring->lockless_cq && !ring->forked;
	if (ring->cq_room && !ring->link_head && !ring->drain_active &&
	    !nw_traced(ring) && !ring->restricted) {
		left -= submit_fast_run(ring, left);
		if (!left)
			goto out;
	}
	do {
		const struct io_uring_sqe *sqe = next_sqe(ring);
		struct nw_req *req;
		int stop;

		if (unlikely(!sqe))
			break;
		/* Most opcodes never finish inline: no call to find that out. */
		stop = nw_issue_defs[READ_ONCE(sqe->opcode)].always_inline
			       ? submit_fast(ring, sqe)
			       : -1;
		if (likely(stop == 0))
			continue;
		if (stop < 0) {
			sighold_before(ring); /* may not finish inline */
			req = nw_req_alloc(ring);
			if (unlikely(!req)) {
				ring->cached_sq_head--; /* not consumed */
				no_req = true;
				break;
			}
			req->ring = ring;
			stop = submit_one(ring, req, sqe);
		}
		if (unlikely(stop) &&
		    !(ring->flags & IORING_SETUP_SUBMIT_ALL)) {
			left--;
			break;
		}
	} while (--left);

out:
	nw_park_lazy = false;
	if (left || ret != nr) /* enter returns before its GETEVENTS part */
		nw_submit_waits = false;
	submit_end(ring, parks_before);
	ret -= left;
	if (!ret && no_req)
		return -EAGAIN;
	return (int)ret;
}
