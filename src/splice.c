/* SPDX-License-Identifier: MIT */
/*
 * SPLICE and TEE. Semantics: kernel io_uring/splice.c and fs/splice.c
 * do_splice / do_tee (6.18), splice(2), tee(2), io_uring_prep_splice(3).
 *
 * The kernel runs both ops in an io-wq worker (REQ_F_FORCE_ASYNC), where
 * they block until the pipes let them move data. nowait gets the same
 * results without a worker when both ends are pipes: the call is tried
 * with SPLICE_F_NONBLOCK on the thread that issues it and, on EAGAIN, the
 * request parks on the end that blocked (an empty input: POLLIN on it; a
 * full output: POLLOUT on it) and is tried again when that end is ready.
 * Any other pair (a regular file, a socket) goes to a worker, which makes
 * the plain blocking call. -EAGAIN is final when the program asked for it
 * (SPLICE_F_NONBLOCK, or an O_NONBLOCK pipe, which do_splice honours).
 *
 * Results are the system call's; any result other than the full length
 * (an error, a short splice, 0 at end of input) fails a link, as the
 * kernel's req_set_fail(ret != len) does. With SPLICE_F_FD_IN_FIXED the
 * input is a registered file slot, looked up at the first issue; the
 * request holds a reference on it (req->async) until it is freed, so the
 * program may replace or close the slot meanwhile. Using
 * the system call on a pipe clears the pipe's FMODE_NOWAIT (fs/splice.c
 * pipe_clear_nowait), so later RWF_NOWAIT reads of that pipe say
 * EOPNOTSUPP and rw.c sends them to a worker: slower, same results.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>
#include <sys/stat.h>
#include "splice.h"
#include "complete.h"
#include "fs.h"
#include "poll.h"
#include "rsrc.h"

#define NW_SPLICE_F_ALL 0xfU /* SPLICE_F_MOVE | NONBLOCK | MORE | GIFT */
#define NW_SPLICE_TRIES 8    /* nonblocking tries per issue, then a worker */

struct nw_splice {
	int64_t off_in;	    /* -1: no offset (the file position, a pipe) */
	int64_t off_out;    /* likewise */
	uint32_t len;	    /* bytes asked for */
	int fd_in;	    /* the program's fd or the fixed slot's; -1 none */
	unsigned int flags; /* SPLICE_F_*, without SPLICE_F_FD_IN_FIXED */
	bool tee;
	bool fixed_in; /* fd_in is a fixed slot not looked up yet */
};
_Static_assert(sizeof(struct nw_splice) <= NW_REQ_CMD_SIZE,
	       "nw_splice too big");

/* __io_splice_prep: what SPLICE and TEE share. */
static int splice_common_prep(struct nw_req *req,
			      const struct io_uring_sqe *sqe, bool tee)
{
	struct nw_splice *sp = nw_req_cmd(req, struct nw_splice);
	unsigned int flags = READ_ONCE(sqe->splice_flags);

	sp->len = READ_ONCE(sqe->len);
	if (flags & ~(SPLICE_F_FD_IN_FIXED | NW_SPLICE_F_ALL))
		return -EINVAL;
	sp->fd_in = READ_ONCE(sqe->splice_fd_in);
	sp->flags = flags & ~SPLICE_F_FD_IN_FIXED;
	sp->tee = tee;
	sp->fixed_in = flags & SPLICE_F_FD_IN_FIXED;
	/* A ring's fd: the kernel's ring file has no splice_read/write. */
	if (!sp->fixed_in)
		sp->fd_in = nw_ring_fd_as_file(sp->fd_in);
	if (!(req->sqe_flags & IOSQE_FIXED_FILE))
		req->fd = nw_ring_fd_as_file(req->fd);
	return 0;
}

/*
 * io_splice_get_file: SPLICE_F_FD_IN_FIXED names a slot, looked up at the
 * first issue as the kernel does (an empty or out of range one: -EBADF).
 * The slot's node is held in req->async (req->file_node is the output's)
 * until the request is freed, as the kernel's sp->rsrc_node.
 */
static void splice_resolve_in(struct nw_req *req, struct nw_splice *sp)
{
	struct nw_rsrc_node *node;
	int fd = -1;

	if (!sp->fixed_in)
		return;
	sp->fixed_in = false;
	node = nw_rsrc_node_get(req->ring, (unsigned int)sp->fd_in, &fd);
	sp->fd_in = node ? fd : -1;
	req->async = node;
}

void nw_splice_cleanup(struct nw_req *req)
{
	nw_rsrc_node_put(req->ring, req->async, req);
}

int nw_splice_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_splice *sp = nw_req_cmd(req, struct nw_splice);

	sp->off_in = (int64_t)READ_ONCE(sqe->splice_off_in);
	sp->off_out = (int64_t)READ_ONCE(sqe->off);
	return splice_common_prep(req, sqe, false);
}

int nw_tee_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_splice *sp = nw_req_cmd(req, struct nw_splice);

	if (READ_ONCE(sqe->splice_off_in) || READ_ONCE(sqe->off))
		return -EINVAL;
	sp->off_in = sp->off_out = -1;
	return splice_common_prep(req, sqe, true);
}

/*
 * splice(2) refuses an offset on a pipe (-ESPIPE) before it checks the
 * files' modes; io_uring calls do_splice, which checks the modes first:
 * an input not open for reading or an output not open for writing is
 * -EBADF there.
 */
