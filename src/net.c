/* SPDX-License-Identifier: MIT */
/*
 * SEND, RECV, SENDMSG, RECVMSG, SEND_ZC, SENDMSG_ZC: moving data through a
 * socket (the socket's life-cycle ops are in sock.c; zerocopy is emulated
 * by a copy, see the end of the file). Semantics: kernel io_uring/net.c (6.18)
 * and reference/kernel-semantics.md 1.2-1.5 and 5; the model is rw.c.
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
 * Provided buffers (IOSQE_BUFFER_SELECT, kbuf.c) on RECV and RECVMSG: the
 * buffer is taken for each attempt and given back when the attempt would
 * block, fails or sees EOF. Multishot RECV/RECVMSG stay parked on
 * readiness (poll.c nw_poll_arm_mshot); each wakeup receives on the
 * submit side while data is there, one CQE with IORING_CQE_F_MORE and a
 * buffer per chunk, until EOF, an error or -ENOBUFS ends it.
 *
 * Bundles (IORING_RECVSEND_BUNDLE, with provided buffers): a RECV takes
 * several ring buffers for one readv (their selection and the rounds
 * after the first are netbuf.c's). A SEND with provided buffers takes
 * them at the first attempt and consumes them there, as the kernel
 * commits them; one CQE for what one selection took.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "net-int.h"
#include "complete.h"
#include "poll.h"
#include "kbuf.h"
#include "rsrc.h"

#define NW_MSG_CMSG_COMPAT 0x80000000 /* not in user headers */

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

/* A zerocopy send's placeholder (holding its notification) is replaced. */
struct nw_msg *nw_msg_alloc(struct nw_req *req, struct nw_sr *sr, size_t nr_iov)
{
	struct nw_msg *m = calloc(1, sizeof(*m) + nr_iov * sizeof(*m->iov));

	if (!m)
		return NULL;
	free(req->async);
	req->async = m;
	sr->msg = m;
	return m;
}

/* move_addr_to_kernel: 0, -EINVAL (length) or -EFAULT. */
int nw_addr_copy(struct sockaddr_storage *dst, const void *src, long len)
{
	if (len < 0 || len > (long)sizeof(*dst))
		return -EINVAL;
	if (len && nw_copy_from_user(dst, src, (size_t)len))
		return -EFAULT;
	return 0;
}

/* Copy the iovec array at uiov into m and check it. */
int nw_msg_import_iov(struct nw_sr *sr, const void *uiov, size_t nr)
{
	struct nw_msg *m = sr->msg;

	if (nr && nw_copy_from_user(m->iov, uiov, nr * sizeof(*m->iov)))
		return -EFAULT;
	sr->iov = m->iov;
	sr->nr_iov = (unsigned int)nr;
	return iov_check(sr->iov, sr->nr_iov, &sr->total);
}

/*
 * RECVMSG with IOSQE_BUFFER_SELECT: at most one iovec, whose length is the
 * most to receive. Multishot lays out each buffer as struct
 * io_uring_recvmsg_out, msg_namelen bytes of name, msg_controllen of
 * control data, then the payload: the program's lengths as given.
 */
static int msg_select_prep(struct nw_req *req, struct nw_sr *sr,
			   const struct msghdr *h)
{
	struct iovec iov = {NULL, 0};

	if (h->msg_iovlen > 1)
		return -EINVAL;
	if (h->msg_iovlen && nw_copy_from_user(&iov, h->msg_iov, sizeof(iov)))
		return -EFAULT;
	req->buf_len = (uint32_t)iov.iov_len;
	if (sr->flags & NW_RECV_MULTISHOT) {
		if ((int)h->msg_namelen < 0)
			return -EOVERFLOW;
		sr->msg->namelen = h->msg_namelen;
	}
	sr->iov = &sr->fast_iov;
	sr->nr_iov = 1;
	sr->total = 0;
	return 0;
}

/* SENDMSG/RECVMSG: copy the msghdr (__copy_msghdr) and its iovecs. */
int nw_msg_prep(struct nw_req *req, struct nw_sr *sr, struct msghdr *umsg)
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
		ret = nw_addr_copy(&addr, h.msg_name, namelen);
		if (ret)
			return ret;
	}
	if (h.msg_iovlen > NW_UIO_MAXIOV)
		return -EMSGSIZE;
	m = nw_msg_alloc(req, sr, h.msg_iovlen);
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
	if (req->sqe_flags & IOSQE_BUFFER_SELECT)
		return msg_select_prep(req, sr, &h);
	return nw_msg_import_iov(sr, h.msg_iov, h.msg_iovlen);
}

