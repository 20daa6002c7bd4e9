/*
 * SEND_ZC and SENDMSG_ZC: net.c's send with the kernel's two-CQE
 * protocol around it (io_uring/net.c's zerocopy half and notif.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "internal.h"
#include "complete.h"
#include "rsrc.h"
#include "net-int.h"

/*
 * SEND_ZC and SENDMSG_ZC (io_send_zc, io_sendmsg_zc): zerocopy emulated
 * by a copy, a plain send. The protocol is the kernel's: once prep has
 * armed the notification, the result CQE carries IORING_CQE_F_MORE
 * (failures included; not when canceled with its chain, fail_links in
 * complete.c) and the notification follows with the same
 * user_data, IORING_CQE_F_NOTIF, and res 0, or with
 * IORING_SEND_ZC_REPORT_USAGE IORING_NOTIF_USAGE_ZC_COPIED: the data was
 * always copied. It is posted when the request is freed (nw_zc_cleanup),
 * right after its result. Only TCP and UDP sockets take it (the kernel's
 * SOCK_SUPPORT_ZC); others give -EOPNOTSUPP.
 */
#define NW_RECVSEND_FIXED_BUF	(1U << 2)
#define NW_SEND_ZC_REPORT_USAGE (1U << 3)
#define NW_ZC_FLAGS                                       \
	(NW_RECVSEND_POLL_FIRST | NW_RECVSEND_FIXED_BUF | \
	 NW_SEND_ZC_REPORT_USAGE | NW_SEND_VECTORIZED)
#define NW_NOTIF_USAGE_ZC_COPIED (1U << 31)

/*
 * NW_ZC_BUF_FAULT: the registered buffer's lookup failed at prep; the
 * kernel imports it at issue (REQ_F_IMPORT_BUFFER), so its -EFAULT comes
 * after the file's lookup there, and for SEND_ZC after the socket's
 * checks too (nw_zc_issue).
 */
enum {
	NW_ZC_NOTIF = 1,
	NW_ZC_REPORT = 2,
	NW_ZC_SOCK_OK = 4,
	NW_ZC_BUF_FAULT = 8,
};

/* A registered buffer's lookup: its -EFAULT waits for the issue. */
static int zc_buf_result(struct nw_sr *sr, int ret)
{
	if (ret == -EFAULT) {
		sr->zc |= NW_ZC_BUF_FAULT;
		return 0;
	}
	return ret;
}

/* io_send_zc_prep's head, up to the notification's arming. */
static int zc_prep_head(struct nw_req *req, struct nw_sr *sr,
			const struct io_uring_sqe *sqe)
{
	nw_sr_init(sr, sqe, true);
	sr->msg_flags &= ~MSG_ZEROCOPY;
	if (READ_ONCE(sqe->__pad2[0]) || READ_ONCE(sqe->addr3))
		return -EINVAL;
	if (req->sqe_flags & IOSQE_CQE_SKIP_SUCCESS)
		return -EINVAL;
	if (!nw_msg_alloc(req, sr, 0))
		return -ENOMEM;
	/* Armed: from here every result has F_MORE, then the notification. */
	sr->zc = NW_ZC_NOTIF;
	req->cflags = IORING_CQE_F_MORE;
	if (sr->flags & ~NW_ZC_FLAGS)
		return -EINVAL;
	if (sr->flags & NW_SEND_ZC_REPORT_USAGE)
		sr->zc |= NW_ZC_REPORT;
	return 0;
}

