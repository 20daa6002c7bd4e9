/* SPDX-License-Identifier: MIT */
/*
 * FSYNC, SYNC_FILE_RANGE, FALLOCATE, FADVISE, MADVISE, FTRUNCATE.
 * Semantics: kernel io_uring/sync.c, advise.c and truncate.c (6.18),
 * reference/kernel-semantics.md 1.8.
 *
 * fsync, sync_file_range, fallocate, ftruncate and madvise never run
 * nonblocking in
 * the kernel (-EAGAIN under IO_URING_F_NONBLOCK, or forced async at prep):
 * they go straight to a worker (opdef always_punt). fadvise runs inline
 * for the advice values that only set a flag on the file (NORMAL, RANDOM,
 * SEQUENTIAL) and in a worker for the others (WILLNEED reads ahead,
 * DONTNEED writes back), as the kernel's io_fadvise_force_async decides.
 *
 * Link failure follows the kernel op by op: FSYNC, SYNC_FILE_RANGE,
 * FALLOCATE, FTRUNCATE and MADVISE only set the result (a later linked request still
 * runs after their error), FADVISE fails its link on any error. For the
 * ops that take a file, a bad fd (the kernel's failed file lookup, which
 * fails the link) is told apart from an -EBADF of the operation itself
 * (fallocate on a read-only fd) by looking at the fd.
 *
 * FSYNC with a range (sqe->off, sqe->len) syncs the whole file: there is
 * no ranged fsync system call, and the whole file is a superset of what
 * the program asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include "sync.h"

struct nw_sync {
	uint64_t off;
	uint64_t len;
	unsigned int flags; /* fsync/sync_file_range flags, fallocate mode */
	unsigned int advice;
	uint64_t addr; /* MADVISE */
};
_Static_assert(sizeof(struct nw_sync) <= NW_REQ_CMD_SIZE, "nw_sync too big");

/* Does fd name a file the kernel's fget would return (not O_PATH)? */
static bool fd_is_usable(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && !(fl & O_PATH);
}

/*
 * The result of a system call on req->fd: an error of the operation only
 * sets the result; a bad fd fails the request (and its link).
 */
static int sync_done(struct nw_req *req, int ret)
{
	if (ret < 0) {
		ret = -errno;
		if (ret == -EBADF && !fd_is_usable(req->fd))
			return -EBADF;
	}
	req->res = ret;
	return NW_COMPLETE;
}

/* A ring's fd: the kernel's ring file has no fsync, fallocate... */
static void sync_file(struct nw_req *req)
{
	if (!(req->sqe_flags & IOSQE_FIXED_FILE))
		req->fd = nw_ring_fd_as_file(req->fd);
}

int nw_fsync_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sync *sync = nw_req_cmd(req, struct nw_sync);

	sync_file(req);
	if (READ_ONCE(sqe->addr) || READ_ONCE(sqe->buf_index) ||
	    READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	sync->flags = READ_ONCE(sqe->fsync_flags);
	if (sync->flags & ~IORING_FSYNC_DATASYNC)
		return -EINVAL;
	sync->off = READ_ONCE(sqe->off);
	/* "io_uring/sync: validate passed in offset" (2026, in 6.18.y). */
	if ((int64_t)sync->off < 0)
		return -EINVAL;
	sync->len = READ_ONCE(sqe->len);
	return 0;
}

int nw_fsync_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_sync *sync = nw_req_cmd(req, struct nw_sync);

	if (sync->flags & IORING_FSYNC_DATASYNC)
		return sync_done(req, fdatasync(req->fd));
	return sync_done(req, fsync(req->fd));
}

int nw_sfr_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sync *sync = nw_req_cmd(req, struct nw_sync);

	sync_file(req);
	if (READ_ONCE(sqe->addr) || READ_ONCE(sqe->buf_index) ||
	    READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	sync->off = READ_ONCE(sqe->off);
	sync->len = READ_ONCE(sqe->len);
	sync->flags = READ_ONCE(sqe->sync_range_flags);
	return 0;
}