/* SEND and RECV: one buffer (import_ubuf). */
int nw_sr_buf_prep(struct nw_sr *sr, const struct io_uring_sqe *sqe)
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

/* SEND with a destination, iovecs or provided buffers: a msghdr. */
static __attribute__((noinline)) int
send_prep_msg(struct nw_req *req, struct nw_sr *sr,
	      const struct io_uring_sqe *sqe, const void *dest, bool select)
{
	unsigned int len = READ_ONCE(sqe->len);
	struct nw_msg *m;
	int ret;

	if ((sr->flags & NW_SEND_VECTORIZED) && len > NW_UIO_MAXIOV)
		return -EINVAL;
	m = nw_msg_alloc(req, sr,
			 select ? nw_sr_bundle_iovs(sr)
			 : (sr->flags & NW_SEND_VECTORIZED) ? len
							    : 0);
	if (!m)
		return -ENOMEM;
	if (select) {
		nw_kbuf_prep(req, sqe, len);
		m->bundle = true;
	}
	if (dest) {
		ret = nw_addr_copy(&m->addr, dest, READ_ONCE(sqe->addr_len));
		if (ret)
			return ret;
		m->hdr.msg_name = &m->addr;
		m->namelen = READ_ONCE(sqe->addr_len);
	}
	if (select)
		return 0; /* the buffers come at issue */
	if (!(sr->flags & NW_SEND_VECTORIZED))
		return nw_sr_buf_prep(sr, sqe);
	sr->vec = true;
	return nw_msg_import_iov(sr, (void *)(uintptr_t)READ_ONCE(sqe->addr),
				 len);
}

int nw_send_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	bool select = req->sqe_flags & IOSQE_BUFFER_SELECT;
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);
	const void *dest = (void *)(uintptr_t)READ_ONCE(sqe->addr2);

	if (nw_sr_init(sr, sqe, true))
		return -EINVAL;
	if (sr->flags & ~NW_SEND_FLAGS)
		return -EINVAL;
	if (sr->flags & NW_RECVSEND_BUNDLE)
		sr->msg_flags |= MSG_WAITALL;
	if (select && (sr->flags & NW_SEND_VECTORIZED))
		return -EINVAL;
	if (READ_ONCE(sqe->__pad3[0]))
		return -EINVAL;
	if (!dest && !(sr->flags & NW_SEND_VECTORIZED) && !select)
		return nw_sr_buf_prep(sr, sqe);
	return send_prep_msg(req, sr, sqe, dest, select);
}

int nw_sendmsg_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);

	if (nw_sr_init(sr, sqe, true))
		return -EINVAL;
	if (sr->flags & ~NW_SEND_FLAGS)
		return -EINVAL;
	if (sr->flags & NW_RECVSEND_BUNDLE)
		return -EINVAL;
	if (READ_ONCE(sqe->addr2) || READ_ONCE(sqe->file_index))
		return -EINVAL;
	return nw_msg_prep(req, sr, (void *)(uintptr_t)READ_ONCE(sqe->addr));
}

/* io_recvmsg_prep's checks, shared by RECV and RECVMSG. */
static int recv_prep_common(struct nw_req *req, struct nw_sr *sr,
			    const struct io_uring_sqe *sqe)
{
	bool select = req->sqe_flags & IOSQE_BUFFER_SELECT;

	if (nw_sr_init(sr, sqe, false))
		return -EINVAL;
	if (READ_ONCE(sqe->addr2))
		return -EINVAL;
	if (sr->flags & ~NW_RECV_FLAGS)
		return -EINVAL;
	/*
	 * Multishot: every receive takes a provided buffer (sqe->len caps
	 * each, as since 6.10; 6.1 wanted 0); RECV's optlen caps the bytes
	 * of all its CQEs.
	 */
	if ((sr->flags & NW_RECV_MULTISHOT) &&
	    (!select || (sr->msg_flags & MSG_WAITALL)))
		return -EINVAL;
	if (READ_ONCE(sqe->file_index) && /* optlen */
	    (!(sr->flags & NW_RECV_MULTISHOT) || req->opcode != IORING_OP_RECV))
		return -EINVAL;
	if ((sr->flags & NW_RECVSEND_BUNDLE) && req->opcode != IORING_OP_RECV)
		return -EINVAL;
	if (select)
		nw_kbuf_prep(req, sqe, READ_ONCE(sqe->len));
	return 0;
}

