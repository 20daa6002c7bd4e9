/* SPDX-License-Identifier: MIT */
/*
 * READ, WRITE, READV, WRITEV. Semantics: kernel io_uring/rw.c and the
 * notes in reference/kernel-semantics.md 1.3-1.8 and 2.
 *
 * Inline (the submitting thread or the reactor): one nonblocking attempt,
 * preadv2/pwritev2 with RWF_NOWAIT, which pipes (6.4+), sockets and
 * regular files honour; EAGAIN parks the request on readiness (poll.c),
 * EOPNOTSUPP (named FIFOs, old kernels) sends it to a worker. A worker
 * does the same calls without RWF_NOWAIT. The program's fd flags are never
 * changed. Offsets: -1 is the file position; stream fds (ESPIPE) ignore
 * the offset, as the kernel does; so do anon-inode files (eventfd,
 * signalfd, timerfd: no pread, but their read and write take no position,
 * and the kernel passes them the SQE's). A short transfer is final on a stream
 * and continued on a regular file or block device, and either way a
 * result shorter than asked fails a link. RWF_NOWAIT from the program
 * makes -EAGAIN final; on a regular file io_uring's own rules come first
 * (rw_reg_nowait: a buffered write is -EAGAIN unless the filesystem takes
 * it nonblocking, IOSQE_ASYNC drops the flag).
 *
 * READ_MULTISHOT stays parked on readiness (poll.c nw_poll_arm_mshot) and
 * reads into a provided buffer on the submit side while data is there,
 * one CQE with IORING_CQE_F_MORE per read, until EOF, an error or
 * -ENOBUFS ends it (io_read_mshot).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "rw-int.h"
#include "complete.h"
#include "poll.h"
#include "rsrc.h"
#include "kbuf.h"

/*
 * IOSQE_BUFFER_SELECT: the buffer is picked at issue; the length asked is
 * sqe->len, or for READV that of the one iovec allowed (io_rw_buffer_select
 * prep). 0 asks for a whole buffer.
 */
static int rw_select_prep(struct nw_req *req, const struct io_uring_sqe *sqe,
			  struct nw_rw *rw, uint64_t addr, uint32_t len,
			  bool vectored)
{
	struct iovec iov;

	if (vectored) {
		if (len != 1)
			return -EINVAL;
		if (nw_copy_from_user(&iov, (void *)(uintptr_t)addr,
				      sizeof(iov)))
			return -EFAULT;
		len = (uint32_t)iov.iov_len;
	}
	nw_kbuf_prep(req, sqe, len);
	rw->nr_iov = 1;
	rw->total = 0;
	return 0;
}

/* x86-64's USER_PTR_MAX with 4-level paging: access_ok's limit. */
#define NW_RW_PTR_MAX	0x7fffffffefffULL
#define NW_RW_MAX_COUNT ((size_t)(INT_MAX & ~4095)) /* MAX_RW_COUNT */

/* access_ok: a range below USER_PTR_MAX (4-level paging), no wrap. */
static bool rw_range_ok(const void *p, size_t len)
{
	uint64_t a = (uintptr_t)p;

	return a <= NW_RW_PTR_MAX && len <= NW_RW_PTR_MAX - a;
}

/*
 * The kernel's copy_iovec_from_user reads the array in order: a fault
 * there is -EFAULT, but a negative length met first is -EINVAL. Which
 * came first is only asked when the whole copy failed.
 */
static int rw_copy_iovecs(struct iovec *iov, uint64_t uvec, unsigned int nr)
{
	if (!nw_copy_from_user(iov, (const void *)(uintptr_t)uvec,
			       nr * sizeof(*iov)))
		return 0;
	for (unsigned int i = 0; i < nr; i++) {
		uint64_t at = uvec + i * sizeof(*iov);

		if (nw_copy_from_user(&iov[i], (const void *)(uintptr_t)at,
				      sizeof(*iov)))
			return -EFAULT;
		if ((ssize_t)iov[i].iov_len < 0)
			return -EINVAL;
	}
	return -EFAULT; /* the memory went away meanwhile */
}