static int splice_espipe(struct nw_req *req, struct nw_splice *sp)
{
	int in = fcntl(sp->fd_in, F_GETFL), out = fcntl(req->fd, F_GETFL);

	if (in < 0 || out < 0 || (in & O_ACCMODE) == O_WRONLY ||
	    (out & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	return -ESPIPE;
}

/* One splice(2) or tee(2). Returns bytes moved or -errno. */
static ssize_t splice_syscall(struct nw_req *req, struct nw_splice *sp,
			      unsigned int flags)
{
	loff_t in = sp->off_in, out = sp->off_out;
	ssize_t n;

	if (!sp->len) {
		/* The kernel looks both files up, then moves nothing. */
		if (!nw_fd_usable(req->fd) || sp->fd_in < 0 ||
		    !nw_fd_usable(sp->fd_in))
			return -EBADF;
		return 0;
	}
	if (sp->fd_in < 0)
		return -EBADF;
	if (sp->tee)
		n = tee(sp->fd_in, req->fd, sp->len, flags);
	else
		n = splice(sp->fd_in, sp->off_in == -1 ? NULL : &in, req->fd,
			   sp->off_out == -1 ? NULL : &out, sp->len, flags);
	if (n < 0 && errno == ESPIPE)
		return splice_espipe(req, sp);
	return n < 0 ? -errno : n;
}

/*
 * The call with SIGPIPE blocked on this thread (workers block it
 * already), so that an EPIPE raises nothing the program could see.
 */
static ssize_t splice_call(struct nw_req *req, struct nw_splice *sp,
			   unsigned int flags, bool inline_thread)
{
	sigset_t set, old;
	bool had;
	ssize_t n;

	if (!inline_thread) {
		had = nw_sigpipe_pending();
		n = splice_syscall(req, sp, flags);
		if (n == -EPIPE)
			nw_sigpipe_drop(had);
		return n;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	had = nw_sigpipe_pending();
	n = splice_syscall(req, sp, flags);
	if (n == -EPIPE)
		nw_sigpipe_drop(had);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return n;
}

/* The final result: anything but the full length fails a link. */
static int splice_done(struct nw_req *req, struct nw_splice *sp, ssize_t n)
{
	req->res = (int)n;
	if (n != (ssize_t)sp->len)
		nw_req_set_fail(req, req->res);
	return NW_COMPLETE;
}

static bool fd_is_pipe(int fd, bool *reg)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return false;
	*reg = S_ISREG(st.st_mode) || S_ISBLK(st.st_mode);
	return S_ISFIFO(st.st_mode);
}

/* do_splice makes an O_NONBLOCK pipe end nonblocking for the call. */
static bool program_nonblock(struct nw_req *req, struct nw_splice *sp)
{
	int in = fcntl(sp->fd_in, F_GETFL), out = fcntl(req->fd, F_GETFL);

	return (in >= 0 && (in & O_NONBLOCK)) ||
	       (out >= 0 && (out & O_NONBLOCK));
}

#define NW_IN_READY  (POLLIN | POLLHUP | POLLERR | POLLNVAL)
#define NW_OUT_READY (POLLOUT | POLLERR | POLLHUP | POLLNVAL)

/*
 * After EAGAIN: wait on the end that blocked. The input's readiness
 * generation was taken before the attempt; the output's is taken now and
 * its state checked again after, so no edge is lost either way.
 */
static int splice_park(struct nw_req *req, struct nw_splice *sp)
{
	struct pollfd p[2] = {{.fd = sp->fd_in, .events = POLLIN},
			      {.fd = req->fd, .events = POLLOUT}};
	int kind;

	if (poll(p, 2, 0) < 0)
		return NW_POLL_ABORTED;
	if (!(p[0].revents & NW_IN_READY))
		return nw_poll_arm_fd(req, sp->fd_in, NW_POLLIN);
	if (p[1].revents & NW_OUT_READY)
		return NW_POLL_READY; /* both ready by now: try again */
	nw_poll_prepare_fd(req, req->fd, NW_POLLOUT, &kind);
	p[1].revents = 0;
	if (poll(&p[1], 1, 0) != 0)
		return NW_POLL_READY;
	return nw_poll_arm_fd(req, req->fd, NW_POLLOUT);
}

static int splice_nonblock(struct nw_req *req, struct nw_splice *sp)
{
	bool in_reg = false, out_reg = false;
	int tries, kind;

	if (!sp->len || sp->fd_in < 0)
		return splice_done(req, sp, splice_syscall(req, sp, 0));
	if (!fd_is_pipe(req->fd, &out_reg) || !fd_is_pipe(sp->fd_in, &in_reg)) {
		/* io_prep_async_work: a regular output file, bounded class */
		if (out_reg)
			req->flags |= NW_REQ_F_REG_FILE;
		return NW_PUNT;
	}
	for (tries = 0; tries < NW_SPLICE_TRIES; tries++) {
		ssize_t n;
		int r;

		nw_poll_prepare_fd(req, sp->fd_in, NW_POLLIN, &kind);
		n = splice_call(req, sp, sp->flags | SPLICE_F_NONBLOCK, true);
		if (n != -EAGAIN || (sp->flags & SPLICE_F_NONBLOCK) ||
		    program_nonblock(req, sp))
			return splice_done(req, sp, n);
		r = splice_park(req, sp);
		if (r == NW_POLL_OK)
			return NW_QUEUED;
		if (r == NW_POLL_ABORTED)
			break;
	}
	return NW_PUNT;
}

int nw_splice_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_splice *sp = nw_req_cmd(req, struct nw_splice);

	splice_resolve_in(req, sp);
	if (!(issue_flags & NW_ISSUE_F_NONBLOCK))
		return splice_done(req, sp,
				   splice_call(req, sp, sp->flags, false));
	if (req->ring->punt_all)
		return NW_PUNT;
	return splice_nonblock(req, sp);
}