int nw_recv_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);
	int ret = recv_prep_common(req, sr, sqe);

	if (ret)
		return ret;
	if (!(req->sqe_flags & IOSQE_BUFFER_SELECT))
		return nw_sr_buf_prep(sr, sqe);
	sr->total = 0; /* the buffer comes at issue */
	if ((sr->flags & NW_RECVSEND_BUNDLE) || READ_ONCE(sqe->file_index)) {
		/* Bundles without provided buffers are plain receives. */
		struct nw_msg *m = nw_msg_alloc(req, sr, nw_sr_bundle_iovs(sr));

		if (!m)
			return -ENOMEM;
		m->bundle = sr->flags & NW_RECVSEND_BUNDLE;
		m->mshot_left = READ_ONCE(sqe->file_index);
	}
	return 0;
}

int nw_recvmsg_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);
	int ret = recv_prep_common(req, sr, sqe);

	if (ret)
		return ret;
	return nw_msg_prep(req, sr, (void *)(uintptr_t)READ_ONCE(sqe->addr));
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

/*
 * SEND and RECV's calls, made through syscall(): glibc's sendto and recv
 * are cancellation points, each call wrapped in a switch of the thread's
 * cancel state, where the kernel's io_uring_enter is none (an unwind from
 * inside the engine would leave its locks held). -errno on failure.
 */
static ssize_t sys_sendto(int fd, const void *buf, size_t len, int flags,
			  const void *addr, socklen_t alen)
{
	long n = syscall(SYS_sendto, fd, buf, len, flags, addr, alen);

	return n < 0 ? -errno : n;
}

static ssize_t sys_recv(int fd, void *buf, size_t len, int flags)
{
	long n = syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);

	return n < 0 ? -errno : n;
}

/* sr_call's sendmsg or recvmsg, out of line: the plain calls need no frame. */
static __attribute__((noinline)) ssize_t
sr_call_msg(struct nw_req *req, struct nw_sr *sr, int flags, int *oflags)
{
	struct nw_msg *m = sr->msg;
	struct msghdr stack, *h = m ? &m->hdr : &stack;
	ssize_t n;

	if (!m)
		memset(&stack, 0, sizeof(stack));
	else {
		h->msg_namelen = m->namelen;
		h->msg_controllen = m->controllen;
	}
	h->msg_iov = sr->iov;
	h->msg_iovlen = sr->nr_iov;
	h->msg_flags = 0;
	/*
	 * MSG_CMSG_COMPAT is the kernel's own bit: sendmsg(2)/recvmsg(2)
	 * refuse it (-EINVAL), io_uring passes it on, where a 64-bit ring's
	 * socket calls ignore it. Drop it, as recv(2) and sendto(2) do.
	 */
	flags &= ~NW_MSG_CMSG_COMPAT;
	n = sr->send ? sendmsg(req->fd, h, flags) : recvmsg(req->fd, h, flags);
	if (n < 0)
		return -errno;
	*oflags = h->msg_flags;
	if (m && m->umsg && msg_writeback(m))
		return -EFAULT;
	return n;
}

/* One send or receive call: bytes or -errno; *oflags gets msg_flags. */
static ssize_t sr_call(struct nw_req *req, struct nw_sr *sr, int flags,
		       int *oflags)
{
	struct nw_msg *m = sr->msg;

	*oflags = 0;
	if (sr->send && !sr->vec)
		return sys_sendto(req->fd, sr->iov->iov_base, sr->iov->iov_len,
				  flags, m ? m->hdr.msg_name : NULL,
				  m ? m->namelen : 0);
	if (!sr->send && !sr->vec && !(flags & MSG_WAITALL))
		return sys_recv(req->fd, sr->iov->iov_base, sr->iov->iov_len,
				flags);
	return sr_call_msg(req, sr, flags, oflags);
}

