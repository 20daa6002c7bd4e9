/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_URING_CMD: the commands of a file's ->uring_cmd, of which only
 * sockets' (io_uring/cmd_net.c) can be had on ordinary system calls:
 * SOCKET_URING_OP_SIOCINQ and SIOCOUTQ (the ioctls), GETSOCKOPT (SOL_SOCKET
 * only; the result is the option's length) and SETSOCKOPT. GETSOCKNAME
 * (6.19) is unknown to 6.18: -EOPNOTSUPP, as any unknown command. Semantics: kernel io_uring/uring_cmd.c and cmd_net.c
 * (6.18). The SQE fields are read at prep, as the kernel copies the SQE
 * there; the option value is read or written at issue.
 *
 * The kernel's order: a file without ->uring_cmd (anything but a socket)
 * gets -EOPNOTSUPP, also on an IOPOLL ring (no socket polls); SIOCINQ and
 * SIOCOUTQ go through the protocol's ioctl (sk_prot->ioctl), which only
 * the inet protocols have here: -EOPNOTSUPP on AF_UNIX, netlink and
 * packet sockets, as for an unknown command.
 * SOCKET_URING_OP_TX_TIMESTAMP (a multishot on the error queue) is not
 * implemented: -EOPNOTSUPP, after the kernel's -EINVAL on a ring without
 * 32-byte CQEs.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "net.h"

#define NW_URING_CMD_FIXED     (1U << 0)
#define NW_URING_CMD_MULTISHOT (1U << 1)
#define NW_URING_CMD_MASK      (NW_URING_CMD_FIXED | NW_URING_CMD_MULTISHOT)

enum {
	NW_SOCK_SIOCINQ,
	NW_SOCK_SIOCOUTQ,
	NW_SOCK_GETSOCKOPT,
	NW_SOCK_SETSOCKOPT,
	NW_SOCK_TX_TIMESTAMP,
};

struct nw_cmd {
	uint32_t op;
	int level, optname, optlen;
	void *optval;
};
_Static_assert(sizeof(struct nw_cmd) <= NW_REQ_CMD_SIZE, "nw_cmd too big");

/* The SQE's words as the socket commands name them (6.7+ header). */
static uint32_t sqe_word(const struct io_uring_sqe *sqe, size_t off)
{
	uint32_t w;

	memcpy(&w, (const char *)sqe + off, sizeof(w));
	return w;
}

int nw_uring_cmd_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_cmd *c = nw_req_cmd(req, struct nw_cmd);
	uint32_t flags = READ_ONCE(sqe->uring_cmd_flags);

	if (sqe_word(sqe, offsetof(struct io_uring_sqe, off) + 4)) /* __pad1 */
		return -EINVAL;
	if (flags & ~NW_URING_CMD_MASK)
		return -EINVAL;
	if ((flags & NW_URING_CMD_FIXED) && (flags & NW_URING_CMD_MULTISHOT))
		return -EINVAL;
	/* MULTISHOT needs IOSQE_BUFFER_SELECT, which is refused before. */
	if (flags & NW_URING_CMD_MULTISHOT)
		return -EINVAL;
	c->op = READ_ONCE(sqe->cmd_op);
	c->level = (int)sqe_word(sqe, offsetof(struct io_uring_sqe, addr));
	c->optname =
		(int)sqe_word(sqe, offsetof(struct io_uring_sqe, addr) + 4);
	c->optlen = (int)READ_ONCE(sqe->file_index);
	c->optval = (void *)(uintptr_t)READ_ONCE(sqe->addr3);
	return 0;
}

/* A socket (the file has ->uring_cmd)? Its domain, or -errno. */
static int cmd_sock_domain(int fd)
{
	socklen_t len = sizeof(int);
	int domain;

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len))
		return errno == ENOTSOCK ? -EOPNOTSUPP : -errno;
	return domain;
}

/* SIOCINQ, SIOCOUTQ: through sk_prot->ioctl, which only inet has here. */
static int cmd_ioctl(int fd, int domain, unsigned long what)
{
	int arg = 0;

	if (domain != AF_INET && domain != AF_INET6)
		return -EOPNOTSUPP;
	return ioctl(fd, what, &arg) ? -errno : arg;
}

static int cmd_getsockopt(int fd, struct nw_cmd *c)
{
	socklen_t len = (socklen_t)c->optlen;

	if (c->level != SOL_SOCKET)
		return -EOPNOTSUPP;
	if (c->optlen < 0)
		return -EINVAL;
	if (getsockopt(fd, c->level, c->optname, c->optval, &len))
		return -errno;
	return (int)len;
}

int nw_uring_cmd_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_cmd *c = nw_req_cmd(req, struct nw_cmd);
	int ret, domain = cmd_sock_domain(req->fd);

	if (domain < 0)
		return domain;
	if (req->ring->flags & IORING_SETUP_IOPOLL)
		return -EOPNOTSUPP;
	switch (c->op) {
	case NW_SOCK_SIOCINQ:
		ret = cmd_ioctl(req->fd, domain, SIOCINQ);
		break;
	case NW_SOCK_SIOCOUTQ:
		ret = cmd_ioctl(req->fd, domain, SIOCOUTQ);
		break;
	case NW_SOCK_GETSOCKOPT:
		ret = cmd_getsockopt(req->fd, c);
		break;
	case NW_SOCK_SETSOCKOPT:
		ret = setsockopt(req->fd, c->level, c->optname, c->optval,
				 (socklen_t)c->optlen)
			      ? -errno
			      : 0;
		break;
	case NW_SOCK_TX_TIMESTAMP:
		ret = (req->ring->cqe_shift == 5 || req->ring->cqe_mixed)
			      ? -EOPNOTSUPP
			      : -EINVAL;
		break;
	default:
		ret = -EOPNOTSUPP;
	}
	if (ret < 0)
		return ret;
	req->res = ret;
	return NW_COMPLETE;
}
