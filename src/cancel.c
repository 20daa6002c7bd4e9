/* SPDX-License-Identifier: MIT */
/*
 * Cancellation: IORING_OP_ASYNC_CANCEL by user_data, fd, opcode or any,
 * one or all, and the cancel of one request that a LINK_TIMEOUT asks for.
 * Each subsystem is asked in turn, as the kernel's io_try_cancel does:
 * the worker pool (queued work is taken back, running work is -EALREADY),
 * then requests parked on readiness (polls included), then the lists of
 * waitid.c and futex.c (nw_cancel_list), then timeouts.
 * A cancelled request completes with -ECANCELED. IORING_REGISTER_SYNC_CANCEL
 * is the same search from io_uring_register, retried while a match runs.
 * Requests waiting behind an IO_DRAIN are not found, as in the kernel.
 * Semantics: kernel io_uring/cancel.c, reference/kernel-semantics.md 9.
 */
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include "cancel.h"
#include "complete.h"
#include "opdef.h"
#include "poll.h"
#include "timeout.h"
#include "rsrc.h"

#define CANCEL_FLAGS                                              \
	(IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_FD |       \
	 IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_FD_FIXED | \
	 IORING_ASYNC_CANCEL_USERDATA | IORING_ASYNC_CANCEL_OP)

struct nw_cancel {
	uint64_t addr; /* user_data to match */
	unsigned int flags;
	int fd;
	unsigned int opcode;
};

/* What a cancel matches, and with which ring and canceller. */
struct cancel_key {
	struct nw_ring *ring;
	struct nw_req *self;
	struct nw_cancel c;
	struct nw_req *target; /* nw_cancel_req: this request only */
	uint64_t seq;
	struct nw_list *out; /* cancelled requests, to complete later */
	bool own;	     /* found in an nw_cancel_list: counts 1 */
};

/* futex.c's and waitid.c's lists, in the kernel's order (waitid first). */
#define NW_CANCEL_LISTS 2
static const struct nw_cancel_list *cancel_lists[NW_CANCEL_LISTS];

void nw_cancel_list_add(const struct nw_cancel_list *list)
{
	for (unsigned int i = 0; i < NW_CANCEL_LISTS; i++) {
		const struct nw_cancel_list *none = NULL;

		if (__atomic_compare_exchange_n(&cancel_lists[i], &none, list,
						false, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED) ||
		    none == list)
			return;
	}
}

static bool list_owned(struct nw_req *req)
{
	for (unsigned int i = 0; i < NW_CANCEL_LISTS; i++) {
		const struct nw_cancel_list *l =
			__atomic_load_n(&cancel_lists[i], __ATOMIC_ACQUIRE);

		if (l && l->owns(req))
			return true;
	}
	return false;
}

static bool key_match(struct nw_req *req, void *arg)
{
	struct cancel_key *k = arg;
	unsigned int f = k->c.flags;

	if (req->ring != k->ring || req == k->self)
		return false;
	if (k->target)
		return req == k->target &&
		       __atomic_load_n(&req->seq, __ATOMIC_RELAXED) == k->seq;
	if (f & IORING_ASYNC_CANCEL_ANY)
		return true;
	if ((f & IORING_ASYNC_CANCEL_FD) &&
	    (!nw_issue_defs[req->opcode].needs_file || req->fd != k->c.fd))
		return false;
	if ((f & IORING_ASYNC_CANCEL_OP) && req->opcode != k->c.opcode)
		return false;
	if (((f & IORING_ASYNC_CANCEL_USERDATA) ||
	     !(f & (IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_OP))) &&
	    req->user_data != k->c.addr)
		return false;
	return true;
}

static bool work_match(struct nw_work *work, void *arg)
{
	struct nw_req *req = container_of(work, struct nw_req, work);

	return !list_owned(req) && key_match(req, arg);
}