/*
 * IORING_CQE_F_SOCK_NONEMPTY: the kernel reports data left queued on a
 * stream socket (msg_inq). Asked only when the receive filled the buffer;
 * a short one emptied the queue. An empty queue also tells the readiness
 * machinery that the next receive need not be tried before an edge. The
 * type is known (fdcache) before the ioctl: a datagram that filled the
 * buffer costs none.
 */
static void sr_nonempty(struct nw_req *req, struct nw_sr *sr)
{
	int inq = 0;

	if (!nw_sr_stream(req, sr) || sr->sock_type != SOCK_STREAM ||
	    ioctl(req->fd, FIONREAD, &inq))
		return;
	if (inq > 0)
		req->cflags |= IORING_CQE_F_SOCK_NONEMPTY;
	else
		nw_poll_drained(req);
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
	if (fail && n > 0 && nw_sr_stream(req, sr)) {
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
bool nw_net_poll_skip(struct nw_req *req, unsigned int mask)
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

/*
 * IORING_RECVSEND_POLL_FIRST: the kernel arms its poll before the first
 * attempt, and a poll that finds the socket ready issues at once; so must
 * wait only a socket not ready now (an edge may be long gone). With
 * MSG_DONTWAIT the first attempt is -EAGAIN, as there. Only io_recv
 * looks at POLL_FIRST before it looks for a socket: SEND, SENDMSG,
 * RECVMSG and the zerocopy sends on a file that is no socket fail at once
 * (-ENOTSOCK, from the attempt).
 */
static bool sr_poll_first(struct nw_req *req, struct nw_sr *sr)
{
	struct pollfd p;

	if (likely(!(sr->flags & NW_RECVSEND_POLL_FIRST)) || req->poll_arms)
		return false;
	if (req->opcode != IORING_OP_RECV && nw_sr_sock_check(req))
		return false;
	p.fd = req->fd;
	p.events = sr->send ? POLLOUT : POLLIN;
	p.revents = 0;
	return (sr->msg_flags & MSG_DONTWAIT) || poll(&p, 1, 0) != 1;
}

/* RECV's POLL_FIRST on a file that is no socket (nw_net_arm_nonsock). */
static __attribute__((noinline)) bool sr_arm_nonsock(struct nw_req *req,
						     struct nw_sr *sr)
{
	return nw_net_arm_nonsock(req,
				  req->opcode == IORING_OP_RECV &&
					  (sr->flags & NW_RECVSEND_POLL_FIRST));
}

static int sr_nonblock(struct nw_req *req, struct nw_sr *sr)
{
	bool user_nowait = sr->msg_flags & MSG_DONTWAIT;
	int ret, oflags;
	ssize_t n;

	if (nw_net_poll_skip(req, sr->send ? NW_POLLOUT : NW_POLLIN))
		return sr_wouldblock(req, sr);
	if (sr_poll_first(req, sr))
		return sr_wouldblock(req, sr);
	do {
		n = sr_call(req, sr, sr->msg_flags | MSG_DONTWAIT, &oflags);
		if (n == -EAGAIN || (n == -ENOTSOCK && sr_arm_nonsock(req, sr)))
			return sr_wouldblock(req, sr);
		/* What sr_account finds for a call that may not be short. */
		if (likely(n >= 0 && !(sr->msg_flags & MSG_WAITALL)))
			return sr_finish(req, sr, n, false);
		ret = sr_account(req, sr, n, oflags, !user_nowait);
	} while (ret < 0);
	return ret;
}

int nw_sr_issue_plain(struct nw_req *req, struct nw_sr *sr,
		      unsigned int issue_flags)
{
	int oflags;
	ssize_t n;

	if (issue_flags & NW_ISSUE_F_NONBLOCK) {
		if (req->ring->punt_all)
			return NW_PUNT;
		return sr_nonblock(req, sr);
	}
	/* Punted as epoll refused the file: RECV's POLL_FIRST is -EAGAIN. */
	if (req->opcode == IORING_OP_RECV &&
	    (sr->flags & NW_RECVSEND_POLL_FIRST) &&
	    (req->flags & NW_REQ_F_REG_FILE))
		return sr_finish(req, sr, -EAGAIN, true);
	/* A worker: the socket layer itself waits for all of MSG_WAITALL. */
	n = sr_call(req, sr, sr->msg_flags, &oflags);
	return sr_account(req, sr, n, oflags, false);
}

/* Take a provided buffer for the next receive: 0 or -ENOBUFS. */
static int sr_select(struct nw_req *req, struct nw_sr *sr)
{
	size_t len;
	void *buf = nw_kbuf_select(req, &len);
	int ret;

	if (!buf) {
		ret = nw_sr_sock_check(req);
		return ret ? ret : -ENOBUFS;
	}
	sr->fast_iov.iov_base = buf;
	sr->fast_iov.iov_len = len;
	sr->iov = &sr->fast_iov;
	sr->nr_iov = 1;
	sr->total = len;
	sr->done = 0;
	return 0;
}

/*
 * SEND with provided buffers (a bundle, or one buffer): taken at the first
 * attempt and consumed there, as the kernel commits them at selection, so
 * a send that waits keeps them; every CQE of it reports them.
 */
static __attribute__((noinline)) int send_issue_select(struct nw_req *req,
						       struct nw_sr *sr,
						       unsigned int issue_flags)
{
	struct nw_msg *m = sr->msg;
	int ret;

	if ((issue_flags & NW_ISSUE_F_NONBLOCK) &&
	    (sr->flags & NW_RECVSEND_POLL_FIRST) && !req->poll_arms) {
		ret = nw_sr_sock_check(req); /* io_send: the socket first */
		return ret ? ret : sr_wouldblock(req, sr);
	}
	if (!m->buf_cflags) {
		ret = nw_sr_select_vec(req, sr, req->buf_len);
		if (ret)
			return ret;
		m->buf_cflags =
			nw_kbuf_put_vec(req, (int)sr->total, sr->nr_iov);
	}
	ret = nw_sr_issue_plain(req, sr, issue_flags);
	if (ret == NW_COMPLETE)
		req->cflags |= m->buf_cflags;
	return ret;
}

/*
 * A receive into a provided buffer (io_recv_buf_select): consumed by data;
 * EOF, an error or an attempt that would block give it back
 * (io_kbuf_recycle), so a parked request holds none. A partial MSG_WAITALL
 * keeps it, to continue into it.
 */
static __attribute__((noinline)) int
sr_issue_select(struct nw_req *req, struct nw_sr *sr, unsigned int issue_flags)
{
	int ret;

	if ((issue_flags & NW_ISSUE_F_NONBLOCK) && sr_poll_first(req, sr))
		return sr_wouldblock(req, sr);
	if (!req->kbuf) {
		ret = sr->msg && sr->msg->bundle
			      ? nw_sr_select_vec(req, sr,
						 nw_bundle_size(req, sr->msg))
			      : sr_select(req, sr);
		if (ret)
			return ret;
	}
	ret = nw_sr_issue_plain(req, sr, issue_flags);
	if (ret == NW_COMPLETE && req->res > 0) {
		bool filled = (size_t)req->res == sr->total;

		req->cflags |= nw_sr_put(req, sr);
		if (sr->msg && sr->msg->bundle)
			req->res = nw_bundle_more(req, sr, req->res, filled);
	} else if (ret != NW_QUEUED && !sr->done)
		nw_kbuf_recycle(req);
	return ret;
}

/*
 * One multishot RECVMSG into buf (io_recvmsg_multishot): the header and
 * name are written in front of the control data and payload. Returns the
 * CQE's res (header + name + control + payload received) or -errno.
 */
static ssize_t recvmsg_mshot_call(struct nw_req *req, struct nw_sr *sr,
				  char *buf, size_t len, bool *eof)
{
	struct nw_msg *m = sr->msg;
	size_t hdr = sizeof(struct io_uring_recvmsg_out) + m->namelen +
		     m->controllen;
	struct io_uring_recvmsg_out out;
	struct sockaddr_storage addr;
	struct msghdr h = {0};
	struct iovec iov;
	size_t namelen;
	ssize_t n;

	if (len < hdr)
		return -EFAULT;
	if (m->namelen) {
		h.msg_name = &addr;
		h.msg_namelen = sizeof(addr);
	}
	h.msg_control = m->controllen ? buf + hdr - m->controllen : NULL;
	h.msg_controllen = m->controllen;
	iov.iov_base = buf + hdr;
	iov.iov_len = len - hdr;
	h.msg_iov = &iov;
	h.msg_iovlen = 1;
	n = recvmsg(req->fd, &h,
		    (sr->msg_flags | MSG_DONTWAIT) & ~NW_MSG_CMSG_COMPAT);
	if (n < 0)
		return -errno;
	*eof = n == 0;
	out.namelen = m->namelen ? h.msg_namelen : 0;
	out.controllen = m->controllen ? (uint32_t)h.msg_controllen : 0;
	out.payloadlen = (uint32_t)n;
	out.flags = (uint32_t)h.msg_flags;
	namelen = out.namelen < m->namelen ? out.namelen : m->namelen;
	if (namelen > sizeof(addr))
		namelen = sizeof(addr);
	if (nw_copy_to_user(buf, &out, sizeof(out)) ||
	    (namelen && nw_copy_to_user(buf + sizeof(out), &addr, namelen)))
		return -EFAULT;
	if ((size_t)n > len - hdr)
		n = (ssize_t)(len - hdr);
	return (ssize_t)hdr + n;
}

enum { MSHOT_MORE, MSHOT_WAIT, MSHOT_DONE };

/*
 * No buffer: -ENOBUFS ends it, but only for an attempt the kernel would
 * make: the first, or one with something to receive. The engine also
 * tries after every chunk until EAGAIN, where the kernel waits for poll
 * unless it knows more is queued: there, nothing queued means wait.
 */
static int recv_mshot_nobufs(struct nw_req *req, struct nw_sr *sr)
{
	char c;

	req->res = nw_sr_sock_check(req);
	if (req->res)
		return MSHOT_DONE;
	if (sr->done && recv(req->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) < 0 &&
	    errno == EAGAIN)
		return MSHOT_WAIT;
	req->res = -ENOBUFS;
	return MSHOT_DONE;
}

/*
 * Post a multishot receive's chunk of n bytes (req->res and req->cflags
 * set) with F_MORE, unless last, a full CQ (no overflow) or optlen's limit
 * reached make it the final CQE (MSHOT_DONE).
 */
static int mshot_post(struct nw_req *req, struct nw_sr *sr, ssize_t n,
		      bool last)
{
	struct nw_msg *m = sr->msg;

	if (m && m->mshot_left) {
		m->mshot_left -=
			(size_t)n < m->mshot_left ? (uint32_t)n : m->mshot_left;
		if (!m->mshot_left)
			last = true;
	}
	if (last || nw_cq_full(req->ring))
		return MSHOT_DONE;
	req->cflags |= IORING_CQE_F_MORE;
	nw_cq_add(req->ring, req, (int)n);
	req->cflags = 0;
	/*
	 * On until EAGAIN, even after a short read: the edge that woke us
	 * may also have carried EOF or more, and no new edge would come.
	 */
	return MSHOT_MORE;
}

/*
 * A multishot bundle's receive: the buffers it takes, one readv over
 * them, one CQE with the first one's id. A bundle that took all the
 * group had ends it (the kernel's REQ_F_BL_EMPTY).
 */
static int recv_mshot_bundle(struct nw_req *req, struct nw_sr *sr)
{
	struct msghdr h = {0};
	int ret = nw_sr_select_vec(req, sr, nw_bundle_size(req, sr->msg));
	ssize_t n;

	if (ret == -ENOBUFS)
		return recv_mshot_nobufs(req, sr);
	if (ret) {
		req->res = ret;
		return MSHOT_DONE;
	}
	sr->done = 1; /* attempts made */
	h.msg_iov = sr->iov;
	h.msg_iovlen = sr->nr_iov;
	n = recvmsg(req->fd, &h, sr->msg_flags | MSG_DONTWAIT);
	n = n < 0 ? -errno : n;
	if (n <= 0) {
		nw_kbuf_recycle(req);
		req->res = (int)n;
		return n == -EAGAIN ? MSHOT_WAIT : MSHOT_DONE;
	}
	req->cflags =
		nw_kbuf_put_vec(req, (int)n, nw_bundle_used(sr, (size_t)n));
	n = nw_bundle_more(req, sr, (int)n, (size_t)n == sr->total);
	req->res = (int)n;
	return mshot_post(req, sr, n, sr->msg->bl_state & NW_KBUF_EMPTY);
}

/*
 * One multishot receive, on the submit side: a chunk posts a CQE with
 * F_MORE and its buffer (MSHOT_MORE); nothing there gives the buffer back
 * (MSHOT_WAIT); EOF, an error, no buffer, or a full CQ end it (MSHOT_DONE,
 * req->res and req->cflags final).
 */
static int recv_mshot_once(struct nw_req *req, struct nw_sr *sr)
{
	bool eof = false;
	size_t len;
	char *buf;
	ssize_t n;

	if (sr->msg && sr->msg->bundle)
		return recv_mshot_bundle(req, sr);
	buf = nw_kbuf_select(req, &len);
	if (buf && sr->msg && sr->msg->mshot_left && len > sr->msg->mshot_left)
		len = sr->msg->mshot_left;

	/*
	 * An incremental buffer's rest too small for RECVMSG's header is used
	 * up, and the next entry taken (the kernel's retire of the tail).
	 */
	if (buf && sr->vec && req->kbuf->inc &&
	    req->kbuf->len < sizeof(struct io_uring_recvmsg_out) +
				     sr->msg->namelen + sr->msg->controllen) {
		nw_kbuf_retire(req);
		buf = nw_kbuf_select(req, &len);
	}
	if (!buf)
		return recv_mshot_nobufs(req, sr);
	sr->done = 1; /* attempts made */
	if (sr->vec) {
		n = recvmsg_mshot_call(req, sr, buf, len, &eof);
	} else {
		n = sys_recv(req->fd, buf, len, sr->msg_flags | MSG_DONTWAIT);
		eof = n == 0;
	}
	if (n <= 0) {
		nw_kbuf_recycle(req);
		req->res = (int)n;
		return n == -EAGAIN ? MSHOT_WAIT : MSHOT_DONE;
	}
	req->res = (int)n;
	req->cflags = nw_kbuf_put(req);
	if (!sr->vec && (size_t)n == len)
		sr_nonempty(req, sr);
	/* RECVMSG's EOF has its header. */
	return mshot_post(req, sr, n, eof);
}

/*
 * Arm a multishot receive: parked for good, its receives run as task work.
 * From a worker (IOSQE_ASYNC) it goes back to readiness first, since the
 * worker still uses the request after an issue that queued it.
 */
static int recv_mshot_arm(struct nw_req *req)
{
	int ret;

	if (req->sqe_flags & IOSQE_ASYNC) {
		req->sqe_flags &= ~IOSQE_ASYNC;
		return NW_RETRY;
	}
	ret = nw_poll_arm_mshot(req, NW_POLLIN);
	if (!ret)
		return NW_QUEUED;
	ret = nw_sr_sock_check(req);
	return ret ? ret : -ENOMEM;
}

/* Multishot RECV/RECVMSG: arm, or (NW_ISSUE_F_MSHOT) receive what is there. */
static __attribute__((noinline)) int
recv_mshot_issue(struct nw_req *req, struct nw_sr *sr, unsigned int issue_flags)
{
	if (!(issue_flags & NW_ISSUE_F_MSHOT))
		return recv_mshot_arm(req);
	for (int i = 0; i < NW_MSHOT_MAX_LOOPS; i++) {
		int r = recv_mshot_once(req, sr);

		if (r == MSHOT_WAIT)
			return NW_QUEUED;
		if (r == MSHOT_DONE)
			return req->res < 0 ? req->res : NW_COMPLETE;
		/* A bundle that got sqe->len is capped: the others go first. */
		if (sr->msg && sr->msg->bundle && req->buf_len &&
		    (size_t)req->res >= req->buf_len)
			break;
	}
	nw_poll_mshot_requeue(req); /* more there: after the others */
	return NW_QUEUED;
}

int nw_sr_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);

	if (unlikely(!sr->send && (sr->flags & NW_RECV_MULTISHOT)))
		return recv_mshot_issue(req, sr, issue_flags);
	if (unlikely(req->sqe_flags & IOSQE_BUFFER_SELECT))
		return sr->send ? send_issue_select(req, sr, issue_flags)
				: sr_issue_select(req, sr, issue_flags);
	return nw_sr_issue_plain(req, sr, issue_flags);
}
