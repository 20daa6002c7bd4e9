/* SPDX-License-Identifier: MIT */
/*
 * Cancellation: IORING_OP_ASYNC_CANCEL by user_data, fd, opcode or any,
 * one or all, and the cancel of one request that a LINK_TIMEOUT asks for.
 * Each subsystem is asked in turn, as the kernel's io_try_cancel does:
 * the worker pool (queued work is taken back, running work is -EALREADY),
 * then requests parked on readiness (polls included), then timeouts.
 * A cancelled request completes with -ECANCELED.
 * Semantics: kernel io_uring/cancel.c, reference/kernel-semantics.md 9.
 */
#include <errno.h>
#include "cancel.h"
#include "opdef.h"
#include "poll.h"
#include "timeout.h"

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
};

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
	    (!nw_opdefs[req->opcode].needs_file || req->fd != k->c.fd))
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
	return key_match(container_of(work, struct nw_req, work), arg);
}

static void work_cancelled(struct nw_work *work, void *arg)
{
	struct cancel_key *k = arg;
	struct nw_req *req = container_of(work, struct nw_req, work);

	nw_req_set_fail(req, -ECANCELED);
	nw_list_add_tail(&req->poll_node, k->out);
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
	if (!(k->c.flags & IORING_ASYNC_CANCEL_FD)) {
		r = nw_timeout_cancel(k->ring, key_match, k, all, k->out);
		if (r > 0)
			n += r;
	}
	if (n)
		return n;
	return running ? -EALREADY : -ENOENT;
}

int nw_cancel_req(struct nw_ring *ring, struct nw_req *target, uint64_t seq,
		  struct nw_list *out)
{
	struct cancel_key k = {
		.ring = ring, .target = target, .seq = seq, .out = out};
	int r = try_cancel(&k, false);

	return r > 0 ? 0 : r;
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

	/* No registered file table yet: a fixed fd matches nothing. */
	if (c->flags & IORING_ASYNC_CANCEL_FD_FIXED)
		return -EBADF;
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
		req->res = r > 0 ? 0 : r;
	if (req->res < 0)
		nw_req_set_fail(req, req->res);
	return NW_COMPLETE;
}
