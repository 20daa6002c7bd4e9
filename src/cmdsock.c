/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_URING_CMD: the commands of a file's ->uring_cmd, of which only
 * /dev/null's (a no-op) and sockets' (io_uring/cmd_net.c) can be had on
 * ordinary system calls:
 * SOCKET_URING_OP_SIOCINQ and SIOCOUTQ (the ioctls), GETSOCKOPT (SOL_SOCKET
 * only; the result is the option's length) and SETSOCKOPT. GETSOCKNAME
 * (6.19) is unknown to 6.18: -EOPNOTSUPP, as any unknown command. Semantics: kernel io_uring/uring_cmd.c and cmd_net.c
 * (6.18). The SQE fields are read at prep, as the kernel copies the SQE
 * there; the option value is read or written at issue.
 *
 * The kernel's order: a file without ->uring_cmd (anything but a socket
 * and /dev/null) gets -EOPNOTSUPP, also on an IOPOLL ring (no socket
 * polls); /dev/null's (drivers/char/mem.c uring_cmd_null) takes any
 * command and returns 0 (-EOPNOTSUPP on IOPOLL: no uring_cmd_iopoll there);
 * SIOCINQ and
 * SIOCOUTQ go through the protocol's ioctl (sk_prot->ioctl), which only
 * the inet protocols have here: -EOPNOTSUPP on AF_UNIX, netlink and
 * packet sockets, as for an unknown command.
 * SOCKET_URING_OP_TX_TIMESTAMP: a multishot parked on the socket's
 * POLLERR that reads the error queue (recvmsg MSG_ERRQUEUE) and posts each
 * transmit timestamp as a 32-byte CQE, on a CQE32 or CQE_MIXED ring only
 * (else -EINVAL). Unlike the kernel, which takes only payload-less
 * timestamp skbs (SOF_TIMESTAMPING_OPT_TSONLY) and leaves the rest, it
 * reads every message there, and drops what is not a timestamp; it is not
 * run from a worker (IOSQE_ASYNC: -EOPNOTSUPP).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <time.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "net.h"
#include "complete.h"
#include "poll.h"

/* cqe->flags of a timestamp (6.17+ header). */
#define NW_TSTAMP_HW	     (1U << 16)
#define NW_TSTAMP_TYPE_SHIFT 17

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
	bool mshot; /* IORING_URING_CMD_MULTISHOT (with a provided buffer) */
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
	bool select = req->sqe_flags & IOSQE_BUFFER_SELECT;

	if (sqe_word(sqe, offsetof(struct io_uring_sqe, off) + 4)) /* __pad1 */
		return -EINVAL;
	if (flags & ~NW_URING_CMD_MASK)
		return -EINVAL;
	/*
	 * As 6.18's prep: FIXED refuses a provided buffer, and MULTISHOT goes
	 * with IOSQE_BUFFER_SELECT and only with it (-EINVAL either way).
	 */
	if ((flags & NW_URING_CMD_FIXED) && select)
		return -EINVAL;
	if (!!(flags & NW_URING_CMD_MULTISHOT) != select)
		return -EINVAL;
	c->mshot = select;
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

/* /dev/null (char 1:3): its ->uring_cmd does nothing and returns 0. */
static bool cmd_is_devnull(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISCHR(st.st_mode) &&
	       st.st_rdev == makedev(1, 3);
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
	/*
	 * The system call, not libc's function: optval is the program's
	 * address, any address; the kernel answers -EFAULT for a bad one,
	 * where a wrapper that looks at it first (ASan's) would fault.
	 */
	if (syscall(SYS_getsockopt, fd, c->level, c->optname, c->optval, &len))
		return -errno;
	return (int)len;
}

/*
 * One message of the error queue: a timestamp posted as a 32-byte CQE
 * with F_MORE, its key in res, its type in the flags, the time in the
 * second half (io_process_timestamp_skb). 1: go on; 0: queue empty or CQ
 * full; -errno.
 */
