/* SPDX-License-Identifier: MIT */
/*
 * SEND, RECV, SENDMSG, RECVMSG, ACCEPT, CONNECT, SHUTDOWN, SOCKET.
 * Semantics: kernel io_uring/net.c (6.18) and reference/kernel-semantics.md
 * 1.2-1.5 and 5; the model is rw.c.
 *
 * Send and receive: the inline attempt passes MSG_DONTWAIT, which every
 * socket honours whatever its O_NONBLOCK; EAGAIN parks the request on
 * readiness. A worker makes the same call without MSG_DONTWAIT. Sends
 * always add MSG_NOSIGNAL (-EPIPE, never SIGPIPE). A program-set
 * MSG_DONTWAIT makes -EAGAIN final. With MSG_WAITALL a short transfer on a
 * stream or seqpacket socket is continued, accumulating, until complete, EOF
 * or an error; a result shorter than asked fails a link. RECVMSG writes
 * msg_namelen, msg_controllen and msg_flags back to the program's msghdr
 * after each call, as recvmsg(2) does. Everything the SQE points to that
 * the kernel copies at prep (msghdr, iovec array, destination address) is
 * copied at prep (SUBMIT_STABLE); control data is read at issue, as there.
 *
 * ACCEPT: accept4 has no per-call nonblocking flag and the program's
 * O_NONBLOCK is never changed, so the inline attempt polls the listener
 * first and calls accept4 only when it is readable (the one way inline
 * accept could still block: another thread takes the connection between
 * the poll and the accept4 on a blocking listener). A worker may block.
 * CONNECT: on a blocking socket connect blocks, so it goes to a worker; on
 * an O_NONBLOCK socket EINPROGRESS parks it for POLLOUT and SO_ERROR gives
 * the result. SHUTDOWN and SOCKET run inline.
 *
 * Not supported (refused as an older kernel would): provided buffers
 * (BUFFER_SELECT, bundles, multishot recv), multishot accept and direct
 * descriptors (file_index).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "net.h"
#include "poll.h"

/* sqe->ioprio flags of send/recv and accept (the 6.1 header lacks some). */
#define NW_RECVSEND_POLL_FIRST (1U << 0)
#define NW_RECV_MULTISHOT      (1U << 1)
#define NW_RECVSEND_BUNDLE     (1U << 4)
#define NW_SEND_VECTORIZED     (1U << 5)
#define NW_SEND_FLAGS \
	(NW_RECVSEND_POLL_FIRST | NW_RECVSEND_BUNDLE | NW_SEND_VECTORIZED)
#define NW_RECV_FLAGS \
	(NW_RECVSEND_POLL_FIRST | NW_RECV_MULTISHOT | NW_RECVSEND_BUNDLE)
#define NW_ACCEPT_MULTISHOT  (1U << 0)
#define NW_ACCEPT_DONTWAIT   (1U << 1)
#define NW_ACCEPT_POLL_FIRST (1U << 2)
#define NW_ACCEPT_FLAGS \
	(NW_ACCEPT_MULTISHOT | NW_ACCEPT_DONTWAIT | NW_ACCEPT_POLL_FIRST)

#define NW_MAX_RW_COUNT ((size_t)(INT_MAX & ~4095))
#define NW_UIO_MAXIOV	1024
/* Above any user address (57-bit paging included): access_ok fails. */
#define NW_USER_TOP	0x00fffffffffff000ULL

/* The msghdr forms and SEND to an address: req->async. */
struct nw_msg {
	struct msghdr hdr;   /* what the call gets */
	struct msghdr *umsg; /* RECVMSG: the program's, for the write-back */
	socklen_t namelen;   /* as prepared: each call overwrites hdr's */
	size_t controllen;   /* likewise */
	struct sockaddr_storage addr; /* the copied destination (sends) */
	struct iovec iov[];	      /* the copied iovec array */
};