/*
 * __import_iovec at prep (SUBMIT_STABLE): one iovec is import_ubuf's
 * (a negative length -EINVAL, then the range checked capped at
 * MAX_RW_COUNT); more are copied in order (above), then each range is
 * checked (-EFAULT) and the total capped at MAX_RW_COUNT. READV_FIXED and
 * WRITEV_FIXED only copy (iovec_from_user): their ranges are checked
 * against the registered buffer.
 */
static int rw_import_vec(struct nw_rw *rw, uint64_t uvec, unsigned int nr,
			 bool ranges)
{
	struct iovec *iov = rw->iov;
	size_t total = 0;
	int ret = nr ? rw_copy_iovecs(iov, uvec, nr) : 0;

	if (ret)
		return ret;
	for (unsigned int i = 0; i < nr; i++)
		if ((ssize_t)iov[i].iov_len < 0)
			return -EINVAL;
	for (unsigned int i = 0; i < nr; i++) {
		size_t len = iov[i].iov_len;

		if (nr == 1 && len > NW_RW_MAX_COUNT)
			len = NW_RW_MAX_COUNT;
		if (!ranges) {
			total += iov[i].iov_len;
			continue;
		}
		if (!rw_range_ok(iov[i].iov_base, len))
			return -EFAULT;
		if (len > NW_RW_MAX_COUNT - total)
			len = NW_RW_MAX_COUNT - total;
		iov[i].iov_len = len;
		total += len;
	}
	rw->total = total;
	return 0;
}

static int rw_prep(struct nw_req *req, const struct io_uring_sqe *sqe,
		   bool write, bool vectored)
{
	struct nw_rw *rw = nw_req_cmd(req, struct nw_rw);
	uint64_t addr = READ_ONCE(sqe->addr);
	unsigned int len = READ_ONCE(sqe->len);
	unsigned int ioprio = READ_ONCE(sqe->ioprio);

	int ret = ioprio ? nw_rw_ioprio_check(ioprio) : 0;

	if (ret)
		return ret;
	ret = nw_rw_attr_prep(rw, sqe);
	if (ret)
		return ret;
	rw->off = READ_ONCE(sqe->off);
	rw->rw_flags = (int)READ_ONCE(sqe->rw_flags);
	rw->write = write;
	req->lazy_ok = true; /* its park may be lazy (pollverify.c) */
	if (!(req->sqe_flags & IOSQE_FIXED_FILE))
		req->fd = nw_ring_fd_as_file(req->fd); /* no read, no write */
	rw->flags_ok = false;
	rw->nowait = RW_NOWAIT_OK;
	rw->buf_err = 0;
	rw->done = 0;
	rw->iov = &rw->fast_iov;
	if (req->sqe_flags & IOSQE_BUFFER_SELECT)
		return rw_select_prep(req, sqe, rw, addr, len, vectored);
	if (!vectored) {
		rw->fast_iov.iov_base = (void *)(uintptr_t)addr;
		rw->fast_iov.iov_len = len;
		rw->nr_iov = 1;
		rw->total = len;
		return 0;
	}
	/* SUBMIT_STABLE: the iovec array is copied now. */
	if (len > IOV_MAX)
		return -EINVAL;
	if (len > 1) {
		req->async = malloc(len * sizeof(struct iovec));
		if (!req->async)
			return -ENOMEM;
		rw->iov = req->async;
	}
	rw->nr_iov = len;
	return rw_import_vec(rw, addr, len,
			     req->opcode != NW_OP_READV_FIXED &&
				     req->opcode != NW_OP_WRITEV_FIXED);
}

/* READ and WRITE import their buffer at prep too (import_ubuf). */
static int rw_ubuf_prep(struct nw_req *req, const struct io_uring_sqe *sqe,
			bool write)
{
	struct nw_rw *rw = nw_req_cmd(req, struct nw_rw);
	int ret = rw_prep(req, sqe, write, false);
	size_t len = rw->fast_iov.iov_len;

	if (ret || (req->sqe_flags & IOSQE_BUFFER_SELECT))
		return ret;
	if (len > NW_RW_MAX_COUNT)
		len = NW_RW_MAX_COUNT;
	return rw_range_ok(rw->fast_iov.iov_base, len) ? 0 : -EFAULT;
}