/* SEND_ZC: one buffer (or iovecs, VECTORIZED), maybe registered. */
static int send_zc_body(struct nw_req *req, struct nw_sr *sr,
			const struct io_uring_sqe *sqe)
{
	const void *dest = (void *)(uintptr_t)READ_ONCE(sqe->addr2);
	uint64_t addr = READ_ONCE(sqe->addr);
	unsigned int len = READ_ONCE(sqe->len);
	bool vec = sr->flags & NW_SEND_VECTORIZED;
	unsigned int idx = READ_ONCE(sqe->buf_index);
	int ret;

	if (READ_ONCE(sqe->__pad3[0]))
		return -EINVAL;
	if (vec && len <= NW_UIO_MAXIOV && !nw_msg_alloc(req, sr, len))
		return -ENOMEM;
	if (dest) {
		ret = nw_addr_copy(&sr->msg->addr, dest,
				   READ_ONCE(sqe->addr_len));
		if (ret)
			return ret;
		sr->msg->hdr.msg_name = &sr->msg->addr;
		sr->msg->namelen = READ_ONCE(sqe->addr_len);
	}
	if (!vec) {
		ret = nw_sr_buf_prep(sr, sqe);
		if (ret || !(sr->flags & NW_RECVSEND_FIXED_BUF))
			return ret;
		return zc_buf_result(sr,
				     nw_rsrc_buffer_get(req, idx, addr, len));
	}
	if (len > NW_UIO_MAXIOV)
		return -EINVAL;
	sr->vec = true;
	ret = nw_msg_import_iov(sr, (void *)(uintptr_t)addr, len);
	if (ret || !(sr->flags & NW_RECVSEND_FIXED_BUF))
		return ret;
	return zc_buf_result(
		sr, nw_rsrc_buffer_get_vec(req, idx, sr->iov, sr->nr_iov));
}

int nw_send_zc_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);
	int ret = zc_prep_head(req, sr, sqe);

	return ret ? ret : send_zc_body(req, sr, sqe);
}

int nw_sendmsg_zc_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);
	int ret = zc_prep_head(req, sr, sqe);

	if (ret)
		return ret;
	if (READ_ONCE(sqe->addr2) || READ_ONCE(sqe->file_index))
		return -EINVAL;
	ret = nw_msg_prep(req, sr, (void *)(uintptr_t)READ_ONCE(sqe->addr));
	if (ret || !(sr->flags & NW_RECVSEND_FIXED_BUF))
		return ret;
	return zc_buf_result(
		sr, nw_rsrc_buffer_get_vec(req, READ_ONCE(sqe->buf_index),
					   sr->iov, sr->nr_iov));
}

/* SOCK_SUPPORT_ZC: TCP and UDP over IPv4 and IPv6. 0 or -errno. */
static int zc_sock_check(int fd)
{
	int domain, proto;
	socklen_t len = sizeof(int);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len))
		return -errno;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len))
		return -errno;
	if ((domain != AF_INET && domain != AF_INET6) ||
	    (proto != IPPROTO_TCP && proto != IPPROTO_UDP))
		return -EOPNOTSUPP;
	return 0;
}

int nw_zc_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);

	/* io_sendmsg_zc imports before it looks at the socket. */
	if (unlikely(sr->zc & NW_ZC_BUF_FAULT) &&
	    req->opcode == IORING_OP_SENDMSG_ZC)
		return fcntl(req->fd, F_GETFD) < 0 ? -EBADF : -EFAULT;
	if (!(sr->zc & NW_ZC_SOCK_OK)) {
		int ret = zc_sock_check(req->fd);

		if (ret)
			return ret;
		sr->zc |= NW_ZC_SOCK_OK;
	}
	if (unlikely(sr->zc & NW_ZC_BUF_FAULT))
		return -EFAULT; /* io_send_zc: after the socket's checks */
	return nw_sr_issue_plain(req, sr, issue_flags);
}

/* Free the request's state and post its notification (submit side). */
void nw_zc_cleanup(struct nw_req *req)
{
	struct nw_sr *sr = nw_req_cmd(req, struct nw_sr);

	if (sr->zc & NW_ZC_NOTIF) {
		int res = (sr->zc & NW_ZC_REPORT)
				  ? (int)NW_NOTIF_USAGE_ZC_COPIED
				  : 0;
		struct nw_req n = {
			.ring = req->ring,
			.opcode = req->opcode,
			.user_data = req->user_data,
			.cflags = IORING_CQE_F_NOTIF,
			.trace = req->trace,
		};

		sr->zc = 0;
		nw_cq_add(req->ring, &n, res);
	}
	free(req->async);
}