struct nw_sr {
	struct iovec *iov; /* iovecs left: fast_iov or msg->iov */
	struct nw_msg *msg;
	struct iovec fast_iov;
	size_t done;  /* bytes transferred so far (MSG_WAITALL) */
	size_t total; /* bytes asked for */
	unsigned int nr_iov;
	int msg_flags;	/* the program's, plus MSG_NOSIGNAL for sends */
	uint16_t flags; /* IORING_RECVSEND_* (sqe->ioprio) */
	bool send;
	bool vec;	  /* use sendmsg/recvmsg with msg->hdr */
	int8_t sock_type; /* SO_TYPE, 0 until learnt, -1 unknown */
};
_Static_assert(sizeof(struct nw_sr) <= NW_REQ_CMD_SIZE, "nw_sr too big");

static bool user_range_ok(const void *p, size_t len)
{
	uint64_t a = (uintptr_t)p;

	return a <= NW_USER_TOP && len <= NW_USER_TOP - a;
}

/* __import_iovec: negative lengths, kernel ranges, MAX_RW_COUNT total. */
static int iov_check(struct iovec *iov, unsigned int nr, size_t *total)
{
	size_t sum = 0;
	unsigned int i;

	for (i = 0; i < nr; i++)
		if ((ssize_t)iov[i].iov_len < 0)
			return -EINVAL;
	for (i = 0; i < nr; i++) {
		if (!user_range_ok(iov[i].iov_base, iov[i].iov_len))
			return -EFAULT;
		if (iov[i].iov_len > NW_MAX_RW_COUNT - sum)
			iov[i].iov_len = NW_MAX_RW_COUNT - sum;
		sum += iov[i].iov_len;
	}
	*total = sum;
	return 0;
}

static struct nw_msg *msg_alloc(struct nw_req *req, struct nw_sr *sr,
				size_t nr_iov)
{
	struct nw_msg *m = calloc(1, sizeof(*m) + nr_iov * sizeof(*m->iov));

	req->async = m;
	sr->msg = m;
	return m;
}

/* move_addr_to_kernel: 0, -EINVAL (length) or -EFAULT. */
static int addr_copy(struct sockaddr_storage *dst, const void *src, long len)
{
	if (len < 0 || len > (long)sizeof(*dst))
		return -EINVAL;
	if (len && nw_copy_from_user(dst, src, (size_t)len))
		return -EFAULT;
	return 0;
}

/* Copy the iovec array at uiov into m and check it. */
static int msg_import_iov(struct nw_sr *sr, const void *uiov, size_t nr)
{
	struct nw_msg *m = sr->msg;

	if (nr && nw_copy_from_user(m->iov, uiov, nr * sizeof(*m->iov)))
		return -EFAULT;
	sr->iov = m->iov;
	sr->nr_iov = (unsigned int)nr;
	return iov_check(sr->iov, sr->nr_iov, &sr->total);
}

/* SENDMSG/RECVMSG: copy the msghdr (__copy_msghdr) and its iovecs. */
static int msg_prep(struct nw_req *req, struct nw_sr *sr, struct msghdr *umsg)
{
	struct sockaddr_storage addr;
	struct nw_msg *m;
	struct msghdr h;
	int namelen, ret;

	if (nw_copy_from_user(&h, umsg, sizeof(h)))
		return -EFAULT;
	namelen = h.msg_name ? (int)h.msg_namelen : 0;
	if (namelen < 0)
		return -EINVAL;
	if (namelen > (int)sizeof(addr))
		namelen = sizeof(addr);
	if (sr->send && namelen) {
		ret = addr_copy(&addr, h.msg_name, namelen);
		if (ret)
			return ret;
	}
	if (h.msg_iovlen > NW_UIO_MAXIOV)
		return -EMSGSIZE;
	m = msg_alloc(req, sr, h.msg_iovlen);
	if (!m)
		return -ENOMEM;
	sr->vec = true;
	m->hdr.msg_name = h.msg_name;
	m->namelen = (socklen_t)namelen;
	if (sr->send) {
		m->hdr.msg_name = namelen ? &m->addr : NULL;
		memcpy(&m->addr, &addr, (size_t)namelen);
	} else {
		m->umsg = umsg;
	}
	m->hdr.msg_control = h.msg_control;
	m->controllen = h.msg_controllen;
	return msg_import_iov(sr, h.msg_iov, h.msg_iovlen);
}