int nw_read_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	return rw_ubuf_prep(req, sqe, false);
}

int nw_readv_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	return rw_prep(req, sqe, false, true);
}

/*
 * READ_FIXED/WRITE_FIXED: the range must lie in registered buffer index.
 * The kernel looks the buffer up at issue (io_init_rw_fixed), after the
 * prep's checks and the file's lookup: a failure here is kept for then.
 */
static int rw_fixed_prep(struct nw_req *req, const struct io_uring_sqe *sqe,
			 bool write)
{
	struct nw_rw *rw = nw_req_cmd(req, struct nw_rw);
	int ret = rw_prep(req, sqe, write, false);

	if (ret)
		return ret;
	rw->buf_err = (int16_t)nw_rsrc_buffer_get(
		req, READ_ONCE(sqe->buf_index), READ_ONCE(sqe->addr),
		READ_ONCE(sqe->len));
	return 0;
}

int nw_read_fixed_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	return rw_fixed_prep(req, sqe, false);
}

int nw_write_fixed_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	return rw_fixed_prep(req, sqe, true);
}

/*
 * READV_FIXED/WRITEV_FIXED (6.15): an iovec array as READV's, each iovec
 * inside registered buffer buf_index (io_import_reg_vec), else -EFAULT.
 */
static int rwv_fixed_prep(struct nw_req *req, const struct io_uring_sqe *sqe,
			  bool write)
{
	struct nw_rw *rw = nw_req_cmd(req, struct nw_rw);
	int ret = rw_prep(req, sqe, write, true);

	if (ret)
		return ret;
	/* As READ_FIXED's: the lookup's failure shows at issue. */
	rw->buf_err = (int16_t)nw_rsrc_buffer_get_vec(
		req, READ_ONCE(sqe->buf_index), rw->iov, rw->nr_iov);
	return 0;
}

int nw_readv_fixed_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	return rwv_fixed_prep(req, sqe, false);
}

int nw_writev_fixed_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	return rwv_fixed_prep(req, sqe, true);
}

int nw_write_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	return rw_ubuf_prep(req, sqe, true);
}

int nw_writev_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	return rw_prep(req, sqe, true, true);
}

void nw_rw_cleanup(struct nw_req *req)
{
	free(req->async);
}

/* Drop n transferred bytes from the front of the iovecs. */
static __attribute__((always_inline)) inline void iov_advance(struct nw_rw *rw,
							      size_t n)
{
	rw->done += n;
	while (n && rw->nr_iov) {
		if (n < rw->iov->iov_len) {
			rw->iov->iov_base = (char *)rw->iov->iov_base + n;
			rw->iov->iov_len -= n;
			return;
		}
		n -= rw->iov->iov_len;
		rw->iov++;
		rw->nr_iov--;
	}
}

/* Learn (fstat) and remember what kind of file the fd is. */
static int fd_kind_learn(struct nw_req *req)
{
	struct stat st;
	int kind;

	if (fstat(req->fd, &st) < 0)
		return NW_FD_UNKNOWN;
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		kind = NW_FD_FILE;
	else if (S_ISFIFO(st.st_mode) || !(st.st_mode & S_IFMT))
		kind = NW_FD_STREAM; /* or an anon inode: eventfd, signalfd... */
	else
		kind = NW_FD_SOCKET;
	nw_fd_set_kind(req->ring, req->fd, kind);
	if (kind != NW_FD_FILE)
		nw_fd_set_file_hint(req->fd, false);
	return kind;
}

/*
 * The position to pass: -1 for the file position and for streams, which
 * ignore the SQE offset; sockets and ttys take only 0 (kernel: ki_pos must
 * be 0 there) and refuse others with -ESPIPE.
 */
