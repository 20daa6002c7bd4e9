/* SPDX-License-Identifier: MIT */
/*
 * POLL_ADD's prep (its issue and park are poll.c's), and
 * IORING_OP_POLL_REMOVE (io_uring/poll.c io_poll_remove): find a parked
 * POLL_ADD by user_data in ring->poll_hash and cancel it, or update its
 * mask and user_data and arm it again (nw_poll_add_issue). A multishot
 * one whose event is queued for the submit side stays alive for its task
 * work. Locks: poll_lock, never held across a completion.
 */
#include <errno.h>
#include "poll-int.h"
#include "complete.h"

/* ---- IORING_OP_POLL_ADD's prep ---- */

/* io_poll_parse_events: the 32-bit mask, plus what is always reported. */
unsigned int nw_poll_parse_events(const struct io_uring_sqe *sqe)
{
	return READ_ONCE(sqe->poll32_events) | (NW_POLLERR | NW_POLLHUP);
}

int nw_poll_add_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	unsigned int flags;

	if (READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->off) ||
	    READ_ONCE(sqe->addr))
		return -EINVAL;
	/* 6.18 accepts no flag but MULTI here (LEVEL included: -EINVAL). */
	flags = READ_ONCE(sqe->len);
	if (flags & ~IORING_POLL_ADD_MULTI)
		return -EINVAL;
	if ((flags & IORING_POLL_ADD_MULTI) && (req->flags & NW_REQ_F_CQE_SKIP))
		return -EINVAL;
	req->poll_mask = nw_poll_parse_events(sqe);
	req->poll_events = 0;
	req->poll_arms = 0;
	req->flags |= NW_REQ_F_POLL_ADD;
	if (flags & IORING_POLL_ADD_MULTI)
		req->flags |= NW_REQ_F_MSHOT;
	nw_poll_ring_of(req)->target = NULL;
	nw_poll_ring_of(req)->wake_res = 0;
	nw_poll_ring_of(req)->wake_ev = 0;
	return 0;
}

/* ---- IORING_OP_POLL_REMOVE ---- */

struct nw_poll_update {
	uint64_t old_user_data, new_user_data;
	unsigned int events;
	bool update_events, update_user_data;
};
_Static_assert(sizeof(struct nw_poll_update) <= NW_REQ_CMD_SIZE, "size");

int nw_poll_remove_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_poll_update *upd = nw_req_cmd(req, struct nw_poll_update);
	unsigned int flags;

	if (READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	flags = READ_ONCE(sqe->len);
	if (flags & ~(IORING_POLL_UPDATE_EVENTS | IORING_POLL_UPDATE_USER_DATA |
		      IORING_POLL_ADD_MULTI))
		return -EINVAL;
	if (flags == IORING_POLL_ADD_MULTI)
		return -EINVAL;
	upd->old_user_data = READ_ONCE(sqe->addr);
	upd->update_events = flags & IORING_POLL_UPDATE_EVENTS;
	upd->update_user_data = flags & IORING_POLL_UPDATE_USER_DATA;
	upd->new_user_data = READ_ONCE(sqe->off);
	if (!upd->update_user_data && upd->new_user_data)
		return -EINVAL;
	if (upd->update_events) {
		upd->events = nw_poll_parse_events(sqe);
		if (flags & IORING_POLL_ADD_MULTI)
			upd->events |= 1U << 31; /* multishot from now on */
	} else if (READ_ONCE(sqe->poll32_events)) {
		return -EINVAL;
	}
	return 0;
}

/* Find and unpark the POLL_ADD with user_data. Under poll_lock. */
static struct nw_req *poll_find(struct nw_ring *ring, uint64_t user_data)
{
	struct nw_list *head = nw_poll_bucket(ring, user_data), *pos;

	for (pos = head->next; pos != head; pos = pos->next) {
		struct nw_poll_ring *pr =
			nw_list_entry(pos, struct nw_poll_ring, hash_node);
		struct nw_req *r = container_of((void *)pr, struct nw_req, cmd);

		if (r->user_data != user_data)
			continue;
		nw_poll_unpark(ring, r);
		return r;
	}
	return NULL;
}

static void target_finish(struct nw_req *target, unsigned int issue_flags)
{
	if (issue_flags & NW_ISSUE_F_NONBLOCK)
		nw_req_finish(target, true);
	else
		nw_req_complete_async(target);
}

/* Apply an update to target (unparked, owned by us). */
static void poll_update_apply(struct nw_req *target,
			      const struct nw_poll_update *upd, bool queued)
{
	if (upd->update_user_data)
		target->user_data = upd->new_user_data;
	if (!upd->update_events)
		return;
	target->poll_mask = upd->events & ~(1U << 31);
	/* An event on its way is delivered as multishot: keep the kind. */
	if (queued)
		return;
	if (upd->events & (1U << 31))
		target->flags |= NW_REQ_F_MSHOT;
	else
		target->flags &= ~NW_REQ_F_MSHOT;
}

int nw_poll_remove_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_poll_update *upd = nw_req_cmd(req, struct nw_poll_update);
	bool update = upd->update_events || upd->update_user_data;
	struct nw_ring *ring = req->ring;
	struct nw_req *target;
	bool queued;
	int r;

	pthread_mutex_lock(&ring->poll_lock);
	target = poll_find(ring, upd->old_user_data);
	queued = target && (target->flags & NW_REQ_F_TW_QUEUED);
	if (queued && !update)
		target->poll_canceled = true; /* mshot_tw ends it */
	if (queued && update) {
		/*
		 * A multishot with an event queued for the submit side: it
		 * must stay alive for mshot_tw, so it is parked again as
		 * it is, with the update, and not re-armed or finished here.
		 */
		poll_update_apply(target, upd, true);
		nw_poll_park(ring, target->pfd, target, target->poll_mask);
	}
	pthread_mutex_unlock(&ring->poll_lock);
	req->res = 0;
	if (!target)
		return -ENOENT;
	if (queued)
		return NW_COMPLETE;
	if (!update) {
		nw_req_set_fail(target, -ECANCELED);
		target_finish(target, issue_flags);
		return NW_COMPLETE;
	}
	poll_update_apply(target, upd, false);
	/* Re-arm: it may be ready under the new mask. */
	r = nw_poll_add_issue(target, issue_flags);
	if (r != NW_QUEUED) {
		if (r < 0)
			nw_req_set_fail(target, r);
		target_finish(target, issue_flags);
	}
	return NW_COMPLETE;
}