static void sr_init(struct nw_sr *sr, const struct io_uring_sqe *sqe, bool send)
{
	sr->flags = READ_ONCE(sqe->ioprio);
	sr->msg_flags = (int)READ_ONCE(sqe->msg_flags);
	if (send)
		sr->msg_flags |= MSG_NOSIGNAL;
	sr->send = send;
	sr->vec = false;
	sr->msg = NULL;
	sr->done = 0;
	sr->sock_type = 0;
	sr->iov = &sr->fast_iov;
	sr->nr_iov = 1;
}

/* SEND and RECV: one buffer (import_ubuf). */
static int buf_prep(struct nw_sr *sr, const struct io_uring_sqe *sqe)
{
	void *buf = (void *)(uintptr_t)READ_ONCE(sqe->addr);
	size_t len = READ_ONCE(sqe->len);

	if (len > NW_MAX_RW_COUNT)
		len = NW_MAX_RW_COUNT;
	if (!user_range_ok(buf, len))
		return -EFAULT;
	sr->fast_iov.iov_base = buf;
	sr->fast_iov.iov_len = len;
	sr->total = len;
	return 0;
}

int nw_send_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);
	const void *dest = (void *)(uintptr_t)READ_ONCE(sqe->addr2);
	unsigned int len = READ_ONCE(sqe->len);
	struct nw_msg *m;
	int ret;

	sr_init(sr, sqe, true);
	if (sr->flags & ~NW_SEND_FLAGS)
		return -EINVAL;
	if (sr->flags & NW_RECVSEND_BUNDLE)
		return -EINVAL; /* needs provided buffers */
	if (READ_ONCE(sqe->__pad3[0]))
		return -EINVAL;
	if (!dest && !(sr->flags & NW_SEND_VECTORIZED))
		return buf_prep(sr, sqe);
	if ((sr->flags & NW_SEND_VECTORIZED) && len > NW_UIO_MAXIOV)
		return -EINVAL;
	m = msg_alloc(req, sr, (sr->flags & NW_SEND_VECTORIZED) ? len : 0);
	if (!m)
		return -ENOMEM;
	if (dest) {
		ret = addr_copy(&m->addr, dest, READ_ONCE(sqe->addr_len));
		if (ret)
			return ret;
		m->hdr.msg_name = &m->addr;
		m->namelen = READ_ONCE(sqe->addr_len);
	}
	if (!(sr->flags & NW_SEND_VECTORIZED))
		return buf_prep(sr, sqe);
	sr->vec = true;
	return msg_import_iov(sr, (void *)(uintptr_t)READ_ONCE(sqe->addr), len);
}

int nw_sendmsg_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);

	sr_init(sr, sqe, true);
	if (sr->flags & ~NW_SEND_FLAGS)
		return -EINVAL;
	if (sr->flags & NW_RECVSEND_BUNDLE)
		return -EINVAL;
	if (READ_ONCE(sqe->addr2) || READ_ONCE(sqe->file_index))
		return -EINVAL;
	return msg_prep(req, sr, (void *)(uintptr_t)READ_ONCE(sqe->addr));
}

/* io_recvmsg_prep's checks, shared by RECV and RECVMSG. */
static int recv_prep_common(struct nw_sr *sr, const struct io_uring_sqe *sqe)
{
	sr_init(sr, sqe, false);
	if (READ_ONCE(sqe->addr2))
		return -EINVAL;
	if (sr->flags & ~NW_RECV_FLAGS)
		return -EINVAL;
	/* Multishot needs provided buffers, which BUFFER_SELECT lacks. */
	if (sr->flags & NW_RECV_MULTISHOT)
		return -EINVAL;
	if (READ_ONCE(sqe->file_index)) /* optlen */
		return -EINVAL;
	if (sr->flags & NW_RECVSEND_BUNDLE)
		return -EINVAL;
	return 0;
}

int nw_recv_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);
	int ret = recv_prep_common(sr, sqe);

	return ret ? ret : buf_prep(sr, sqe);
}

int nw_recvmsg_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);
	int ret = recv_prep_common(sr, sqe);

	if (ret)
		return ret;
	return msg_prep(req, sr, (void *)(uintptr_t)READ_ONCE(sqe->addr));
}

void nw_net_cleanup(struct nw_req *req)
{
	free(req->async);
}