static int rw_pos(struct nw_rw *rw, int kind, off_t *pos)
{
	*pos = (off_t)(rw->off + rw->done);
	if (rw->off == (uint64_t)-1 || kind == NW_FD_STREAM)
		*pos = -1;
	else if (kind == NW_FD_SOCKET)
		return rw->off == 0 ? (*pos = -1, 0) : -ESPIPE;
	return 0;
}

/*
 * A write to a pipe or socket without a reader raised SIGPIPE on this
 * thread. The kernel raises it on the submitting task where the write
 * runs there (inline, or a retry in its task work); engine threads block
 * every signal, so move it there.
 */
static void sigpipe_to_submitter(struct nw_req *req)
{
	static const struct timespec zero;
	int saved = errno;
	sigset_t set;

	if (req->task_tid == nw_gettid())
		return; /* delivered to the right thread already */
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	if (sigtimedwait(&set, NULL, &zero) == SIGPIPE)
		syscall(SYS_tgkill, getpid(), req->task_tid, SIGPIPE);
	errno = saved;
}

/*
 * A write of no bytes to a socket: the kernel hands the empty iterator
 * to sock_write_iter, and the protocol answers (a listener's tcp_sendmsg
 * says -EPIPE, a UDP or SEQPACKET socket sends an empty message), where
 * pwritev2 returns 0 for an empty vector without calling the file. A
 * send(2) of no bytes takes that path, with sock_write_iter's flags.
 */
static ssize_t sock_write_nothing(int fd, int flags)
{
	int type = 0, msg = (flags & RWF_NOWAIT) ? MSG_DONTWAIT : 0;
	socklen_t len = sizeof(type);

	if (!getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) &&
	    type == SOCK_SEQPACKET)
		msg |= MSG_EOR;
	return send(fd, NULL, 0, msg);
}

/* The write's system call: pwritev2, or for no bytes on a socket send. */
static ssize_t rw_pwrite(struct nw_req *req, struct nw_rw *rw, off_t pos,
			 int flags)
{
	struct stat st;

	if (unlikely(rw->total == 0) && pos == -1 && !fstat(req->fd, &st) &&
	    S_ISSOCK(st.st_mode))
		return sock_write_nothing(req->fd, flags);
	return pwritev2(req->fd, rw->iov, (int)rw->nr_iov, pos, flags);
}

/*
 * The write where the kernel's runs in an io-wq worker: a punt (the
 * blocking attempt, on a worker here too) or IOSQE_ASYNC (whose retries go
 * back to io-wq, io_req_task_submit). Its SIGPIPE goes to the worker,
 * which blocks it, so the program never sees it (in any disposition):
 * blocked here for the call, then taken back.
 */
static ssize_t rw_write_hidden(struct nw_req *req, struct nw_rw *rw, off_t pos,
			       int flags)
{
	sigset_t set, old;
	ssize_t n;
	bool had;
	int saved;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	had = nw_sigpipe_pending();
	n = rw_pwrite(req, rw, pos, flags);
	saved = errno;
	if (n < 0 && saved == EPIPE)
		nw_sigpipe_drop(had);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return n;
}

static ssize_t rw_write(struct nw_req *req, struct nw_rw *rw, off_t pos,
			int flags, bool blocking)
{
	ssize_t n;

	if (unlikely(blocking || (req->sqe_flags & IOSQE_ASYNC)))
		return rw_write_hidden(req, rw, pos, flags);
	n = rw_pwrite(req, rw, pos, flags);
	if (n < 0 && errno == EPIPE)
		sigpipe_to_submitter(req);
	return n;
}

/*
 * One preadv2/pwritev2 (blocking: on a worker). Returns n or -errno.
 * Inline in the nonblocking issue, the hot one: a read on a pipe is this
 * call and little else.
 */