/*
 * The own lists (io_waitid_cancel, io_futex_cancel): with CANCEL_ALL each
 * list that found some counts once, as one pass of the kernel's loop.
 */
static int lists_cancel(struct cancel_key *k, bool all)
{
	int n = 0;

	if (k->c.flags & IORING_ASYNC_CANCEL_FD)
		return 0;
	for (unsigned int i = 0; i < NW_CANCEL_LISTS; i++) {
		const struct nw_cancel_list *l =
			__atomic_load_n(&cancel_lists[i], __ATOMIC_ACQUIRE);
		int r = l ? l->cancel(k->ring, key_match, k, all) : 0;

		if (r <= 0)
			continue;
		k->own = true;
		n += (k->c.flags & IORING_ASYNC_CANCEL_ALL) ? 1 : r;
		if (!all)
			break;
	}
	return n;
}

static void work_cancelled(struct nw_work *work, void *arg)
{
	struct cancel_key *k = arg;
	struct nw_req *req = container_of(work, struct nw_req, work);

	nw_req_set_fail(req, -ECANCELED);
	nw_list_add_tail(&req->poll_node, k->out);
}

/* What interrupting running work found (interrupt_running). */
struct interrupt_ctx {
	struct cancel_key *k;
	int wq_poll;
};

static bool interrupt_match(struct nw_work *work, void *arg)
{
	return work_match(work, ((struct interrupt_ctx *)arg)->k);
}

static void interrupted(struct nw_work *work, void *arg)
{
	/* NW_REQ_F_WQ_POLL, as the worker may be writing req->flags. */
	if (__atomic_load_n(&work->wq_poll, __ATOMIC_RELAXED))
		((struct interrupt_ctx *)arg)->wq_poll++;
}

/*
 * Requests running in a worker are interrupted, as io-wq signals its
 * worker: they complete -EINTR, and the cancel says -EALREADY. One that
 * is in a worker only in place of a poll the kernel would have armed
 * (WQ_POLL) completes -ECANCELED and counts as found, as that poll would.
 * With ALL each counts. Returns n plus what counts as found.
 */
static int interrupt_running(struct cancel_key *k, bool all, int n)
{
	struct interrupt_ctx ctx = {.k = k};
	int r = nw_iowq_interrupt(interrupt_match, &ctx, all, interrupted);

	return n + (all ? r : ctx.wq_poll);
}

/*
 * Ask each place a request can wait. Returns how many were cancelled, or
 * -EALREADY / -ENOENT when none was.
 */
static int try_cancel(struct cancel_key *k, bool all)
{
	bool running = false;
	int n, r;

	n = nw_iowq_cancel(work_match, k, all, work_cancelled, &running);
	if (n && !all)
		return n;
	r = nw_poll_cancel(k->ring, key_match, k, all, k->out);
	if (r > 0)
		n += r;
	if (n && !all)
		return n;
	n += lists_cancel(k, all);
	if (n && !all)
		return n;
	if (!(k->c.flags & IORING_ASYNC_CANCEL_FD)) {
		r = nw_timeout_cancel(k->ring, key_match, k, all, k->out);
		if (r > 0)
			n += r;
	}
	if (running)
		n = interrupt_running(k, all, n);
	if (n)
		return n;
	return running ? -EALREADY : -ENOENT;
}

void nw_cancel_ring_exit(struct nw_ring *ring)
{
	struct cancel_key k = {.ring = ring,
			       .c.flags = IORING_ASYNC_CANCEL_ANY};
	struct nw_list out, *pos, *tmp;

	nw_list_init(&out);
	k.out = &out;
	try_cancel(&k, true);
	nw_list_for_each_safe(pos, tmp, &out) {
		nw_list_del(pos);
		nw_req_complete_async(
			nw_list_entry(pos, struct nw_req, poll_node));
	}
}

