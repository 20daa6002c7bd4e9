/* SPDX-License-Identifier: MIT */
/*
 * ACCEPT (multishot included), CONNECT, SHUTDOWN, SOCKET, BIND, LISTEN: a socket's
 * life-cycle, from its creation to its connections and its shutdown (data
 * moves in net.c). Semantics: kernel io_uring/net.c (6.18) and
 * reference/kernel-semantics.md 1.2-1.5 and 5.
 *
 * ACCEPT: accept4 has no per-call nonblocking flag and the program's
 * O_NONBLOCK is never changed, so the inline attempt polls the listener
 * first and calls accept4 only when it is readable (the one way inline
 * accept could still block: another thread takes the connection between
 * the poll and the accept4 on a blocking listener). A worker may block.
 * CONNECT: as the kernel's io_connect, which passes O_NONBLOCK for the
 * call, connect(2) runs nonblocking inline, a blocking socket's
 * O_NONBLOCK lent for the call alone (connect_forced): EINPROGRESS or
 * EAGAIN parks it for POLLOUT, a second connect (EISCONN: SO_ERROR)
 * gives the result. No worker is needed. SHUTDOWN, SOCKET, BIND and
 * LISTEN run inline (none blocks).
 *
 * ACCEPT and SOCKET install into a fixed slot when file_index is set
 * (rsrc.c). Multishot ACCEPT is armed like multishot RECV (poll.c
 * nw_poll_arm_mshot): parked for good, its accepts run on the submit side
 * as task work and post each connection with F_MORE straight into the CQ,
 * so a cancel always finds it parked and its CQE comes after the
 * connections accepted before it, as on the kernel. A full CQ makes the
 * connection just accepted the final CQE; a worker that gets it (no
 * readiness left to wait on) blocks for one connection and ends it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "net-int.h"
#include "complete.h"
#include "poll.h"
#include "rsrc.h"

/* sqe->ioprio flags of accept (the 6.1 header lacks some). */
#define NW_ACCEPT_MULTISHOT  (1U << 0)
#define NW_ACCEPT_DONTWAIT   (1U << 1)
#define NW_ACCEPT_POLL_FIRST (1U << 2)
#define NW_ACCEPT_FLAGS \
	(NW_ACCEPT_MULTISHOT | NW_ACCEPT_DONTWAIT | NW_ACCEPT_POLL_FIRST)