static __attribute__((always_inline)) inline ssize_t
rw_call_on(struct nw_req *req, struct nw_rw *rw, int *kind, int flags,
	   bool blocking)
{
	off_t pos;
	ssize_t n;
	int ret;

	for (;;) {
		ret = rw_pos(rw, *kind, &pos);
		if (ret)
			return ret;
		n = rw->write ? rw_write(req, rw, pos, flags, blocking)
			      : preadv2(req->fd, rw->iov, (int)rw->nr_iov, pos,
					flags);
		if (n >= 0)
			return n;
		if (errno != ESPIPE || pos == -1 || *kind != NW_FD_UNKNOWN)
			return -errno;
		/* No pread here: learn what the fd is, then try again. */
		*kind = fd_kind_learn(req);
		if (*kind == NW_FD_UNKNOWN || *kind == NW_FD_FILE)
			return -ESPIPE;
	}
}

/* The nonblocking attempt's call (the submitter, the reactor, a driver). */
static __attribute__((always_inline)) inline ssize_t
rw_call(struct nw_req *req, struct nw_rw *rw, int *kind, int flags)
{
	return rw_call_on(req, rw, kind, flags, false);
}

/* Is the fd a regular file or block device, where short I/O continues? */
static bool fd_is_file(struct nw_req *req, int *kind)
{
	if (*kind == NW_FD_UNKNOWN)
		*kind = fd_kind_learn(req);
	return *kind == NW_FD_FILE;
}

/* The final result: a transfer shorter than asked fails a link. */
static int rw_done(struct nw_req *req, struct nw_rw *rw, ssize_t err)
{
	if (err < 0 && !rw->done) {
		req->res = (int)err;
		return (int)err;
	}
	req->res = (int)rw->done;
	if (rw->done != rw->total)
		nw_req_set_fail(req, req->res);
	return NW_COMPLETE;
}

/*
 * The readiness snapshot before a nonblocking attempt (poll.c): true when
 * the fd is known not ready, and the attempt is to be skipped.
 */
static bool rw_snapshot(struct nw_req *req, struct nw_rw *rw, int *kind)
{
	return nw_poll_prepare(req, rw->write ? NW_POLLOUT : NW_POLLIN, kind);
}

/*
 * A regular file is never parked on readiness, so its read needs no
 * snapshot, which costs poll_lock and the fd's lookup: the file hint
 * (fdcache.c) skips it, with the kind left unknown, as for an fd the
 * engine has not seen. The hint decides nothing else: a number reused
 * for a pipe or socket fails the offset (ESPIPE, then the kind is learnt)
 * or comes back short (learnt then) or EAGAIN, and then the snapshot is
 * taken and the attempt made again, as if the hint had not been there,
 * before anything parks.
 */
static int rw_nonblock(struct nw_req *req, struct nw_rw *rw)
{
	bool user_nowait = rw->rw_flags & RWF_NOWAIT;
	bool hinted = nw_fd_file_hint(req->fd);
	int kind = NW_FD_UNKNOWN;
	ssize_t n;

	if ((int64_t)rw->off < -1) /* rw_verify_area, after the file's mode */
		return nw_rw_mode_ok(rw, fcntl(req->fd, F_GETFL)) ? -EINVAL
								  : -EBADF;
	if (!hinted && rw_snapshot(req, rw, &kind))
		return user_nowait ? rw_done(req, rw, -EAGAIN) : NW_RETRY;
	for (;;) {
		n = rw_call(req, rw, &kind, rw->rw_flags | RWF_NOWAIT);
		if (n == -EAGAIN && hinted && !rw->done) {
			hinted = false;
			nw_fd_set_file_hint(req->fd, false);
			if (rw_snapshot(req, rw, &kind))
				break;
			continue;
		}
		if (n == -EAGAIN)
			break;
		if (n == -EOPNOTSUPP && !user_nowait)
			return NW_PUNT; /* no RWF_NOWAIT here: a worker */
		if (n <= 0)
			return rw_done(req, rw, n);
		iov_advance(rw, (size_t)n);
		if (rw->done == rw->total || !fd_is_file(req, &kind))
			break;
	}
	if (n > 0) { /* in full, or a stream's short transfer */
		if (!hinted && rw->off != (uint64_t)-1 &&
		    kind != NW_FD_STREAM && kind != NW_FD_SOCKET)
			nw_fd_set_file_hint(req->fd, true);
		return rw_done(req, rw, 0);
	}
	if (user_nowait)
		return rw_done(req, rw, -EAGAIN);
	/* A file that is partly done continues blocking, in a worker. */
	return rw->done ? NW_PUNT : NW_RETRY;
}