/* Drop n transferred bytes from the front of the iovecs. */
static void sr_advance(struct nw_sr *sr, size_t n)
{
	sr->done += n;
	while (n && sr->nr_iov) {
		if (n < sr->iov->iov_len) {
			sr->iov->iov_base = (char *)sr->iov->iov_base + n;
			sr->iov->iov_len -= n;
			return;
		}
		n -= sr->iov->iov_len;
		sr->iov++;
		sr->nr_iov--;
	}
}

/* RECVMSG: what recvmsg(2) writes back to the program's msghdr. */
static int msg_writeback(struct nw_msg *m)
{
	struct msghdr *u = m->umsg;

	if (m->hdr.msg_name &&
	    nw_copy_to_user(&u->msg_namelen, &m->hdr.msg_namelen,
			    sizeof(u->msg_namelen)))
		return -EFAULT;
	if (nw_copy_to_user(&u->msg_flags, &m->hdr.msg_flags,
			    sizeof(u->msg_flags)) ||
	    nw_copy_to_user(&u->msg_controllen, &m->hdr.msg_controllen,
			    sizeof(u->msg_controllen)))
		return -EFAULT;
	return 0;
}

/* One send or receive call: bytes or -errno; *oflags gets msg_flags. */
static ssize_t sr_call(struct nw_req *req, struct nw_sr *sr, int flags,
		       int *oflags)
{
	struct nw_msg *m = sr->msg;
	struct msghdr stack, *h = m ? &m->hdr : &stack;
	ssize_t n;

	*oflags = 0;
	if (sr->send && !sr->vec) {
		n = sendto(req->fd, sr->iov->iov_base, sr->iov->iov_len, flags,
			   m ? m->hdr.msg_name : NULL, m ? m->namelen : 0);
		return n < 0 ? -errno : n;
	}
	if (!sr->send && !sr->vec && !(flags & MSG_WAITALL)) {
		n = recv(req->fd, sr->iov->iov_base, sr->iov->iov_len, flags);
		return n < 0 ? -errno : n;
	}
	if (!m)
		memset(&stack, 0, sizeof(stack));
	else {
		h->msg_namelen = m->namelen;
		h->msg_controllen = m->controllen;
	}
	h->msg_iov = sr->iov;
	h->msg_iovlen = sr->nr_iov;
	h->msg_flags = 0;
	n = sr->send ? sendmsg(req->fd, h, flags) : recvmsg(req->fd, h, flags);
	if (n < 0)
		return -errno;
	*oflags = h->msg_flags;
	if (m && m->umsg && msg_writeback(m))
		return -EFAULT;
	return n;
}

/* io_net_retry: is a short MSG_WAITALL transfer continued? */
static bool sr_stream(struct nw_req *req, struct nw_sr *sr)
{
	if (!sr->sock_type) {
		int type;
		socklen_t len = sizeof(type);

		sr->sock_type =
			getsockopt(req->fd, SOL_SOCKET, SO_TYPE, &type, &len)
				? -1
				: (int8_t)type;
	}
	return sr->sock_type == SOCK_STREAM || sr->sock_type == SOCK_SEQPACKET;
}

/*
 * IORING_CQE_F_SOCK_NONEMPTY: the kernel reports data left queued on a
 * stream socket (msg_inq). Asked only when the receive filled the buffer;
 * a short one emptied the queue.
 */
static void sr_nonempty(struct nw_req *req, struct nw_sr *sr)
{
	int inq = 0;

	if (ioctl(req->fd, FIONREAD, &inq) || inq <= 0)
		return;
	if (sr_stream(req, sr) && sr->sock_type == SOCK_STREAM)
		req->cflags |= IORING_CQE_F_SOCK_NONEMPTY;
}

/* The final result: n (or -errno) from the last call, plus what came before. */
static int sr_finish(struct nw_req *req, struct nw_sr *sr, ssize_t n, bool fail)
{
	int res;

	if (n >= 0)
		res = (int)(sr->done + (size_t)n);
	else
		res = sr->done ? (int)sr->done : (int)n;
	req->res = res;
	if (fail)
		nw_req_set_fail(req, res);
	if (!sr->send && n > 0 && sr->done + (size_t)n == sr->total)
		sr_nonempty(req, sr);
	return NW_COMPLETE;
}

