/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_EPOLL_CTL (5.6+): the program's epoll_ctl as a request.
 * Semantics: kernel io_uring/epoll.c. sqe->fd is the epoll fd, a plain fd
 * (the opcode takes no file, so IOSQE_FIXED_FILE does not apply), len the
 * op, off the target fd, addr its struct epoll_event, copied at prep
 * unless the op is EPOLL_CTL_DEL (-EFAULT for a bad pointer, even with an
 * op that the call then rejects). The result is the system call's. The
 * kernel tries it nonblocking and punts to io-wq when the epoll set's
 * mutex is contended; epoll_ctl does not block here, so it runs inline.
 * The call itself is loop.c's (the only file that calls epoll).
 */
#include <errno.h>
#include <string.h>
#include "epoll.h"
#include "loop.h"

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

	if (ret < 0)
		return ret;
	req->res = 0;
	return NW_COMPLETE;
}