static int rw_blocking(struct nw_req *req, struct nw_rw *rw, int flags)
{
	int kind = nw_fd_kind(req->ring, req->fd);
	ssize_t n;

	if ((int64_t)rw->off < -1)
		return nw_rw_mode_ok(rw, fcntl(req->fd, F_GETFL)) ? -EINVAL
								  : -EBADF;
	for (;;) {
		n = rw_call_on(req, rw, &kind, flags, true);
		/*
		 * A file without read_iter/write_iter (a directory): the
		 * system call's loop refuses every flag, the kernel's
		 * loop_rw_iter only HIPRI and NOWAIT, which rw_init_file
		 * has answered: the others change nothing there.
		 */
		if (n == -EOPNOTSUPP && flags && !rw->done) {
			flags = 0;
			continue;
		}
		if (n <= 0)
			return rw_done(req, rw, n);
		iov_advance(rw, (size_t)n);
		if (rw->done == rw->total || !fd_is_file(req, &kind))
			return rw_done(req, rw, 0);
	}
}

/*
 * RWF_NOWAIT on a file of loop_rw_iter's (rw_nowait_kind): -EAGAIN unless
 * the file is O_NONBLOCK, whose plain calls do not block and are made
 * (the loop takes no RWF flags: the kernel's kiocb flags never reach a
 * plain ->write); the offset's check comes first, as rw_verify_area's.
 */
static int rw_loop_nowait(struct nw_req *req, struct nw_rw *rw)
{
	int fl;

	if (req->ring->flags & IORING_SETUP_IOPOLL)
		return -EOPNOTSUPP; /* rw_issue's first answer */
	fl = fcntl(req->fd, F_GETFL);
	if (fl < 0)
		return -errno;
	if ((int64_t)rw->off < -1)
		return -EINVAL;
	if (!(fl & O_NONBLOCK))
		return -EAGAIN;
	rw->rw_flags = 0;
	return rw_blocking(req, rw, 0);
}

static int rw_issue(struct nw_req *req, struct nw_rw *rw,
		    unsigned int issue_flags)
{
	/* IOPOLL needs O_DIRECT on a polled block device: none of ours. */
	if (req->ring->flags & IORING_SETUP_IOPOLL)
		return -EOPNOTSUPP;
	if (!(issue_flags & NW_ISSUE_F_NONBLOCK))
		return rw_blocking(req, rw, rw->rw_flags);
	if (req->ring->punt_all)
		return NW_PUNT;
	return rw_nonblock(req, rw);
}

/*
 * RWF_NOWAIT on a regular file (rw_nowait_kind's RW_NOWAIT_REG*), where
 * io_uring decides before any transfer and the system call would not.
 * io-wq issues a file it cannot poll blocking, IOCB_NOWAIT cleared, so an
 * IOSQE_ASYNC request (on a worker here too) drops the flag; and
 * io_write's nonblocking issue takes no buffered write unless the
 * filesystem has FOP_BUFFER_WASYNC: -EAGAIN, final with RWF_NOWAIT,
 * before the offset's check and for any length (pwritev2 says 0 for no
 * bytes, else -EOPNOTSUPP or -EINVAL).
 */
static int rw_reg_nowait(struct nw_req *req, struct nw_rw *rw,
			 unsigned int issue_flags)
{
	if (req->ring->flags & IORING_SETUP_IOPOLL)
		return -EOPNOTSUPP;
	if (req->sqe_flags & IOSQE_ASYNC)
		return rw_blocking(req, rw, rw->rw_flags & ~RWF_NOWAIT);
	if (rw->nowait == RW_NOWAIT_REG_EAGAIN)
		return -EAGAIN;
	return rw_issue(req, rw, issue_flags);
}