/*
 * Account one call's result. A short MSG_WAITALL transfer on a stream
 * socket is continued when may_continue (returns -1); else the request
 * finishes (NW_COMPLETE), failed when short under MSG_WAITALL.
 */
static int sr_account(struct nw_req *req, struct nw_sr *sr, ssize_t n,
		      int oflags, bool may_continue)
{
	size_t left = sr->total - sr->done;
	bool waitall = sr->msg_flags & MSG_WAITALL;
	bool fail;

	/* No partial retry for a recvmsg with control data (as the kernel). */
	if (!sr->send && sr->msg && sr->msg->controllen)
		waitall = false;
	fail = n < 0 || (waitall && (size_t)n < left);
	if (fail && n > 0 && sr_stream(req, sr)) {
		sr_advance(sr, (size_t)n);
		if (sr->msg) { /* control data goes with the first part only */
			sr->msg->hdr.msg_control = NULL;
			sr->msg->controllen = 0;
		}
		if (may_continue)
			return -1;
		return sr_finish(req, sr, 0, true);
	}
	if (!fail && !sr->send && (sr->msg_flags & MSG_WAITALL) &&
	    (oflags & (MSG_TRUNC | MSG_CTRUNC)))
		fail = true;
	return sr_finish(req, sr, n, fail);
}

/*
 * nw_poll_prepare, but never skip on an fd learnt to be a file or a pipe:
 * the call must run to give -ENOTSOCK.
 */
static bool net_poll_skip(struct nw_req *req, unsigned int mask)
{
	int kind;

	return nw_poll_prepare(req, mask, &kind) && kind != NW_FD_FILE &&
	       kind != NW_FD_STREAM;
}

/* Would block: park, or -EAGAIN (with what was done) for MSG_DONTWAIT. */
static int sr_wouldblock(struct nw_req *req, struct nw_sr *sr)
{
	if (sr->msg_flags & MSG_DONTWAIT)
		return sr_finish(req, sr, -EAGAIN, true);
	return NW_RETRY;
}

static int sr_nonblock(struct nw_req *req, struct nw_sr *sr)
{
	bool user_nowait = sr->msg_flags & MSG_DONTWAIT;
	int ret, oflags;
	ssize_t n;

	if (net_poll_skip(req, sr->send ? NW_POLLOUT : NW_POLLIN))
		return sr_wouldblock(req, sr);
	if ((sr->flags & NW_RECVSEND_POLL_FIRST) && !req->poll_arms)
		return sr_wouldblock(req, sr);
	do {
		n = sr_call(req, sr, sr->msg_flags | MSG_DONTWAIT, &oflags);
		if (n == -EAGAIN)
			return sr_wouldblock(req, sr);
		ret = sr_account(req, sr, n, oflags, !user_nowait);
	} while (ret < 0);
	return ret;
}

int nw_sr_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);
	int oflags;
	ssize_t n;

	if (issue_flags & NW_ISSUE_F_NONBLOCK) {
		if (req->ring->punt_all)
			return NW_PUNT;
		return sr_nonblock(req, sr);
	}
	/* A worker: the socket layer itself waits for all of MSG_WAITALL. */
	n = sr_call(req, sr, sr->msg_flags, &oflags);
	return sr_account(req, sr, n, oflags, false);
}

struct nw_accept {
	struct sockaddr *addr;
	socklen_t *addrlen;
	int flags;		/* SOCK_NONBLOCK | SOCK_CLOEXEC */
	unsigned int iou_flags; /* IORING_ACCEPT_* */
	bool checked;		/* SO_ACCEPTCONN asked once */
};
_Static_assert(sizeof(struct nw_accept) <= NW_REQ_CMD_SIZE, "too big");

int nw_accept_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_accept *acc = nw_req_cmd(req, struct nw_accept);

	if (READ_ONCE(sqe->len) || READ_ONCE(sqe->buf_index))
		return -EINVAL;
	acc->addr = (void *)(uintptr_t)READ_ONCE(sqe->addr);
	acc->addrlen = (void *)(uintptr_t)READ_ONCE(sqe->addr2);
	acc->flags = (int)READ_ONCE(sqe->accept_flags);
	acc->iou_flags = READ_ONCE(sqe->ioprio);
	acc->checked = false;
	if (acc->iou_flags & ~NW_ACCEPT_FLAGS)
		return -EINVAL;
	/* Direct descriptors and multishot: not supported. */
	if (READ_ONCE(sqe->file_index) ||
	    (acc->iou_flags & NW_ACCEPT_MULTISHOT))
		return -EINVAL;
	if (acc->flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	return 0;
}