int nw_sfr_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_sync *sync = nw_req_cmd(req, struct nw_sync);

	return sync_done(req, sync_file_range(req->fd, (off_t)sync->off,
					      (off_t)sync->len, sync->flags));
}

int nw_fallocate_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sync *sync = nw_req_cmd(req, struct nw_sync);

	sync_file(req);
	if (READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->rw_flags) ||
	    READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	sync->off = READ_ONCE(sqe->off);
	sync->len = READ_ONCE(sqe->addr);
	sync->flags = READ_ONCE(sqe->len); /* the mode */
	return 0;
}

int nw_fallocate_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_sync *sync = nw_req_cmd(req, struct nw_sync);

	return sync_done(req, fallocate(req->fd, (int)sync->flags,
					(off_t)sync->off, (off_t)sync->len));
}

/* FTRUNCATE: the length in sqe->off, every other field zero. */
int nw_ftruncate_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sync *sync = nw_req_cmd(req, struct nw_sync);

	sync_file(req);
	if (READ_ONCE(sqe->rw_flags) || READ_ONCE(sqe->addr) ||
	    READ_ONCE(sqe->len) || READ_ONCE(sqe->buf_index) ||
	    READ_ONCE(sqe->splice_fd_in) || READ_ONCE(sqe->addr3))
		return -EINVAL;
	sync->len = READ_ONCE(sqe->off);
	return 0;
}

int nw_ftruncate_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_sync *sync = nw_req_cmd(req, struct nw_sync);

	(void)issue_flags; /* always_punt: on a worker */
	return sync_done(req, ftruncate(req->fd, (off_t)sync->len));
}

int nw_fadvise_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sync *sync = nw_req_cmd(req, struct nw_sync);

	sync_file(req);
	if (READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	sync->off = READ_ONCE(sqe->off);
	/* A 64-bit length in addr (6.7+), else the 32-bit one in len. */
	sync->len = READ_ONCE(sqe->addr);
	if (!sync->len)
		sync->len = READ_ONCE(sqe->len);
	sync->advice = READ_ONCE(sqe->fadvise_advice);
	return 0;
}

/* io_fadvise_force_async: the advice values that may do I/O. */
static bool fadvise_blocks(unsigned int advice)
{
	switch (advice) {
	case POSIX_FADV_NORMAL:
	case POSIX_FADV_RANDOM:
	case POSIX_FADV_SEQUENTIAL:
		return false;
	default:
		return true;
	}
}

int nw_fadvise_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_sync *sync = nw_req_cmd(req, struct nw_sync);
	int ret;

	if ((issue_flags & NW_ISSUE_F_NONBLOCK) && fadvise_blocks(sync->advice))
		return NW_PUNT;
	/* posix_fadvise returns the error number itself. */
	ret = posix_fadvise(req->fd, (off_t)sync->off, (off_t)sync->len,
			    (int)sync->advice);
	if (ret)
		return -ret; /* the kernel fails the link here */
	req->res = 0;
	return NW_COMPLETE;
}

int nw_madvise_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_sync *sync = nw_req_cmd(req, struct nw_sync);

	if (READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	sync->addr = READ_ONCE(sqe->addr);
	/* A 64-bit length in off (6.7+), else the 32-bit one in len. */
	sync->len = READ_ONCE(sqe->off);
	if (!sync->len)
		sync->len = READ_ONCE(sqe->len);
	sync->advice = READ_ONCE(sqe->fadvise_advice);
	return 0;
}

int nw_madvise_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_sync *sync = nw_req_cmd(req, struct nw_sync);

	/* The same address space as the kernel's do_madvise(current->mm). */
	req->res = madvise((void *)(uintptr_t)sync->addr, (size_t)sync->len,
			   (int)sync->advice) < 0
			   ? -errno
			   : 0;
	return NW_COMPLETE;
}