/*
 * A read into a provided buffer (kernel io_read with buffer select): the
 * buffer is taken for the attempt and consumed by any result >= 0, EOF
 * included; a failed attempt gives it back. One that would block gives
 * back a ring entry (not consumed until data comes) but, as the kernel
 * (6.18) does for reads, keeps a provided buffer while it waits.
 */
static int rw_issue_select(struct nw_req *req, struct nw_rw *rw,
			   unsigned int issue_flags)
{
	int ret;

	if (!req->kbuf) {
		size_t len;
		void *buf = nw_kbuf_select(req, &len);

		if (!buf) /* after the file's lookup */
			return fcntl(req->fd, F_GETFD) < 0 ? -EBADF : -ENOBUFS;
		rw->fast_iov.iov_base = buf;
		rw->fast_iov.iov_len = len;
		rw->iov = &rw->fast_iov;
		rw->nr_iov = 1;
		rw->total = len;
		rw->done = 0;
	}
	ret = 0;
	if (unlikely(rw->rw_flags || rw->pi) && !rw->flags_ok)
		ret = nw_rw_init_file(req, rw);
	if (!ret)
		ret = unlikely(rw->nowait >= RW_NOWAIT_REG)
			      ? rw_reg_nowait(req, rw, issue_flags)
			      : rw_issue(req, rw, issue_flags);
	if (ret == NW_COMPLETE && req->res >= 0)
		req->cflags |= nw_kbuf_put(req);
	else if (ret == NW_COMPLETE || ret < 0 ||
		 (!rw->done && req->kbuf->ring))
		nw_kbuf_recycle(req);
	return ret;
}

int nw_rw_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_rw *rw = nw_req_cmd(req, struct nw_rw);

	/* The file is looked up before the buffer (a bad fd: -EBADF). */
	if (unlikely(rw->buf_err))
		return fcntl(req->fd, F_GETFD) < 0 ? -EBADF : rw->buf_err;
	/* __io_read selects the buffer before io_rw_init_file. */
	if (unlikely(req->sqe_flags & IOSQE_BUFFER_SELECT))
		return rw_issue_select(req, rw, issue_flags);
	if (unlikely(rw->rw_flags || rw->pi)) {
		int ret = rw->flags_ok ? 0 : nw_rw_init_file(req, rw);

		if (ret)
			return ret;
		/* Out of rw_issue: no test on the path without flags. */
		if (rw->nowait == RW_NOWAIT_LOOP)
			return rw_loop_nowait(req, rw);
		if (rw->nowait >= RW_NOWAIT_REG)
			return rw_reg_nowait(req, rw, issue_flags);
	}
	return rw_issue(req, rw, issue_flags);
}

/* ---- IORING_OP_READ_MULTISHOT (6.7, io_read_mshot_prep, io_read_mshot) ---- */

#define NW_RW_MSHOT_LOOPS 32 /* the kernel's MULTISHOT_MAX_RETRY */

/* Provided buffers only, no address or length: the buffer's is used. */
int nw_read_mshot_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_rw *rw = nw_req_cmd(req, struct nw_rw);
	int ret;

	if (!(req->sqe_flags & IOSQE_BUFFER_SELECT))
		return -EINVAL;
	ret = rw_prep(req, sqe, false, false);
	if (ret)
		return ret;
	if (READ_ONCE(sqe->addr) || READ_ONCE(sqe->len))
		return -EINVAL;
	rw->mshot_tried = false;
	/* One read per write of the program, as the kernel's task work. */
	req->sync_wake = true;
	return 0;
}

enum { RMSHOT_MORE, RMSHOT_WAIT, RMSHOT_DONE };

/* Is there something to read (or a hang-up) on the fd right now? */
static bool fd_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1;
}

/*
 * One read for a turn: preadv2 with RWF_NOWAIT, or where the file takes
 * no RWF_NOWAIT (a tty) a plain read once poll says it is readable, as
 * the kernel's io_file_supports_nowait asks poll for such a file.
 */
