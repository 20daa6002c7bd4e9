/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_MSG_RING: post a CQE on another ring (IORING_MSG_DATA), or
 * install one of our registered files into another ring's file table and
 * tell it with a CQE (IORING_MSG_SEND_FD). Both rings are nowait rings of
 * this process; an fd that is not one (a file, a kernel ring) is -EBADFD.
 *
 * The target's CQE goes the way of any CQE posted from outside its submit
 * side: as task work (rsrc.c nw_post_aux_async), posted at once when the
 * target's submit side is free, by its holder otherwise, and only inside
 * enter on a DEFER_TASKRUN target. Its waiters and eventfd hear of it as
 * of any CQE; a full CQ puts it on the overflow list. A message to our own
 * ring goes straight into the current batch, ahead of this request's CQE,
 * as the kernel posts it.
 * Semantics: kernel io_uring/msg_ring.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "fdhigh.h"
#include "complete.h"
#include "msgring.h"
#include "rsrc.h"

struct nw_msg {
	uint64_t user_data; /* of the target's CQE */
	uint32_t len;	    /* DATA: the target CQE's res */
	uint32_t cmd;	    /* IORING_MSG_DATA or IORING_MSG_SEND_FD */
	uint32_t src_fd;    /* SEND_FD: our fixed slot */
	uint32_t dst_fd;    /* SEND_FD: file_index; DATA: cqe flags (PASS) */
	uint32_t flags;	    /* IORING_MSG_RING_* */
};

#define MSG_RING_FLAGS (IORING_MSG_RING_CQE_SKIP | IORING_MSG_RING_FLAGS_PASS)

int nw_msg_ring_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_msg *msg = nw_req_cmd(req, struct nw_msg);

	if (READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->personality))
		return -EINVAL;
	msg->user_data = READ_ONCE(sqe->off);
	msg->len = READ_ONCE(sqe->len);
	msg->cmd = (uint32_t)READ_ONCE(sqe->addr);
	msg->src_fd = (uint32_t)READ_ONCE(sqe->addr3);
	msg->dst_fd = READ_ONCE(sqe->file_index);
	msg->flags = READ_ONCE(sqe->msg_ring_flags);
	if (msg->flags & ~MSG_RING_FLAGS)
		return -EINVAL;
	return 0;
}

/*
 * Post on target; straight into the batch when it is our own ring.
 * -ENOMEM (nothing posted) when the message cannot be allocated; lost:
 * counted as the target's dropped CQE.
 */
static int post(struct nw_req *req, struct nw_ring *target, uint64_t ud,
		int res, uint32_t cflags, unsigned int issue_flags, bool lost)
{
	struct nw_req aux;

	if (target != req->ring || !(issue_flags & NW_ISSUE_F_NONBLOCK))
		return nw_post_aux_async(target, ud, res, cflags, lost);
	aux.user_data = ud;
	aux.cflags = cflags;
	aux.trace = NULL;
	aux.big[0] = aux.big[1] = 0;
	nw_cq_add(target, &aux, res);
	return 0;
}

static int msg_data(struct nw_req *req, struct nw_ring *target,
		    unsigned int issue_flags)
{
	struct nw_msg *msg = nw_req_cmd(req, struct nw_msg);
	uint32_t cflags = 0;

	if (msg->src_fd || (msg->flags & ~IORING_MSG_RING_FLAGS_PASS))
		return -EINVAL;
	if (!(msg->flags & IORING_MSG_RING_FLAGS_PASS) && msg->dst_fd)
		return -EINVAL;
	if (__atomic_load_n(&target->disabled, __ATOMIC_ACQUIRE))
		return -EBADFD;
	if (msg->flags & IORING_MSG_RING_FLAGS_PASS)
		cflags = msg->dst_fd;
	/* io_msg_data_remote: the sender hears of a failed allocation. */
	return post(req, target, msg->user_data, (int)msg->len, cflags,
		    issue_flags, false);
}

static int msg_send_fd(struct nw_req *req, struct nw_ring *target,
		       unsigned int issue_flags)
{
	struct nw_msg *msg = nw_req_cmd(req, struct nw_msg);
	struct nw_rsrc_node *node;
	int fd, ret;

	if (msg->len)
		return -EINVAL;
	if (target == req->ring)
		return -EINVAL;
	if (__atomic_load_n(&target->disabled, __ATOMIC_ACQUIRE))
		return -EBADFD;
	/* The slot's file cannot close under the dup: a reference. */
	node = nw_rsrc_node_get(req->ring, msg->src_fd, &fd);
	if (!node)
		return -EBADF;
	/* Our own reference, which the target's table takes over. */
	fd = nw_fd_dup_high(fd);
	nw_rsrc_node_put(req->ring, node, req);
	if (fd < 0)
		return -EBADF;
	ret = nw_rsrc_install(target, fd, msg->dst_fd, NULL);
	if (ret < 0 || (msg->flags & IORING_MSG_RING_CQE_SKIP))
		return ret;
	/*
	 * io_msg_install_complete: the file is in; a CQE that cannot be
	 * posted is the target's dropped CQE and the sender's -EOVERFLOW.
	 */
	if (post(req, target, msg->user_data, ret, 0, issue_flags, true))
		return -EOVERFLOW;
	return ret;
}

int nw_msg_ring_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_msg *msg = nw_req_cmd(req, struct nw_msg);
	struct nw_ring *target;
	int ret = nw_ring_lookup(req->fd, &target);

	if (ret == -EBADF)
		return -EBADF;
	if (ret)
		return -EBADFD; /* a file that is not a nowait ring */
	switch (msg->cmd) {
	case IORING_MSG_DATA:
		ret = msg_data(req, target, issue_flags);
		break;
	case IORING_MSG_SEND_FD:
		ret = msg_send_fd(req, target, issue_flags);
		break;
	default:
		ret = -EINVAL;
		break;
	}
	if (ret < 0)
		return ret;
	req->res = ret;
	return NW_COMPLETE;
}
