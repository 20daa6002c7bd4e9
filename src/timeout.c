/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_TIMEOUT, TIMEOUT_REMOVE and LINK_TIMEOUT on one timer source
 * per ring: a min-heap of deadlines (CLOCK_MONOTONIC) behind a timerfd,
 * an event source of the ring's loop (ring->tmo_io), so timeouts fire
 * wherever readiness is harvested (a waiter in enter, or the reactor
 * thread): its callback moves the expired ones to the harvest's ready
 * list, and each goes on through its tw_func (timeout_fire). Count-based timeouts are
 * checked on the submit side each time CQEs are published.
 * Semantics: kernel io_uring/timeout.c, reference/kernel-semantics.md 9:
 * - a timeout's CQE is -ETIME on expiry (a link failure unless
 *   ETIME_SUCCESS), 0 when its count of other CQEs was reached, -ECANCELED
 *   when removed; every firing wakes enter's waiters;
 * - a LINK_TIMEOUT is armed when the request before it is issued; if that
 *   request finishes first the timeout completes -ECANCELED, else the
 *   request is cancelled and the timeout reports -ETIME (or the cancel's
 *   error). The timeout is spliced out of the chain when armed. An
 *   expiry whose cancel finds the request nowhere, as it is between a wake
 *   and its next park, fires again shortly (relink): the kernel's cancel
 *   would have found it.
 * The heap and the count list are under ring->poll_lock.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/timerfd.h>
#include "timeout.h"
#include "complete.h"
#include "cancel.h"
#include "fdhigh.h"

struct nw_timeout {
	long long deadline_ns; /* CLOCK_MONOTONIC */
	unsigned int flags;    /* IORING_TIMEOUT_* */
	unsigned int count;    /* CQEs to wait for; 0: a pure timer */
	union {
		unsigned int target_cq; /* count-based: the CQ event to reach */
		unsigned int repeats;	/* MULTISHOT: expiries left, 0: ever */
	};
	int heap_idx; /* -1 when not armed */
	bool on_count_list;
	uint8_t relinks; /* LINK_TIMEOUT: fired again, its target unfound */
	struct nw_req *target; /* LINK_TIMEOUT: the guarded request */
	uint64_t target_seq;
	struct __kernel_timespec ts;
};
_Static_assert(sizeof(struct nw_timeout) <= NW_REQ_CMD_SIZE, "nw_timeout");

struct nw_timeout_rem {
	uint64_t user_data;
	unsigned int flags;
	struct __kernel_timespec ts;
};

#define TMO(req) nw_req_cmd(req, struct nw_timeout)

/*
 * A target's ltimeout once its timer fired (timer_fire): the timer side
 * owns the LINK_TIMEOUT now, and the target's completion lets go of it
 * (nw_link_timeout_disarm) without completing it.
 */
#define LT_FIRED ((struct nw_req *)1)