/* IORING_CQE_F_SOCK_NONEMPTY: more connections queued (inet only). */
static bool accept_more(struct nw_req *req)
{
	struct pollfd p = {.fd = req->fd, .events = POLLIN};
	socklen_t len = sizeof(int);
	int domain;

	if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN))
		return false;
	if (getsockopt(req->fd, SOL_SOCKET, SO_DOMAIN, &domain, &len))
		return false;
	return domain == AF_INET || domain == AF_INET6;
}

static int accept_finish(struct nw_req *req, int fd)
{
	if (fd < 0) {
		nw_req_set_fail(req, fd);
		return NW_COMPLETE;
	}
	req->res = fd;
	if (accept_more(req))
		req->cflags |= IORING_CQE_F_SOCK_NONEMPTY;
	return NW_COMPLETE;
}

static int accept_call(struct nw_req *req, struct nw_accept *acc)
{
	int fd = accept4(req->fd, acc->addr, acc->addrlen, acc->flags);

	return fd < 0 ? -errno : fd;
}

/*
 * May accept4 be called without blocking? 0: yes (a connection is queued,
 * or the fd is not a listening socket and accept4 fails at once),
 * 1: it would block, -errno: not a socket.
 */
static int accept_ready(struct nw_req *req, struct nw_accept *acc)
{
	struct pollfd p = {.fd = req->fd, .events = POLLIN};
	socklen_t len = sizeof(int);
	int r, listening;

	r = poll(&p, 1, 0);
	if (r < 0)
		return -errno;
	if (r > 0)
		return 0;
	if (acc->checked)
		return 1;
	acc->checked = true;
	if (getsockopt(req->fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len))
		return -errno;
	return listening ? 1 : 0;
}

static int accept_wouldblock(struct nw_req *req, struct nw_accept *acc)
{
	if (acc->iou_flags & NW_ACCEPT_DONTWAIT)
		return accept_finish(req, -EAGAIN);
	return NW_RETRY;
}

int nw_accept_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_accept *acc = nw_req_cmd(req, struct nw_accept);
	int r;

	if (!(issue_flags & NW_ISSUE_F_NONBLOCK))
		return accept_finish(req, accept_call(req, acc));
	if (req->ring->punt_all)
		return NW_PUNT;
	if (net_poll_skip(req, NW_POLLIN))
		return accept_wouldblock(req, acc);
	if ((acc->iou_flags & NW_ACCEPT_POLL_FIRST) && !req->poll_arms)
		return accept_wouldblock(req, acc);
	r = accept_ready(req, acc);
	if (r < 0)
		return accept_finish(req, r);
	if (r > 0)
		return accept_wouldblock(req, acc);
	r = accept_call(req, acc);
	if (r == -EAGAIN)
		return accept_wouldblock(req, acc);
	return accept_finish(req, r);
}

struct nw_connect {
	int addr_len;
	bool in_progress; /* EINPROGRESS seen: the result is in SO_ERROR */
	bool seen_econnaborted;
	int8_t nonblock; /* the socket's O_NONBLOCK, -1 until learnt */
};

int nw_connect_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_connect *cn = nw_req_cmd(req, struct nw_connect);

	if (READ_ONCE(sqe->len) || READ_ONCE(sqe->buf_index) ||
	    READ_ONCE(sqe->rw_flags) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	cn->addr_len = (int)READ_ONCE(sqe->addr2);
	cn->in_progress = cn->seen_econnaborted = false;
	cn->nonblock = -1;
	req->async = calloc(1, sizeof(struct sockaddr_storage));
	if (!req->async)
		return -ENOMEM;
	return addr_copy(req->async, (void *)(uintptr_t)READ_ONCE(sqe->addr),
			 cn->addr_len);
}

