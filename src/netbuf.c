/* SPDX-License-Identifier: MIT */
/*
 * Bundles (IORING_RECVSEND_BUNDLE): the provided-buffer side of SEND and
 * RECV that take several ring buffers per call (kernel io_uring/net.c
 * io_recv_buf_select, io_send_select_buffer, io_bundle_nbufs,
 * io_recv_finish's retry; kbuf.c io_ring_buffers_peek). A receive bundle
 * is as big as sqe->len, or as what the last receive left queued
 * (FIONREAD for the kernel's msg_inq); knowing neither, one buffer. A
 * round that filled its buffers goes on while more is queued, into the
 * same CQE, which reports the first buffer; the buffers used are
 * consumed, the rest given back (kbuf.c).
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "net-int.h"
#include "poll.h"
#include "kbuf.h"

/*
 * io_net_retry: is a short MSG_WAITALL transfer continued? The socket type
 * is learnt once per fd (poll.c's cache), not once per request.
 */
bool nw_sr_stream(struct nw_req *req, struct nw_sr *sr)
{
	if (!sr->sock_type)
		sr->sock_type = (int8_t)nw_fd_sock_type(req->ring, req->fd);
	if (!sr->sock_type) {
		int type;
		socklen_t len = sizeof(type);

		sr->sock_type =
			getsockopt(req->fd, SOL_SOCKET, SO_TYPE, &type, &len)
				? -1
				: (int8_t)type;
		if (sr->sock_type > 0)
			nw_fd_set_sock_type(req->ring, req->fd, sr->sock_type);
	}
	return sr->sock_type == SOCK_STREAM || sr->sock_type == SOCK_SEQPACKET;
}

/* The kernel finds a non-socket (or a bad fd) before it looks for buffers. */
int nw_sr_sock_check(struct nw_req *req)
{
	socklen_t len = sizeof(int);
	int type;

	return getsockopt(req->fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0
		       ? -errno
		       : 0;
}

/* Bytes queued on a stream socket (the kernel's msg_inq), else 0. */
static size_t sr_inq(struct nw_req *req, struct nw_sr *sr)
{
	int inq = 0;

	if (!nw_sr_stream(req, sr) || sr->sock_type != SOCK_STREAM ||
	    ioctl(req->fd, FIONREAD, &inq) || inq < 0)
		return 0;
	return (size_t)inq;
}

/*
 * Buffers of a bundle, or of a SEND (io_recv_buf_select,
 * io_send_select_buffer), max bytes in all: sqe->len, or for a receive
 * what the last one left queued (the kernel's msg_inq); a receive that
 * knows neither takes one buffer. A multishot RECV's optlen left caps
 * them too. 0 or -errno.
 */
int nw_sr_select_vec(struct nw_req *req, struct nw_sr *sr, size_t max)
{
	struct nw_msg *m = sr->msg;
	unsigned int n, max_iov = (unsigned int)nw_sr_bundle_iovs(sr);
	size_t sum = 0;
	int ret;

	if (m->mshot_left && (!max || max > m->mshot_left))
		max = m->mshot_left;
	if (!max && !sr->send)
		max_iov = 1;
	n = nw_kbuf_select_vec(req, m->iov, max_iov, max, &m->bl_state);
	if (!n) {
		ret = nw_sr_sock_check(req);
		if (ret)
			return ret;
		return (m->bl_state & NW_KBUF_NOGROUP) ? -ENOENT : -ENOBUFS;
	}
	for (unsigned int i = 0; i < n; i++)
		sum += m->iov[i].iov_len;
	sr->iov = m->iov;
	sr->nr_iov = n;
	sr->total = sum;
	sr->done = 0;
	sr->vec = true;
	return 0;
}

/*
 * io_bundle_nbufs: the buffers a bundle used, those moved past before the
 * last call and those its last bytes touched.
 */
unsigned int nw_bundle_used(const struct nw_sr *sr, size_t last)
{
	unsigned int used = (unsigned int)(sr->iov - sr->msg->iov);

	for (unsigned int i = 0; last && i < sr->nr_iov; i++, used++)
		last -= last < sr->iov[i].iov_len ? last : sr->iov[i].iov_len;
	return used;
}

/* The CQE flags of a receive's buffers, consumed by req->res bytes. */
unsigned int nw_sr_put(struct nw_req *req, struct nw_sr *sr)
{
	if (!sr->msg || !sr->msg->bundle)
		return nw_kbuf_put(req);
	return nw_kbuf_put_vec(req, req->res,
			       nw_bundle_used(sr, (size_t)req->res - sr->done));
}

#define NW_BUNDLE_ROUNDS 16

/* A receive bundle's size: sqe->len, or what the last one left queued. */
size_t nw_bundle_size(const struct nw_req *req, const struct nw_msg *m)
{
	return req->buf_len ? req->buf_len : m->inq > 1 ? m->inq : 0;
}

/*
 * After a bundle receive of res bytes (io_recv_finish's retry): while a
 * round filled its buffers, more is queued, and neither did the group run
 * dry, nor was a buffer cut, nor (multishot) sqe->len reached, take
 * buffers for what is queued and receive again into the same CQE: its
 * buffer id stays the first round's, BUF_MORE and SOCK_NONEMPTY are the
 * last's.
 * Returns the bytes in all.
 */
/* A further round's size: what is queued, within optlen's limit left. */
static size_t bundle_round_max(const struct nw_msg *m, int res)
{
	size_t left = m->mshot_left ? m->mshot_left - (size_t)res : 0;

	return left && left < m->inq ? left : m->inq;
}

int nw_bundle_more(struct nw_req *req, struct nw_sr *sr, int res, bool filled)
{
	struct nw_msg *m = sr->msg;
	bool mshot = sr->flags & NW_RECV_MULTISHOT;
	unsigned int more;

	for (int i = 0; i < NW_BUNDLE_ROUNDS; i++) {
		struct msghdr h = {0};
		ssize_t n;

		m->inq = (uint32_t)sr_inq(req, sr);
		if (!filled || m->inq <= 1 ||
		    (m->bl_state & (NW_KBUF_EMPTY | NW_KBUF_PARTIAL)) ||
		    (mshot && req->buf_len && (size_t)res >= req->buf_len) ||
		    (m->mshot_left && (size_t)res >= m->mshot_left) ||
		    nw_sr_select_vec(req, sr, bundle_round_max(m, res)))
			break;
		h.msg_iov = sr->iov;
		h.msg_iovlen = sr->nr_iov;
		n = recvmsg(req->fd, &h, sr->msg_flags | MSG_DONTWAIT);
		if (n <= 0) {
			nw_kbuf_recycle(req);
			break;
		}
		more = nw_kbuf_put_vec(req, (int)n,
				       nw_bundle_used(sr, (size_t)n)) &
		       IORING_CQE_F_BUF_MORE;
		req->cflags = (req->cflags & ~IORING_CQE_F_BUF_MORE) | more;
		res += (int)n;
		filled = (size_t)n == sr->total;
	}
	req->cflags &= ~IORING_CQE_F_SOCK_NONEMPTY;
	if (m->inq > 0)
		req->cflags |= IORING_CQE_F_SOCK_NONEMPTY;
	else
		nw_poll_drained(req);
	return res;
}
