/* SPDX-License-Identifier: MIT */
/*
 * What the socket op files share: private to them, and only they include
 * this header. net.c has SEND, RECV, SENDMSG and RECVMSG; netbuf.c the
 * provided-buffer side of bundles (several buffers per call) and the
 * socket facts both need, which net.c calls (never the other way);
 * netzc.c net.c's sends with a notification; sock.c ACCEPT, which shares
 * POLL_FIRST's treatment of a file that is no socket.
 */
#ifndef NW_NET_INT_H
#define NW_NET_INT_H

#include <limits.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "net.h"

/* sqe->ioprio flags of send/recv (the 6.1 header lacks some). */
#define NW_RECVSEND_POLL_FIRST (1U << 0)
#define NW_RECV_MULTISHOT      (1U << 1)
#define NW_RECVSEND_BUNDLE     (1U << 4)
#define NW_SEND_VECTORIZED     (1U << 5)
#define NW_SEND_FLAGS \
	(NW_RECVSEND_POLL_FIRST | NW_RECVSEND_BUNDLE | NW_SEND_VECTORIZED)
#define NW_RECV_FLAGS \
	(NW_RECVSEND_POLL_FIRST | NW_RECV_MULTISHOT | NW_RECVSEND_BUNDLE)

#define NW_MAX_RW_COUNT ((size_t)(INT_MAX & ~4095))
#define NW_UIO_MAXIOV	1024
#define NW_BUNDLE_IOV	NW_UIO_MAXIOV /* a bundle's most buffers */
/* Above any user address (57-bit paging included): access_ok fails. */
#define NW_USER_TOP	0x00fffffffffff000ULL

/*
 * POLL_FIRST (poll_first: the request's flag) on a file that is no socket
 * and may have no ->poll (a regular file, a directory, a device such as
 * /dev/null), not armed yet: io_recv and io_accept answer -EAGAIN before
 * they look for a socket, the kernel arms its poll, and where the file
 * cannot be polled io-wq issues the request, still not polled, and
 * POLL_FIRST's -EAGAIN is the result (io_wq_submit_work stops without a
 * poll). True when the request is to be armed (NW_RETRY) rather than
 * answer -ENOTSOCK: epoll takes the file (a tty: -ENOTSOCK once readable,
 * as there) or refuses it (a worker, whose POLL_FIRST answers -EAGAIN).
 */
static inline bool nw_net_arm_nonsock(const struct nw_req *req, bool poll_first)
{
	struct stat st;

	if (!poll_first || req->poll_arms || fstat(req->fd, &st))
		return false;
	return S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) ||
	       S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode);
}

/* The msghdr forms and SEND to an address: req->async. */
struct nw_msg {
	struct msghdr hdr;   /* what the call gets */
	struct msghdr *umsg; /* RECVMSG: the program's, for the write-back */
	socklen_t namelen;   /* as prepared: each call overwrites hdr's */
	size_t controllen;   /* likewise */
	struct sockaddr_storage addr; /* the copied destination (sends) */
	uint32_t buf_cflags; /* a send's buffers, consumed at selection */
	uint32_t mshot_left; /* multishot RECV's byte limit (optlen) left */
	uint32_t inq;	     /* a bundle's last msg_inq: the next one's size */
	unsigned int bl_state; /* NW_KBUF_* of the last bundle taken */
	bool bundle;	       /* IORING_RECVSEND_BUNDLE: iov[] holds buffers */
	struct iovec iov[];    /* the copied iovec array */
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
	uint8_t zc;	  /* SEND_ZC, SENDMSG_ZC: NW_ZC_* */
};
_Static_assert(sizeof(struct nw_sr) <= NW_REQ_CMD_SIZE, "nw_sr too big");

/* A send or receive of provided buffers: how many one selection may take. */
static inline size_t nw_sr_bundle_iovs(const struct nw_sr *sr)
{
	return (sr->flags & NW_RECVSEND_BUNDLE) ? NW_BUNDLE_IOV : 1;
}

/* netbuf.c: the socket's facts, for both. */
/* io_net_retry: is sr's socket a stream or seqpacket one (learnt once)? */
bool nw_sr_stream(struct nw_req *req, struct nw_sr *sr);
/* -errno for a bad fd or a non-socket, found before buffers; else 0. */
int nw_sr_sock_check(struct nw_req *req);

/* netbuf.c: bundles. */
/*
 * Take provided buffers for req (a bundle, or SEND's one), max bytes in
 * all (0: one buffer for a receive): sr's iovecs point at them. 0 or
 * -errno (-ENOBUFS: none; -ENOENT: no such group, as for a bundle).
 */
int nw_sr_select_vec(struct nw_req *req, struct nw_sr *sr, size_t max);
/* io_bundle_nbufs: the buffers used, last the final call's bytes. */
unsigned int nw_bundle_used(const struct nw_sr *sr, size_t last);
/* The CQE flags of a receive's buffers, consumed by req->res bytes. */
unsigned int nw_sr_put(struct nw_req *req, struct nw_sr *sr);
/* A receive bundle's size: sqe->len, or what the last one left queued. */
size_t nw_bundle_size(const struct nw_req *req, const struct nw_msg *m);
/*
 * After a bundle receive of res bytes (filled: it used all its buffers),
 * further rounds into the same CQE; returns the bytes in all.
 */
int nw_bundle_more(struct nw_req *req, struct nw_sr *sr, int res, bool filled);

/* net.c's pieces that netzc.c builds its sends from. */
struct nw_msg *nw_msg_alloc(struct nw_req *req, struct nw_sr *sr,
			    size_t nr_iov);
int nw_msg_import_iov(struct nw_sr *sr, const void *uiov, size_t nr);
int nw_msg_prep(struct nw_req *req, struct nw_sr *sr, struct msghdr *umsg);
/*
 * Start a send or receive's prep. The kernel keeps sqe->len as an int:
 * one past INT_MAX is -EINVAL (io_sendmsg_prep, io_recvmsg_prep). Inline:
 * every SEND and RECV prep starts here, send a constant at each call.
 */
static inline int nw_sr_init(struct nw_sr *sr, const struct io_uring_sqe *sqe,
			     bool send)
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
	sr->zc = 0;
	sr->iov = &sr->fast_iov;
	sr->nr_iov = 1;
	return READ_ONCE(sqe->len) > INT_MAX ? -EINVAL : 0;
}
int nw_sr_buf_prep(struct nw_sr *sr, const struct io_uring_sqe *sqe);
int nw_sr_issue_plain(struct nw_req *req, struct nw_sr *sr,
		      unsigned int issue_flags);

#endif