static ssize_t mshot_read_call(struct nw_req *req, struct nw_rw *rw)
{
	int kind = nw_fd_kind(req->ring, req->fd);
	ssize_t n = rw_call(req, rw, &kind, rw->rw_flags | RWF_NOWAIT);

	if (n != -EOPNOTSUPP)
		return n;
	if (!fd_readable(req->fd))
		return -EAGAIN;
	return rw_call(req, rw, &kind, rw->rw_flags);
}

/*
 * One multishot read, on the submit side: data posts a CQE with F_MORE
 * and its buffer (RMSHOT_MORE); nothing there gives the buffer back
 * (RMSHOT_WAIT); EOF (res 0, the buffer given back), an error, no buffer
 * or a full CQ end it (RMSHOT_DONE, req->res and req->cflags final).
 */
static int read_mshot_once(struct nw_req *req, struct nw_rw *rw)
{
	size_t len;
	char *buf = nw_kbuf_select(req, &len);
	ssize_t n;

	if (!buf) {
		/*
		 * -ENOBUFS, for an attempt the kernel would make: the first,
		 * or one where poll says there is something to read.
		 */
		if (rw->mshot_tried && !fd_readable(req->fd))
			return RMSHOT_WAIT;
		req->res = -ENOBUFS;
		return RMSHOT_DONE;
	}
	rw->mshot_tried = true;
	rw->fast_iov.iov_base = buf;
	rw->fast_iov.iov_len = len;
	rw->iov = &rw->fast_iov;
	rw->nr_iov = 1;
	rw->done = 0;
	rw->total = len;
	n = mshot_read_call(req, rw);
	if (n <= 0) {
		nw_kbuf_recycle(req);
		req->res = (int)n;
		return n == -EAGAIN ? RMSHOT_WAIT : RMSHOT_DONE;
	}
	req->res = (int)n;
	req->cflags = nw_kbuf_put(req);
	/* A CQE that would overflow ends it (the kernel's rule). */
	if (nw_cq_full(req->ring))
		return RMSHOT_DONE;
	req->cflags |= IORING_CQE_F_MORE;
	nw_cq_add(req->ring, req, (int)n);
	req->cflags = 0;
	return RMSHOT_MORE;
}

/* A file poll cannot wait on (io_file_can_poll): -EBADFD. */
static int mshot_pollable(struct nw_req *req)
{
	struct stat st;

	if (fstat(req->fd, &st) < 0)
		return -EBADF;
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) || S_ISDIR(st.st_mode))
		return -EBADFD;
	return 0;
}

/*
 * Arm: parked for good, the reads run as task work. From a worker
 * (IOSQE_ASYNC) it goes back to readiness first, as RECV's multishot.
 */
static int read_mshot_arm(struct nw_req *req)
{
	int ret = mshot_pollable(req);

	if (ret)
		return ret;
	if (req->sqe_flags & IOSQE_ASYNC) {
		req->sqe_flags &= ~IOSQE_ASYNC;
		return NW_RETRY;
	}
	ret = nw_poll_arm_mshot(req, NW_POLLIN);
	if (!ret)
		return NW_QUEUED;
	return ret == -EPERM ? -EBADFD : ret; /* epoll refuses it: no poll */
}

int nw_read_mshot_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_rw *rw = nw_req_cmd(req, struct nw_rw);

	if (req->ring->flags & IORING_SETUP_IOPOLL)
		return -EOPNOTSUPP;
	if (!(issue_flags & NW_ISSUE_F_MSHOT))
		return read_mshot_arm(req);
	for (int i = 0; i < NW_RW_MSHOT_LOOPS; i++) {
		int r = read_mshot_once(req, rw);

		if (r == RMSHOT_WAIT)
			return NW_QUEUED;
		if (r == RMSHOT_DONE)
			return req->res < 0 ? req->res : NW_COMPLETE;
	}
	nw_poll_mshot_requeue(req); /* more there: after the others */
	return NW_QUEUED;
}