int nw_cancel_req(struct nw_ring *ring, struct nw_req *target, uint64_t seq,
		  struct nw_list *out)
{
	struct cancel_key k = {
		.ring = ring, .target = target, .seq = seq, .out = out};
	int r = try_cancel(&k, false);

	return r > 0 ? (k.own ? r : 0) : r;
}

int nw_cancel_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_cancel *c = nw_req_cmd(req, struct nw_cancel);

	if (req->sqe_flags & IOSQE_BUFFER_SELECT)
		return -EINVAL;
	if (READ_ONCE(sqe->off) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	c->addr = READ_ONCE(sqe->addr);
	c->flags = READ_ONCE(sqe->cancel_flags);
	if (c->flags & ~CANCEL_FLAGS)
		return -EINVAL;
	if (c->flags & IORING_ASYNC_CANCEL_FD) {
		if (c->flags & IORING_ASYNC_CANCEL_ANY)
			return -EINVAL;
		c->fd = READ_ONCE(sqe->fd);
	}
	if (c->flags & IORING_ASYNC_CANCEL_OP) {
		if (c->flags & IORING_ASYNC_CANCEL_ANY)
			return -EINVAL;
		c->opcode = READ_ONCE(sqe->len);
	}
	return 0;
}

int nw_cancel_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_cancel *c = nw_req_cmd(req, struct nw_cancel);
	bool all =
		c->flags & (IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_ANY);
	struct nw_list out, *pos, *tmp;
	struct cancel_key k = {
		.ring = req->ring, .self = req, .c = *c, .out = &out};
	int r;

	/*
	 * A fixed fd (io_async_cancel): the slot's file, held by the request
	 * (req->file_node) so that its number names no other file meanwhile.
	 * FD_FIXED without FD is ignored, as there.
	 */
	if ((c->flags & IORING_ASYNC_CANCEL_FD) &&
	    ((c->flags & IORING_ASYNC_CANCEL_FD_FIXED) ||
	     (req->sqe_flags & IOSQE_FIXED_FILE))) {
		k.c.fd = nw_rsrc_file_get(req, (unsigned int)c->fd);
		if (k.c.fd < 0)
			return -EBADF;
		req->flags |= NW_REQ_F_FIXED_DONE;
	}
	nw_list_init(&out);
	r = try_cancel(&k, all);
	/* The cancelled complete after this CQE, as the kernel's task work. */
	nw_list_for_each_safe(pos, tmp, &out) {
		nw_list_del(pos);
		nw_req_complete_async(
			nw_list_entry(pos, struct nw_req, poll_node));
	}
	if (all)
		req->res = r > 0 ? r : 0;
	else
		req->res = r > 0 ? (k.own ? r : 0) : r;
	if (req->res < 0)
		nw_req_set_fail(req, req->res);
	return NW_COMPLETE;
}

/* ---- IORING_REGISTER_SYNC_CANCEL ---- */

/* struct io_uring_sync_cancel_reg since 6.6, where a pad byte became op. */
struct sync_cancel_reg {
	uint64_t addr;
	int32_t fd;
	uint32_t flags;
	struct __kernel_timespec timeout;
	uint8_t opcode;
	uint8_t pad[7];
	uint64_t pad2[3];
};
_Static_assert(sizeof(struct sync_cancel_reg) ==
		       sizeof(struct io_uring_sync_cancel_reg),
	       "sync_cancel_reg");

