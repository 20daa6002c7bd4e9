/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_EPOLL_CTL (5.6+) and IORING_OP_EPOLL_WAIT (6.15): the
 * program's epoll_ctl and epoll_wait as requests.
 * Semantics: kernel io_uring/epoll.c. sqe->fd is the epoll fd, a plain fd
 * (the opcode takes no file, so IOSQE_FIXED_FILE does not apply), len the
 * op, off the target fd, addr its struct epoll_event, copied at prep
 * unless the op is EPOLL_CTL_DEL (-EFAULT for a bad pointer, even with an
 * op that the call then rejects). The result is the system call's, but
 * for a target that is a ring's fd: the kernel's ring file is pollable,
 * the memfd is not (-EPERM), so the checks after the kernel's poll test
 * are made by hand (nw_loop_ctl_ring) and only an ADD stays -EPERM. The
 * kernel tries it nonblocking and punts to io-wq when the epoll set's
 * mutex is contended; epoll_ctl does not block here, so it runs inline.
 * The call itself is loop.c's (the only file that calls epoll).
 *
 * EPOLL_WAIT: sqe->fd is the epoll set (a file: fixed slots work), addr
 * the events array, len maxevents. Inline, epoll_wait with no timeout
 * harvests what is ready; none is EAGAIN, and the request parks on the
 * epoll fd's own readiness (opdef pollin) like a read on a pipe, so no
 * worker sleeps in it. A worker (only when parking was given up) blocks
 * in epoll_wait; a cancel interrupts it. A non-epoll fd is -EINVAL; the
 * result is the number of events, an error fails the link. One
 * difference: a bad events array is -EFAULT at once here, where the
 * kernel, which checks it only when it has events to write, waits first.
 */
#include <errno.h>
#include <string.h>
#include "epoll.h"
#include "loop.h"
#include "poll.h"

struct nw_epctl {
	int epfd;
	int op;
	int fd;
	struct nw_ep_event ev;
};
_Static_assert(sizeof(struct nw_epctl) <= NW_REQ_CMD_SIZE, "nw_epctl too big");

int nw_epctl_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_epctl *ep = nw_req_cmd(req, struct nw_epctl);
	const void *uev;

	if (READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	ep->epfd = READ_ONCE(sqe->fd);
	ep->op = (int)READ_ONCE(sqe->len);
	ep->fd = (int)READ_ONCE(sqe->off);
	memset(&ep->ev, 0, sizeof(ep->ev));
	if (nw_loop_ctl_has_event(ep->op)) {
		uev = (const void *)(uintptr_t)READ_ONCE(sqe->addr);
		if (nw_copy_from_user(&ep->ev, uev, sizeof(ep->ev)))
			return -EFAULT;
	}
	return 0;
}

int nw_epctl_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_epctl *ep = nw_req_cmd(req, struct nw_epctl);
	int ret = nw_loop_ctl(ep->epfd, ep->op, ep->fd, &ep->ev);

	/* A ring's fd: the kernel's is pollable, the memfd is not. */
	if (ret == -EPERM && nw_is_ring_fd(ep->fd))
		ret = nw_loop_ctl_ring(ep->epfd, ep->op, &ep->ev);
	if (ret < 0)
		return ret;
	req->res = 0;
	return NW_COMPLETE;
}

struct nw_epwait {
	uint64_t events;
	int maxevents;
};

int nw_epwait_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_epwait *ew = nw_req_cmd(req, struct nw_epwait);

	if (READ_ONCE(sqe->off) || READ_ONCE(sqe->rw_flags) ||
	    READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	ew->maxevents = (int)READ_ONCE(sqe->len);
	ew->events = READ_ONCE(sqe->addr);
	return 0;
}

int nw_epwait_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_epwait *ew = nw_req_cmd(req, struct nw_epwait);
	bool nonblock = issue_flags & NW_ISSUE_F_NONBLOCK;
	int kind, ret;

	if (nonblock && nw_poll_prepare(req, NW_POLLIN, &kind))
		return NW_RETRY;
	ret = nw_loop_wait_user(req->fd, (void *)(uintptr_t)ew->events,
				ew->maxevents, !nonblock);
	if (ret == 0 && nonblock)
		return NW_RETRY;
	if (ret < 0)
		return ret;
	req->res = ret;
	return NW_COMPLETE;
}