static int ts_one(struct nw_req *req)
{
	char ctl[256];
	struct msghdr h = {.msg_control = ctl, .msg_controllen = sizeof(ctl)};
	struct scm_timestamping tss;
	struct sock_extended_err ee;
	bool have_ts = false, have_ee = false, hw;

	if (nw_cq_full(req->ring))
		return 0;
	if (recvmsg(req->fd, &h, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
		return errno == EAGAIN ? 0 : -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&h); cm;
	     cm = CMSG_NXTHDR(&h, cm)) {
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_TIMESTAMPING) {
			memcpy(&tss, CMSG_DATA(cm), sizeof(tss));
			have_ts = true;
		} else if ((cm->cmsg_level == SOL_IP &&
			    cm->cmsg_type == IP_RECVERR) ||
			   (cm->cmsg_level == SOL_IPV6 &&
			    cm->cmsg_type == IPV6_RECVERR)) {
			memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
			have_ee = true;
		}
	}
	if (!have_ts || !have_ee || ee.ee_origin != SO_EE_ORIGIN_TIMESTAMPING)
		return 1;
	hw = !tss.ts[0].tv_sec && !tss.ts[0].tv_nsec;
	req->cflags = IORING_CQE_F_MORE | ee.ee_info << NW_TSTAMP_TYPE_SHIFT |
		      (hw ? NW_TSTAMP_HW : 0) |
		      (req->ring->cqe_mixed ? IORING_CQE_F_32 : 0);
	req->big[0] = (uint64_t)tss.ts[hw ? 2 : 0].tv_sec;
	req->big[1] = (uint64_t)tss.ts[hw ? 2 : 0].tv_nsec;
	nw_cq_add(req->ring, req, (int)ee.ee_data);
	req->cflags = 0;
	req->big[0] = req->big[1] = 0;
	return 1;
}

/*
 * TX_TIMESTAMP: a multishot on the socket's POLLERR (io_cmd_poll_multishot):
 * each turn, on the submit side, posts what the error queue holds.
 */
static int ts_issue(struct nw_req *req, unsigned int issue_flags)
{
	if (req->ring->cqe_shift != 5 && !req->ring->cqe_mixed)
		return -EINVAL;
	if (!(issue_flags & NW_ISSUE_F_MSHOT)) {
		int ret;

		if (!(issue_flags & NW_ISSUE_F_NONBLOCK))
			return -EOPNOTSUPP; /* not from a worker */
		ret = nw_poll_arm_mshot(req, NW_POLLERR);
		return ret ? ret : NW_QUEUED;
	}
	for (int i = 0; i < NW_MSHOT_MAX_LOOPS; i++) {
		int r = ts_one(req);

		if (r <= 0)
			return r ? r : NW_QUEUED;
	}
	nw_poll_mshot_requeue(req);
	return NW_QUEUED;
}

/*
 * The command's result. A multishot one (MULTISHOT with a provided
 * buffer) that failed ends with its error, as in the kernel; one that
 * succeeded the kernel leaves to the driver to complete (io_uring_cmd:
 * IOU_ISSUE_SKIP_COMPLETE), and neither /dev/null nor a socket command
 * ever does, nor can it be cancelled: a request lost until the ring's
 * exit work, which then waits for it for good. nowait refuses it
 * instead: -EOPNOTSUPP (allowlisted in test/fuzz/allowlist.txt).
 */
static int cmd_done(struct nw_req *req, struct nw_cmd *c, int ret)
{
	if (ret < 0)
		return ret;
	if (c->mshot)
		return -EOPNOTSUPP;
	req->res = ret;
	return NW_COMPLETE;
}

int nw_uring_cmd_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_cmd *c = nw_req_cmd(req, struct nw_cmd);
	int ret, domain = cmd_sock_domain(req->fd);

	if (domain == -EOPNOTSUPP && cmd_is_devnull(req->fd) &&
	    !(req->ring->flags & IORING_SETUP_IOPOLL))
		return cmd_done(req, c, 0);
	if (domain < 0)
		return domain;
	if (req->ring->flags & IORING_SETUP_IOPOLL)
		return -EOPNOTSUPP;
	if (c->mshot && c->op == NW_SOCK_TX_TIMESTAMP)
		return -EOPNOTSUPP; /* not done with a provided buffer */
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
		ret = syscall(SYS_setsockopt, req->fd, c->level, c->optname,
			      c->optval, (socklen_t)c->optlen)
			      ? -errno
			      : 0;
		break;
	case NW_SOCK_TX_TIMESTAMP:
		return ts_issue(req, issue_flags);
	default:
		ret = -EOPNOTSUPP;
	}
	return cmd_done(req, c, ret);
}