/* One pass: cancel what matches; the cancelled complete as task work. */
static int sync_try(struct nw_ring *ring, const struct sync_cancel_reg *sc)
{
	bool all =
		sc->flags & (IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_ANY);
	struct nw_list out, *pos, *tmp;
	struct cancel_key k = {.ring = ring, .out = &out};
	struct nw_rsrc_node *node = NULL;
	int r;

	k.c.addr = sc->addr;
	k.c.flags = sc->flags;
	k.c.fd = sc->fd;
	k.c.opcode = sc->opcode;
	/*
	 * A fixed slot is looked up on each pass, as the kernel does; its
	 * reference keeps the fd number from naming another file meanwhile.
	 */
	if ((sc->flags & IORING_ASYNC_CANCEL_FD) &&
	    (sc->flags & IORING_ASYNC_CANCEL_FD_FIXED)) {
		node = nw_rsrc_node_get(ring, (unsigned int)sc->fd, &k.c.fd);
		if (!node)
			return -EBADF;
	}
	nw_list_init(&out);
	r = try_cancel(&k, all);
	if (node)
		nw_rsrc_node_put(ring, node, NULL);
	nw_list_for_each_safe(pos, tmp, &out) {
		nw_list_del(pos);
		nw_req_complete_async(
			nw_list_entry(pos, struct nw_req, poll_node));
	}
	if (all)
		return r > 0 ? r : 0;
	return r > 0 ? (k.own ? r : 0) : r;
}

static long long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int sync_check(const struct sync_cancel_reg *sc)
{
	if (sc->flags & ~CANCEL_FLAGS)
		return -EINVAL;
	for (unsigned int i = 0; i < sizeof(sc->pad); i++)
		if (sc->pad[i])
			return -EINVAL;
	for (unsigned int i = 0; i < 3; i++)
		if (sc->pad2[i])
			return -EINVAL;
	/* A plain fd must be open (the kernel takes its file up front). */
	if ((sc->flags & IORING_ASYNC_CANCEL_FD) &&
	    !(sc->flags & IORING_ASYNC_CANCEL_FD_FIXED) &&
	    fcntl(sc->fd, F_GETFD) < 0)
		return -EBADF;
	return 0;
}

/*
 * The synchronous ASYNC_CANCEL (kernel io_sync_cancel): what is found is
 * cancelled and this returns 0 (with ALL/ANY the count); a match running
 * in a worker (-EALREADY) is tried again until it is gone, or until the
 * timeout ({-1, -1}: none) passes: -ETIME. Called under reg_lock, which
 * each nap lets go of (the kernel drops uring_lock while it waits): a
 * register call that unblocks the worker, or ring exit, can then run. Each
 * pass looks everything up again (sync_try), so a change made meanwhile is
 * seen; a ring released meanwhile (its fd closed by another thread) is
 * not looked at again: its exit cancelled what was found, as the kernel's
 * would once the register returned.
 */
int nw_sync_cancel(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	struct sync_cancel_reg sc;
	long long deadline = 0;
	bool timed;
	int ret;

	if (!arg || nr_args != 1)
		return -EINVAL;
	if (nw_copy_from_user(&sc, arg, sizeof(sc)))
		return -EFAULT;
	ret = sync_check(&sc);
	if (ret)
		return ret;
	ret = sync_try(ring, &sc);
	if (ret != -EALREADY)
		return ret;
	timed = sc.timeout.tv_sec != -1 || sc.timeout.tv_nsec != -1;
	if (timed) {
		struct timespec d = nw_deadline(&sc.timeout);

		deadline = nw_ts_ns(&d);
	}
	for (;;) {
		struct timespec nap = {0, 100000};
		long long left;

		ret = sync_try(ring, &sc);
		if (ret != -EALREADY)
			break;
		left = timed ? deadline - mono_ns() : nap.tv_nsec;
		if (left <= 0) {
			ret = -ETIME;
			break;
		}
		if (left < nap.tv_nsec)
			nap.tv_nsec = left;
		pthread_mutex_unlock(&ring->reg_lock);
		nanosleep(&nap, NULL);
		pthread_mutex_lock(&ring->reg_lock);
		/* Let go of meanwhile: its exit cancels everything. */
		if (unlikely(ring->released ||
			     __atomic_load_n(&ring->dead, __ATOMIC_ACQUIRE)))
			return 0;
	}
	return ret == -ENOENT || ret > 0 ? 0 : ret;
}