static long long clock_ns(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* a + b, held at LLONG_MAX as the kernel's ktime_add_safe holds KTIME_MAX. */
static long long add_sat(long long a, long long b)
{
	long long r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? LLONG_MAX : 0;
	return r;
}

/*
 * The monotonic deadline of ts under flags (clock, ABS), as the kernel's
 * timespec64_to_ktime and hrtimer make it: tv_sec from KTIME_SEC_MAX up
 * is "never"; below it, a tv_nsec that takes sec * 10^9 + nsec past
 * KTIME_MAX wraps there to a negative time. A relative timer saturates
 * that to "never" (ktime_add_safe). An absolute one keeps it as its soft
 * expiry, long past, and clamps only the hard one it programs: it runs
 * at the next hrtimer interrupt that looks at its clock base, at once in
 * practice for REALTIME and BOOTTIME (nothing else queued there), never
 * for MONOTONIC (the tick's timer, always due sooner, stops the walk).
 * prep has refused negative parts.
 */
static long long deadline_of(const struct __kernel_timespec *ts,
			     unsigned int flags)
{
	clockid_t clk = CLOCK_MONOTONIC;
	long long v = LLONG_MAX;
	long long now = clock_ns(CLOCK_MONOTONIC);

	if (ts->tv_sec < LLONG_MAX / 1000000000LL &&
	    __builtin_add_overflow(ts->tv_sec * 1000000000LL, ts->tv_nsec, &v))
		return (flags & IORING_TIMEOUT_ABS) &&
				       (flags & IORING_TIMEOUT_CLOCK_MASK)
			       ? 0
			       : LLONG_MAX;
	if (flags & IORING_TIMEOUT_BOOTTIME)
		clk = CLOCK_BOOTTIME;
	else if (flags & IORING_TIMEOUT_REALTIME)
		clk = CLOCK_REALTIME;
	if (!(flags & IORING_TIMEOUT_ABS))
		return add_sat(now, v);
	return add_sat(now, v - clock_ns(clk));
}

/* ---- the heap (poll_lock held) ---- */

static void heap_set(struct nw_ring *ring, unsigned int i, struct nw_req *req)
{
	ring->tmo_heap[i] = req;
	TMO(req)->heap_idx = (int)i;
}

static bool heap_less(struct nw_ring *ring, unsigned int a, unsigned int b)
{
	return TMO(ring->tmo_heap[a])->deadline_ns <
	       TMO(ring->tmo_heap[b])->deadline_ns;
}

static void heap_swap(struct nw_ring *ring, unsigned int a, unsigned int b)
{
	struct nw_req *t = ring->tmo_heap[a];

	heap_set(ring, a, ring->tmo_heap[b]);
	heap_set(ring, b, t);
}

static void heap_up(struct nw_ring *ring, unsigned int i)
{
	while (i && heap_less(ring, i, (i - 1) / 2)) {
		heap_swap(ring, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_down(struct nw_ring *ring, unsigned int i)
{
	for (;;) {
		unsigned int l = 2 * i + 1, r = l + 1, m = i;

		if (l < ring->tmo_nr && heap_less(ring, l, m))
			m = l;
		if (r < ring->tmo_nr && heap_less(ring, r, m))
			m = r;
		if (m == i)
			return;
		heap_swap(ring, i, m);
		i = m;
	}
}

static int heap_push(struct nw_ring *ring, struct nw_req *req)
{
	if (ring->tmo_nr == ring->tmo_cap) {
		unsigned int cap = ring->tmo_cap ? 2 * ring->tmo_cap : 16;
		struct nw_req **h = realloc(ring->tmo_heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		ring->tmo_heap = h;
		ring->tmo_cap = cap;
	}
	heap_set(ring, ring->tmo_nr++, req);
	heap_up(ring, ring->tmo_nr - 1);
	return 0;
}

static void heap_remove(struct nw_ring *ring, struct nw_req *req)
{
	unsigned int i = (unsigned int)TMO(req)->heap_idx;

	TMO(req)->heap_idx = -1;
	if (--ring->tmo_nr == i)
		return;
	heap_set(ring, i, ring->tmo_heap[ring->tmo_nr]);
	heap_down(ring, i);
	heap_up(ring, i);
}

/* Point the timerfd at the earliest deadline (or disarm it). */
static void timer_update(struct nw_ring *ring)
{
	struct itimerspec its = {0};

	if (ring->tmo_nr) {
		long long d = TMO(ring->tmo_heap[0])->deadline_ns;

		if (d <= 0)
			d = 1;
		its.it_value.tv_sec = d / 1000000000LL;
		its.it_value.tv_nsec = d % 1000000000LL;
	}
	timerfd_settime(ring->tmo_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void timer_fire(struct nw_io *io, unsigned int events,
		       struct nw_harvest *h);
static void timeout_fire(struct nw_req *req, bool submit_side);

/* The ring's timerfd, in its epoll set. poll_lock held. */
static int timer_ensure(struct nw_ring *ring)
{
	int ret = nw_loop_ensure(&ring->loop);

	if (ret || ring->tmo_fd >= 0)
		return ret;
	ring->tmo_fd = nw_fd_hide(
		timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
	if (ring->tmo_fd < 0)
		return -errno;
	ring->tmo_io.cb = timer_fire;
	ret = nw_loop_add(&ring->loop, ring->tmo_fd, &ring->tmo_io);
	return ret < 0 ? ret : 0;
}

/* Arm req's deadline (and count). poll_lock held. */
static int arm(struct nw_ring *ring, struct nw_req *req)
{
	int ret = timer_ensure(ring);

	req->tw_func = timeout_fire; /* what its expiry runs */
	if (!ret)
		ret = heap_push(ring, req);
	if (ret)
		return ret;
	if (TMO(req)->heap_idx == 0)
		timer_update(ring);
	return 0;
}

/* Take req off the heap and the count list. poll_lock held. */
static void disarm(struct nw_ring *ring, struct nw_req *req)
{
	struct nw_timeout *t = TMO(req);
	bool top = t->heap_idx == 0;

	if (t->heap_idx >= 0)
		heap_remove(ring, req);
	if (t->on_count_list) {
		nw_list_del(&req->poll_node);
		t->on_count_list = false;
		ring->nr_count_tmo--;
	}
	if (top)
		timer_update(ring);
}

/*
 * A timeout CQE is about to be posted: count it. (Waiters are woken when
 * it is published: complete.c bumps tmo_seq for a batch with a timeout.)
 */
static void timeout_posted(struct nw_ring *ring)
{
	__atomic_add_fetch(&ring->cq_timeouts, 1, __ATOMIC_RELAXED);
}

/* Complete cancelled requests after the canceller (as task work). */
static void complete_later(struct nw_list *list)
{
	struct nw_list *pos, *tmp;

	nw_list_for_each_safe(pos, tmp, list) {
		nw_list_del(pos);
		nw_req_complete_async(
			nw_list_entry(pos, struct nw_req, poll_node));
	}
}

/* ---- TIMEOUT ---- */

static int prep_common(struct nw_req *req, const struct io_uring_sqe *sqe,
		       bool is_link)
{
	struct nw_timeout *t = TMO(req);
	unsigned int flags;

	/* addr3 and __pad2 must be 0 (6.18's stable fix), before the rest. */
	if (READ_ONCE(sqe->addr3) || READ_ONCE(sqe->__pad2[0]))
		return -EINVAL;
	if (READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->len) != 1 ||
	    READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	t->count = (unsigned int)READ_ONCE(sqe->off);
	if (t->count && is_link)
		return -EINVAL;
	flags = READ_ONCE(sqe->timeout_flags);
	if (flags & ~(IORING_TIMEOUT_ABS | IORING_TIMEOUT_CLOCK_MASK |
		      IORING_TIMEOUT_ETIME_SUCCESS | IORING_TIMEOUT_MULTISHOT))
		return -EINVAL;
	if (__builtin_popcount(flags & IORING_TIMEOUT_CLOCK_MASK) > 1)
		return -EINVAL;
	/* A multishot timeout repeats a relative time; off counts expiries. */
	if ((flags & IORING_TIMEOUT_MULTISHOT) && (flags & IORING_TIMEOUT_ABS))
		return -EINVAL;
	t->repeats = 0;
	if (flags & IORING_TIMEOUT_MULTISHOT) {
		t->repeats = t->count;
		t->count = 0;
	}
	t->flags = flags;
	t->heap_idx = -1;
	t->on_count_list = false;
	t->target = NULL;
	if (nw_copy_from_user(&t->ts, (void *)(uintptr_t)READ_ONCE(sqe->addr),
			      sizeof(t->ts)))
		return -EFAULT;
	if (t->ts.tv_sec < 0 || t->ts.tv_nsec < 0)
		return -EINVAL;
	req->flags |= NW_REQ_F_TIMER;
	return 0;
}

int nw_timeout_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	return prep_common(req, sqe, false);
}

int nw_timeout_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_ring *ring = req->ring;
	struct nw_timeout *t = TMO(req);
	int ret;

	t->deadline_ns = deadline_of(&t->ts, t->flags);
	pthread_mutex_lock(&ring->poll_lock);
	if (t->count) {
		t->target_cq =
			ring->cached_cq_tail -
			__atomic_load_n(&ring->cq_timeouts, __ATOMIC_RELAXED) +
			t->count;
		/* The count is measured from here (see flush_count). */
		if (!ring->nr_count_tmo)
			ring->cq_last_tm_flush = t->target_cq - t->count;
		nw_list_add_tail(&req->poll_node, &ring->tmo_count);
		t->on_count_list = true;
		ring->nr_count_tmo++;
	}
	ret = arm(ring, req);
	if (ret)
		disarm(ring, req);
	pthread_mutex_unlock(&ring->poll_lock);
	if (ret)
		return ret;
	return NW_QUEUED;
}

/* The timerfd fired: expired timeouts go to *ready. poll_lock held. */
static void timer_fire(struct nw_io *io, unsigned int events,
		       struct nw_harvest *h)
{
	struct nw_ring *ring = container_of(io, struct nw_ring, tmo_io);
	struct nw_list *ready = &h->ready;
	long long now = clock_ns(CLOCK_MONOTONIC);
	uint64_t ticks;

	if (read(ring->tmo_fd, &ticks, sizeof(ticks)) < 0)
		(void)0; /* a racing harvester drained it */
	while (ring->tmo_nr && TMO(ring->tmo_heap[0])->deadline_ns <= now) {
		struct nw_req *req = ring->tmo_heap[0];
		struct nw_timeout *t = TMO(req);

		disarm(ring, req);
		/* A linked timeout takes over from its target, under the lock. */
		if (t->target &&
		    __atomic_load_n(&t->target->seq, __ATOMIC_RELAXED) ==
			    t->target_seq)
			__atomic_store_n(&t->target->ltimeout, LT_FIRED,
					 __ATOMIC_RELAXED);
		nw_list_add_tail(&req->poll_node, ready);
	}
	timer_update(ring);
}

/* The final result of an expiry: -ETIME, a failure unless ETIME_SUCCESS. */
static void expired(struct nw_req *req)
{
	req->res = -ETIME;
	if (!(TMO(req)->flags & IORING_TIMEOUT_ETIME_SUCCESS))
		nw_req_set_fail(req, -ETIME);
}

/*
 * A multishot timeout expired (submit side). Unless that was its last
 * expiry, post -ETIME with F_MORE and arm it again, relative to now. A CQ
 * without room (or with a backlog) ends it instead, as the kernel's
 * io_req_post_cqe does not overflow: its last CQE then goes the normal
 * way. Returns true while it stays armed.
 */
static bool mshot_again(struct nw_req *req)
{
	struct nw_ring *ring = req->ring;
	struct nw_timeout *t = TMO(req);
	int ret;

	if (t->repeats && !--t->repeats)
		return false;
	if (!nw_cq_has_room(ring))
		return false;
	req->cflags = IORING_CQE_F_MORE;
	nw_cq_add(ring, req, -ETIME);
	req->cflags = 0;
	ring->batch_timeout = true; /* waiters wake, as for any timeout */
	t->deadline_ns = deadline_of(&t->ts, t->flags);
	pthread_mutex_lock(&ring->poll_lock);
	ret = arm(ring, req);
	if (ret)
		disarm(ring, req);
	pthread_mutex_unlock(&ring->poll_lock);
	return !ret;
}

/* A multishot timeout's expiry as task work: its CQE needs the submit side. */
static void mshot_tw(struct nw_req *req, bool submit_side)
{
	if (mshot_again(req))
		return;
	expired(req);
	nw_req_finish(req, submit_side);
}

/*
 * A LINK_TIMEOUT's cancel found its target nowhere: woken, it is on a
 * harvest's ready list or being reissued, where the kernel's cancel (its
 * poll still hashed) would find it. If it has not completed since (its
 * ltimeout still LT_FIRED), give the link back and fire again shortly,
 * backing off: by then it is parked again (cancelled: -ETIME) or has
 * completed (its completion finds the link: -ECANCELED), never left
 * pending with the timeout gone. True if re-armed.
 */
static bool relink(struct nw_req *req)
{
	struct nw_ring *ring = req->ring;
	struct nw_timeout *t = TMO(req);
	struct nw_req *target = t->target;
	bool ok = false;

	pthread_mutex_lock(&ring->poll_lock);
	if (__atomic_load_n(&target->seq, __ATOMIC_RELAXED) == t->target_seq &&
	    __atomic_load_n(&target->ltimeout, __ATOMIC_RELAXED) == LT_FIRED) {
		if (t->relinks < 10)
			t->relinks++;
		t->deadline_ns =
			clock_ns(CLOCK_MONOTONIC) + (1000LL << t->relinks);
		ok = !arm(ring, req);
		if (ok)
			__atomic_store_n(&target->ltimeout, req,
					 __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&ring->poll_lock);
	return ok;
}

/* An expired timeout (its tw_func): its CQE, a linked target's cancel. */
static void timeout_fire(struct nw_req *req, bool submit_side)
{
	struct nw_timeout *t = TMO(req);
	int ret;

	if (req->flags & NW_REQ_F_LTIMEOUT) {
		struct nw_list out;

		/* Cancel the guarded request; report how that went, first. */
		nw_list_init(&out);
		ret = nw_cancel_req(req->ring, t->target, t->target_seq, &out);
		if (ret == -ENOENT && relink(req))
			return;
		req->res = ret ? ret : -ETIME;
		nw_req_finish(req, submit_side);
		complete_later(&out);
		return;
	}
	timeout_posted(req->ring);
	if (t->flags & IORING_TIMEOUT_MULTISHOT) {
		if (!submit_side) {
			req->tw_func = mshot_tw;
			nw_req_task_queue(req);
			return;
		}
		if (mshot_again(req))
			return;
	}
	expired(req);
	nw_req_finish(req, submit_side);
}

/* Count-based timeouts whose count was reached complete with 0. */
void nw_timeout_flush_count(struct nw_ring *ring)
{
	struct nw_list done, *pos, *tmp;
	unsigned int events;

	nw_list_init(&done);
	pthread_mutex_lock(&ring->poll_lock);
	events = ring->cached_cq_tail -
		 __atomic_load_n(&ring->cq_timeouts, __ATOMIC_RELAXED);
	nw_list_for_each_safe(pos, tmp, &ring->tmo_count) {
		struct nw_req *req =
			nw_list_entry(pos, struct nw_req, poll_node);

		/*
		 * Measured from the last flush, as the kernel does, so that
		 * a count of UINT_MAX (or a wrapped tail) is not already met.
		 */
		if (events - ring->cq_last_tm_flush <
		    TMO(req)->target_cq - ring->cq_last_tm_flush)
			continue;
		disarm(ring, req);
		nw_list_add_tail(&req->poll_node, &done);
	}
	ring->cq_last_tm_flush = events;
	pthread_mutex_unlock(&ring->poll_lock);
	nw_list_for_each_safe(pos, tmp, &done) {
		struct nw_req *req =
			nw_list_entry(pos, struct nw_req, poll_node);

		nw_list_del(pos);
		timeout_posted(ring);
		req->res = 0;
		nw_req_finish(req, true);
	}
}

/* Find the armed timeout with user_data (linked or not). poll_lock held. */
static struct nw_req *find_timeout(struct nw_ring *ring, uint64_t user_data,
				   bool linked)
{
	for (unsigned int i = 0; i < ring->tmo_nr; i++) {
		struct nw_req *req = ring->tmo_heap[i];

		if (req->user_data == user_data &&
		    !!(req->flags & NW_REQ_F_LTIMEOUT) == linked)
			return req;
	}
	return NULL;
}

int nw_timeout_cancel(struct nw_ring *ring,
		      bool (*match)(struct nw_req *, void *), void *arg,
		      bool all, struct nw_list *out)
{
	int n = 0;

	pthread_mutex_lock(&ring->poll_lock);
	for (unsigned int i = 0; i < ring->tmo_nr && (all || !n);) {
		struct nw_req *req = ring->tmo_heap[i];

		if ((req->flags & NW_REQ_F_LTIMEOUT) || !match(req, arg)) {
			i++;
			continue;
		}
		disarm(ring, req); /* the heap moved: look at slot i again */
		timeout_posted(ring);
		nw_req_set_fail(req, -ECANCELED);
		nw_list_add_tail(&req->poll_node, out);
		n++;
	}
	pthread_mutex_unlock(&ring->poll_lock);
	return n ? n : -ENOENT;
}

/* ---- TIMEOUT_REMOVE ---- */

int nw_timeout_remove_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_timeout_rem *tr = nw_req_cmd(req, struct nw_timeout_rem);

	if (req->sqe_flags & IOSQE_FIXED_FILE)
		return -EINVAL;
	if (READ_ONCE(sqe->addr3) || READ_ONCE(sqe->__pad2[0]))
		return -EINVAL;
	if (READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->len) ||
	    READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	tr->user_data = READ_ONCE(sqe->addr);
	tr->flags = READ_ONCE(sqe->timeout_flags);
	if (!(tr->flags & IORING_TIMEOUT_UPDATE_MASK))
		return tr->flags ? -EINVAL : 0;
	if (__builtin_popcount(tr->flags & IORING_TIMEOUT_CLOCK_MASK) > 1)
		return -EINVAL;
	if (tr->flags & ~(IORING_TIMEOUT_UPDATE_MASK | IORING_TIMEOUT_ABS |
			  IORING_TIMEOUT_CLOCK_MASK))
		return -EINVAL;
	if (nw_copy_from_user(&tr->ts, (void *)(uintptr_t)READ_ONCE(sqe->addr2),
			      sizeof(tr->ts)))
		return -EFAULT;
	if (tr->ts.tv_sec < 0 || tr->ts.tv_nsec < 0)
		return -EINVAL;
	return 0;
}

/* UPDATE: re-arm with a new time; the count is dropped (a pure timer). */
static int timeout_update(struct nw_ring *ring, struct nw_timeout_rem *tr)
{
	bool linked = tr->flags & IORING_LINK_TIMEOUT_UPDATE;
	struct nw_req *req;
	int ret = -ENOENT;

	pthread_mutex_lock(&ring->poll_lock);
	req = find_timeout(ring, tr->user_data, linked);
	if (req) {
		disarm(ring, req);
		TMO(req)->ts = tr->ts;
		TMO(req)->count = 0;
		TMO(req)->repeats = 0; /* a multishot one repeats for ever */
		TMO(req)->deadline_ns = deadline_of(&tr->ts, tr->flags);
		ret = arm(ring, req);
	}
	pthread_mutex_unlock(&ring->poll_lock);
	return ret;
}

static bool match_user_data(struct nw_req *req, void *arg)
{
	return req->user_data == *(uint64_t *)arg;
}

int nw_timeout_remove_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_timeout_rem *tr = nw_req_cmd(req, struct nw_timeout_rem);
	int ret;

	struct nw_list out;

	nw_list_init(&out);
	if (tr->flags & IORING_TIMEOUT_UPDATE_MASK)
		ret = timeout_update(req->ring, tr);
	else
		ret = nw_timeout_cancel(req->ring, match_user_data,
					&tr->user_data, false, &out);
	complete_later(&out);
	if (ret > 0)
		ret = 0;
	req->res = ret;
	return ret < 0 ? ret : NW_COMPLETE;
}

/* ---- LINK_TIMEOUT ---- */

int nw_link_timeout_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_ring *ring = req->ring;
	int ret = prep_common(req, sqe, true);

	if (ret)
		return ret;
	/* It guards the request before it in an open link. */
	if (!ring->link_head || (ring->link_tail->flags & NW_REQ_F_LTIMEOUT))
		return -EINVAL;
	req->flags |= NW_REQ_F_LTIMEOUT;
	return 0;
}

int nw_link_timeout_issue(struct nw_req *req, unsigned int issue_flags)
{
	/* Only reached when its target could not be issued: nothing to time. */
	return -ECANCELED;
}

void nw_link_timeout_arm(struct nw_req *req, struct nw_req *lt)
{
	struct nw_ring *ring = req->ring;
	struct nw_timeout *t = TMO(lt);
	int ret;

	t->target = req;
	t->target_seq = __atomic_load_n(&req->seq, __ATOMIC_RELAXED);
	t->relinks = 0;
	t->deadline_ns = deadline_of(&t->ts, t->flags);
	pthread_mutex_lock(&ring->poll_lock);
	ret = arm(ring, lt);
	if (!ret)
		__atomic_store_n(&req->ltimeout, lt, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ring->poll_lock);
	if (ret) {
		nw_req_set_fail(lt, ret);
		nw_req_finish(lt, true);
	}
}

void nw_link_timeout_disarm(struct nw_req *req)
{
	struct nw_ring *ring = req->ring;
	struct nw_req *lt;

	pthread_mutex_lock(&ring->poll_lock);
	lt = __atomic_load_n(&req->ltimeout, __ATOMIC_RELAXED);
	__atomic_store_n(&req->ltimeout, NULL, __ATOMIC_RELAXED);
	if (lt && lt != LT_FIRED)
		disarm(ring, lt);
	pthread_mutex_unlock(&ring->poll_lock);
	if (!lt || lt == LT_FIRED)
		return; /* fired first: the timer side completes it */
	/* Not a failure: its own CQE_SKIP_SUCCESS decides (kernel). */
	lt->res = -ECANCELED;
	nw_req_finish(lt, true);
}