struct nw_accept {
	struct sockaddr *addr;
	socklen_t *addrlen;
	int flags;		/* SOCK_NONBLOCK | SOCK_CLOEXEC */
	unsigned int iou_flags; /* IORING_ACCEPT_* */
	uint32_t file_slot;	/* direct descriptor: slot + 1, or ALLOC */
	bool checked;		/* SO_ACCEPTCONN asked once */
	bool polled;		/* multishot POLL_FIRST: readiness seen once */
	bool wq;		/* multishot sent to io-wq (IOSQE_ASYNC) */
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
	acc->checked = acc->polled = acc->wq = false;
	if (acc->iou_flags & ~NW_ACCEPT_FLAGS)
		return -EINVAL;
	acc->file_slot = READ_ONCE(sqe->file_index);
	if (acc->file_slot) {
		if (acc->flags & SOCK_CLOEXEC)
			return -EINVAL;
		if ((acc->iou_flags & NW_ACCEPT_MULTISHOT) &&
		    acc->file_slot != IORING_FILE_INDEX_ALLOC)
			return -EINVAL;
	}
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

/* A new connection's fd: a direct descriptor if asked (-errno, slot, 0). */
static int accept_install(struct nw_req *req, struct nw_accept *acc, int fd)
{
	if (fd < 0 || !acc->file_slot)
		return fd;
	return nw_rsrc_install(req->ring, fd, acc->file_slot, req);
}

static int accept_finish(struct nw_req *req, struct nw_accept *acc, int fd)
{
	fd = accept_install(req, acc, fd);
	if (fd < 0) {
		nw_req_set_fail(req, fd);
		return NW_COMPLETE;
	}
	req->res = fd;
	if (accept_more(req))
		req->cflags |= IORING_CQE_F_SOCK_NONEMPTY;
	return NW_COMPLETE;
}

/*
 * The system call itself, not libc's accept4: the program's addr and
 * addrlen go to the kernel untouched, which checks them in its own order
 * (a file that is no socket fails -ENOTSOCK before addrlen is read, a bad
 * addrlen is -EFAULT). A sanitizer's accept4 reads *addrlen first and
 * faulted in the engine (diff-fuzz, corpus/diff/min-accept-*-badaddrlen).
 */
static int accept_call(struct nw_req *req, struct nw_accept *acc)
{
	long fd = syscall(SYS_accept4, req->fd, acc->addr, acc->addrlen,
			  acc->flags);

	return fd < 0 ? -errno : (int)fd;
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
		return accept_finish(req, acc, -EAGAIN);
	return NW_RETRY;
}

/* One nonblocking accept: fd, -EAGAIN (would block) or -errno. */
static int accept_once(struct nw_req *req, struct nw_accept *acc)
{
	int r = accept_ready(req, acc);

	if (r)
		return r > 0 ? -EAGAIN : r;
	return accept_call(req, acc);
}

/*
 * Arm a multishot accept: parked for good (poll.c), its accepts run as
 * task work. From a worker (IOSQE_ASYNC) it goes back to readiness first,
 * as multishot RECV does. POLL_FIRST with DONTWAIT: -EAGAIN, final (the
 * kernel's first -EAGAIN with REQ_F_NOWAIT). A file epoll refuses (no
 * ->poll) is no socket: the kernel's first attempt says -ENOTSOCK, or
 * where io-wq got it first (POLL_FIRST, IOSQE_ASYNC) io_wq_submit_work
 * refuses a multishot on a file it cannot poll: -EBADFD. A ring's fd is
 * no such file in the kernel (io_uring_poll), only here (a memfd): its
 * accept goes on to -ENOTSOCK (POLL_FIRST: once the ring is readable,
 * on a DEFER_TASKRUN ring at once; test/fuzz/allowlist.txt).
 */
static int accept_mshot_arm(struct nw_req *req, struct nw_accept *acc)
{
	bool poll_first = acc->iou_flags & NW_ACCEPT_POLL_FIRST;
	int ret;

	if (poll_first && (acc->iou_flags & NW_ACCEPT_DONTWAIT))
		return -EAGAIN;
	if (req->sqe_flags & IOSQE_ASYNC) {
		req->sqe_flags &= ~IOSQE_ASYNC;
		acc->wq = true;
		return NW_RETRY;
	}
	ret = nw_poll_arm_mshot(req, NW_POLLIN);
	if (ret == -EPERM && (poll_first || acc->wq) && !nw_is_ring_fd(req->fd))
		return -EBADFD;
	if (ret == -EPERM)
		return -ENOTSOCK;
	return ret ? ret : NW_QUEUED;
}

/* Multishot POLL_FIRST: no attempt before the listener was readable. */
static bool accept_mshot_wait_first(struct nw_req *req, struct nw_accept *acc)
{
	struct pollfd p = {req->fd, POLLIN, 0};

	if (!(acc->iou_flags & NW_ACCEPT_POLL_FIRST) || acc->polled)
		return false;
	if (poll(&p, 1, 0) != 1)
		return true;
	acc->polled = true;
	return false;
}

/*
 * Multishot, on the submit side (NW_ISSUE_F_MSHOT): each connection queued
 * is posted with F_MORE; none left keeps it armed (NW_QUEUED), unless
 * IORING_ACCEPT_DONTWAIT makes that final (-EAGAIN), as in io_accept. An
 * error ends it; so does a full CQ, with the connection as the last CQE.
 */
static int accept_mshot(struct nw_req *req, struct nw_accept *acc,
			unsigned int issue_flags)
{
	if (!(issue_flags & NW_ISSUE_F_MSHOT))
		return accept_mshot_arm(req, acc);
	if (accept_mshot_wait_first(req, acc))
		return NW_QUEUED;
	for (int i = 0; i < NW_MSHOT_MAX_LOOPS; i++) {
		int fd = accept_once(req, acc);

		if (fd == -EAGAIN && !(acc->iou_flags & NW_ACCEPT_DONTWAIT))
			return NW_QUEUED;
		if (fd < 0 || nw_cq_full(req->ring))
			return accept_finish(req, acc, fd);
		fd = accept_install(req, acc, fd);
		if (fd < 0)
			return fd;
		req->cflags = IORING_CQE_F_MORE;
		if (accept_more(req))
			req->cflags |= IORING_CQE_F_SOCK_NONEMPTY;
		nw_cq_add(req->ring, req, fd);
		req->cflags = 0;
	}
	nw_poll_mshot_requeue(req); /* more there: after the others */
	return NW_QUEUED;
}

/*
 * IORING_ACCEPT_POLL_FIRST: the kernel's poll, armed first, finds a
 * pending connection at once; wait only when there is none (the edge of
 * one queued earlier may be long gone). DONTWAIT: -EAGAIN, as there.
 */
static bool accept_poll_first(struct nw_req *req, struct nw_accept *acc)
{
	struct pollfd p = {req->fd, POLLIN, 0};

	if (!(acc->iou_flags & NW_ACCEPT_POLL_FIRST) || req->poll_arms)
		return false;
	return (acc->iou_flags & NW_ACCEPT_DONTWAIT) || poll(&p, 1, 0) != 1;
}

int nw_accept_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_accept *acc = nw_req_cmd(req, struct nw_accept);
	int r;