static int connect_finish(struct nw_req *req, int ret)
{
	if (ret < 0)
		nw_req_set_fail(req, ret);
	else
		req->res = ret;
	return NW_COMPLETE;
}

/* sock_error: the pending error of a connect that went on in background. */
static int sock_error(int fd)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return -errno;
	return -err;
}

/* connect(2), and the verdict of an earlier EINPROGRESS. */
static int connect_call(struct nw_req *req, struct nw_connect *cn)
{
	int ret = 0;

	if (connect(req->fd, req->async, (socklen_t)cn->addr_len))
		ret = -errno;
	/* Connected meanwhile (EISCONN), or refused: SO_ERROR tells. */
	if (cn->in_progress && (ret == -EBADFD || ret == -EISCONN))
		ret = sock_error(req->fd);
	return ret;
}

static int connect_nonblock(struct nw_req *req, struct nw_connect *cn)
{
	int ret;

	if (cn->in_progress) {
		struct pollfd p = {.fd = req->fd, .events = POLLOUT};

		if (poll(&p, 1, 0) < 0)
			return connect_finish(req, -errno);
		if (p.revents & POLLERR)
			return connect_finish(req, sock_error(req->fd));
		if (!p.revents)
			return NW_RETRY; /* still connecting */
	} else if (cn->nonblock < 0) {
		int fl = fcntl(req->fd, F_GETFL);

		if (fl < 0)
			return connect_finish(req, -errno);
		cn->nonblock = (fl & O_NONBLOCK) != 0;
	}
	/* A blocking socket's connect blocks: a worker does it. */
	if (!cn->nonblock)
		return NW_PUNT;
	ret = connect_call(req, cn);
	if (ret == -EINPROGRESS) {
		cn->in_progress = true;
		return NW_RETRY;
	}
	if (ret == -EAGAIN)
		return NW_RETRY;
	if (ret == -ECONNABORTED && !cn->seen_econnaborted) {
		cn->seen_econnaborted = true;
		return NW_RETRY;
	}
	return connect_finish(req, ret);
}

int nw_connect_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_connect *cn = nw_req_cmd(req, struct nw_connect);

	if (!(issue_flags & NW_ISSUE_F_NONBLOCK))
		return connect_finish(req, connect_call(req, cn));
	if (req->ring->punt_all)
		return NW_PUNT;
	return connect_nonblock(req, cn);
}

struct nw_shutdown {
	int how;
};

int nw_shutdown_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_shutdown *sd = nw_req_cmd(req, struct nw_shutdown);

	if (READ_ONCE(sqe->off) || READ_ONCE(sqe->addr) ||
	    READ_ONCE(sqe->rw_flags) || READ_ONCE(sqe->buf_index) ||
	    READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	sd->how = (int)READ_ONCE(sqe->len);
	return 0;
}

int nw_shutdown_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_shutdown *sd = nw_req_cmd(req, struct nw_shutdown);

	(void)issue_flags; /* shutdown(2) does not block */
	if (shutdown(req->fd, sd->how))
		return -errno;
	req->res = 0;
	return NW_COMPLETE;
}

struct nw_socket {
	int domain, type, protocol;
};

int nw_socket_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_socket *s = nw_req_cmd(req, struct nw_socket);
	int flags;

	if (READ_ONCE(sqe->addr) || READ_ONCE(sqe->rw_flags) ||
	    READ_ONCE(sqe->buf_index))
		return -EINVAL;
	s->domain = READ_ONCE(sqe->fd);
	s->type = (int)READ_ONCE(sqe->off);
	s->protocol = (int)READ_ONCE(sqe->len);
	flags = s->type & ~0xf; /* ~SOCK_TYPE_MASK */
	if (READ_ONCE(sqe->file_index) && (flags & SOCK_CLOEXEC))
		return -EINVAL;
	if (flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	/* Direct descriptors: not supported. */
	if (READ_ONCE(sqe->file_index))
		return -EINVAL;
	return 0;
}

int nw_socket_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_socket *s = nw_req_cmd(req, struct nw_socket);
	int fd;

	(void)issue_flags;
	fd = socket(s->domain, s->type, s->protocol);
	if (fd < 0)
		return -errno;
	req->res = fd;
	return NW_COMPLETE;
}