	/* A worker blocks for one connection; multishot ends with it. */
	if (!(issue_flags & NW_ISSUE_F_NONBLOCK)) {
		/*
		 * IOSQE_ASYNC: io-wq refuses a multishot it cannot poll,
		 * before the issue (io_wq_submit_work), POLL_FIRST or not;
		 * a ring's fd it polls (the memfd is a regular file here).
		 */
		if ((acc->iou_flags & NW_ACCEPT_MULTISHOT) && acc->wq &&
		    (req->flags & NW_REQ_F_REG_FILE) && !nw_is_ring_fd(req->fd))
			return -EBADFD;
		/* Punted as epoll refused the file: POLL_FIRST is -EAGAIN. */
		if ((acc->iou_flags & NW_ACCEPT_POLL_FIRST) &&
		    (req->flags & NW_REQ_F_REG_FILE))
			return accept_finish(req, acc, -EAGAIN);
		return accept_finish(req, acc, accept_call(req, acc));
	}
	if (acc->iou_flags & NW_ACCEPT_MULTISHOT)
		return accept_mshot(req, acc, issue_flags);
	if (req->ring->punt_all)
		return NW_PUNT;
	if (nw_net_poll_skip(req, NW_POLLIN))
		return accept_wouldblock(req, acc);
	if (accept_poll_first(req, acc))
		return accept_wouldblock(req, acc);
	r = accept_once(req, acc);
	if (r == -EAGAIN ||
	    (r == -ENOTSOCK &&
	     nw_net_arm_nonsock(req, acc->iou_flags & NW_ACCEPT_POLL_FIRST)))
		return accept_wouldblock(req, acc);
	return accept_finish(req, acc, r);
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
	return nw_addr_copy(req->async, (void *)(uintptr_t)READ_ONCE(sqe->addr),
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

/*
 * connect(2) with O_NONBLOCK for the call, as __sys_connect_file's flags
 * give it in the kernel. A blocking socket's file has O_NONBLOCK set
 * around the call and its flags put back after: the program sees the
 * flag only if it asks (F_GETFL) or does I/O on the socket from another
 * thread during that one call, on a socket it is connecting. The call
 * that reads the verdict of an EINPROGRESS, made once poll says POLLOUT
 * with no error, needs no flag: the connect is over, so connect(2) says
 * 0 or EISCONN at once (a blocking socket waits only in SYN_SENT or
 * SYN_RECV, which poll shows without POLLOUT).
 */
static int connect_forced(struct nw_req *req, struct nw_connect *cn)
{
	int fl, ret;

	if (cn->nonblock > 0 || cn->in_progress)
		return connect_call(req, cn);
	fl = fcntl(req->fd, F_GETFL);
	if (fl < 0)
		return -errno;
	cn->nonblock = (fl & O_NONBLOCK) != 0;
	if (cn->nonblock)
		return connect_call(req, cn);
	if (fcntl(req->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	ret = connect_call(req, cn);
	fcntl(req->fd, F_SETFL, fl); /* asked again next time */
	return ret;
}

static int connect_nonblock(struct nw_req *req, struct nw_connect *cn)
{
	int ret, kind;

	/* The edge to wait for is one that comes after this attempt. */
	(void)nw_poll_prepare(req, NW_POLLOUT, &kind);

	if (cn->in_progress) {
		struct pollfd p = {.fd = req->fd, .events = POLLOUT};

		if (poll(&p, 1, 0) < 0)
			return connect_finish(req, -errno);
		if (p.revents & POLLERR)
			return connect_finish(req, sock_error(req->fd));
		if (!p.revents)
			return NW_RETRY; /* still connecting */
	}
	ret = connect_forced(req, cn);
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
	uint32_t file_slot; /* direct descriptor: slot + 1, or ALLOC */
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
	s->file_slot = READ_ONCE(sqe->file_index);
	flags = s->type & ~0xf; /* ~SOCK_TYPE_MASK */
	if (s->file_slot && (flags & SOCK_CLOEXEC))
		return -EINVAL;
	if (flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
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
	if (s->file_slot) {
		fd = nw_rsrc_install(req->ring, fd, s->file_slot, req);
		if (fd < 0)
			return fd;
	}
	req->res = fd;
	return NW_COMPLETE;
}

/* BIND: the address is copied at prep, as the kernel's io_bind_prep. */
int nw_bind_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_connect *cn = nw_req_cmd(req, struct nw_connect);

	if (READ_ONCE(sqe->len) || READ_ONCE(sqe->buf_index) ||
	    READ_ONCE(sqe->rw_flags) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	cn->addr_len = (int)READ_ONCE(sqe->addr2);
	req->async = calloc(1, sizeof(struct sockaddr_storage));
	if (!req->async)
		return -ENOMEM;
	return nw_addr_copy(req->async, (void *)(uintptr_t)READ_ONCE(sqe->addr),
			    cn->addr_len);
}

int nw_bind_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_connect *cn = nw_req_cmd(req, struct nw_connect);

	(void)issue_flags; /* bind(2) does not block */
	if (bind(req->fd, req->async, (socklen_t)cn->addr_len))
		return -errno;
	req->res = 0;
	return NW_COMPLETE;
}

struct nw_listen {
	int backlog;
};

int nw_listen_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_listen *l = nw_req_cmd(req, struct nw_listen);

	if (READ_ONCE(sqe->addr) || READ_ONCE(sqe->buf_index) ||
	    READ_ONCE(sqe->rw_flags) || READ_ONCE(sqe->splice_fd_in) ||
	    READ_ONCE(sqe->addr2))
		return -EINVAL;
	l->backlog = (int)READ_ONCE(sqe->len);
	return 0;
}

int nw_listen_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_listen *l = nw_req_cmd(req, struct nw_listen);

	(void)issue_flags; /* listen(2) does not block */
	if (listen(req->fd, l->backlog))
		return -errno;
	req->res = 0;
	return NW_COMPLETE;
}
