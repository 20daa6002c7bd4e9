/* SPDX-License-Identifier: MIT */
/*
 * OPENAT, OPENAT2, CLOSE, PIPE, FIXED_FD_INSTALL. Semantics: kernel
 * io_uring/openclose.c (6.18), reference/kernel-semantics.md 1.8 and 5.
 *
 * Opens: prep copies the path (and OPENAT2's struct open_how, with
 * copy_struct_from_user's rules). An open that creates or truncates
 * (O_CREAT, O_TRUNC, O_TMPFILE) goes to a worker, as the kernel forces it
 * async at prep. Any other open is tried inline first, as the kernel's
 * nonblocking attempt is: openat2 with RESOLVE_CACHED (path walk in the
 * dentry cache only) and O_NONBLOCK (a FIFO does not wait for its peer);
 * -EAGAIN sends it to a worker, unless the program itself asked for
 * RESOLVE_CACHED, which makes -EAGAIN final. O_NONBLOCK is cleared again
 * on the new file unless the program asked for it. The worker opens with
 * the program's own flags: OPENAT through openat(2), which masks unknown
 * flags exactly as the kernel's build_open_how does, OPENAT2 through
 * openat2(2). A failed open fails its link.
 *
 * Direct descriptors (file_index): the file is opened, then installed in
 * the fixed slot (rsrc.c nw_rsrc_install), as io_fixed_fd_install does
 * after the open: so a failed install (-ENXIO without a table, -EINVAL out
 * of range, -ENFILE with no free slot for IORING_FILE_INDEX_ALLOC) comes
 * after the file was created. The result is 0, or the slot allocated.
 * CLOSE with file_index closes the slot (-EBADF if empty).
 *
 * PIPE: pipe2(2), the two fds written back (-EFAULT closes them); into
 * fixed slots, the read end goes to file_index's slot and the write end
 * to the next (or both to allocated slots), O_CLOEXEC is -EINVAL there.
 * FIXED_FD_INSTALL dups a direct descriptor's file to the lowest free
 * number (close-on-exec unless IORING_FIXED_FD_NO_CLOEXEC), as the
 * kernel's receive_fd; without IOSQE_FIXED_FILE it is -EBADF at prep.
 *
 * CLOSE runs inline (the kernel punts files with a ->flush method, which
 * user space cannot see; close(2) does the flush either way). Closing a
 * ring's fd is -EBADF, as closing an io_uring fd is in the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include "openclose.h"
#include "fs.h"
#include "fdcache.h"
#include "poll.h"
#include "rsrc.h"

#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* The kernel's __O_TMPFILE (glibc's includes O_DIRECTORY). */
#define NW_O_TMPFILE_BIT (O_TMPFILE & ~O_DIRECTORY)
/* build_open_how: VALID_OPEN_FLAGS and what O_PATH keeps. */
#define NW_VALID_OPEN_FLAGS                                               \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND |   \
	 O_NONBLOCK | O_NDELAY | O_SYNC | O_DSYNC | O_ASYNC | O_DIRECT |  \
	 O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC | \
	 O_PATH | O_TMPFILE)
#define NW_O_PATH_FLAGS	      (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)
#define NW_OPEN_HOW_SIZE_VER0 24

struct nw_open {
	struct open_how how; /* OPENAT: built as build_open_how would */
	char *path;	     /* in req->async */
	int dfd;
	uint32_t file_slot;
	uint32_t sqe_flags, sqe_mode; /* OPENAT: as given, for openat(2) */
};
_Static_assert(sizeof(struct nw_open) <= NW_REQ_CMD_SIZE, "nw_open too big");

struct nw_close {
	int fd;
	uint32_t file_slot;
};
_Static_assert(sizeof(struct nw_close) <= NW_REQ_CMD_SIZE, "nw_close too big");

/* Set when openat2(2) said ENOSYS (a seccomp profile that predates it). */
static bool openat2_missing;

/* __io_openat_prep: what OPENAT and OPENAT2 check after the how. */
static int open_prep_common(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_open *op = nw_req_cmd(req, struct nw_open);
	int ret;

	if (READ_ONCE(sqe->buf_index))
		return -EINVAL;
	if (req->sqe_flags & IOSQE_FIXED_FILE)
		return -EBADF;
	op->dfd = READ_ONCE(sqe->fd);
	ret = nw_getnames(req, READ_ONCE(sqe->addr), false, &op->path, 0, NULL);
	if (ret)
		return ret;
	op->file_slot = READ_ONCE(sqe->file_index);
	if (op->file_slot && (op->how.flags & O_CLOEXEC))
		return -EINVAL;
	return 0;
}

int nw_openat_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_open *op = nw_req_cmd(req, struct nw_open);
	uint64_t flags;

	op->sqe_flags = READ_ONCE(sqe->open_flags);
	op->sqe_mode = READ_ONCE(sqe->len);
	/* build_open_how: unknown flags dropped, mode only for creation. */
	flags = op->sqe_flags & NW_VALID_OPEN_FLAGS;
	if (flags & O_PATH)
		flags &= NW_O_PATH_FLAGS;
	op->how.flags = flags;
	op->how.mode = (flags & (O_CREAT | NW_O_TMPFILE_BIT))
			       ? (uint16_t)op->sqe_mode & 07777
			       : 0;
	op->how.resolve = 0;
	return open_prep_common(req, sqe);
}

/*
 * copy_struct_from_user: a shorter struct is zero-extended, a longer one
 * must be zero past what we know (-E2BIG), a bad pointer is -EFAULT. The
 * tail is checked first, in chunks that stay within a page.
 */
static int copy_open_how(struct open_how *how, uint64_t uaddr, size_t usize)
{
	size_t ksize = sizeof(*how);

	memset(how, 0, ksize);
	if (usize > ksize) {
		uint64_t at = uaddr + ksize;
		size_t left = usize - ksize;
		unsigned char buf[512];

		while (left) {
			size_t chunk = 4096 - (at & 4095);

			if (chunk > left)
				chunk = left;
			if (chunk > sizeof(buf))
				chunk = sizeof(buf);
			if (at < uaddr ||
			    nw_copy_from_user(buf, (const void *)(uintptr_t)at,
					      chunk))
				return -EFAULT;
			for (size_t i = 0; i < chunk; i++)
				if (buf[i])
					return -E2BIG;
			at += chunk;
			left -= chunk;
		}
	}
	if (nw_copy_from_user(how, (const void *)(uintptr_t)uaddr,
			      usize < ksize ? usize : ksize))
		return -EFAULT;
	return 0;
}

int nw_openat2_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_open *op = nw_req_cmd(req, struct nw_open);
	uint32_t len = READ_ONCE(sqe->len);
	int ret;

	if (len < NW_OPEN_HOW_SIZE_VER0)
		return -EINVAL;
	ret = copy_open_how(&op->how, READ_ONCE(sqe->addr2), len);
	if (ret)
		return ret;
	return open_prep_common(req, sqe);
}

void nw_open_cleanup(struct nw_req *req)
{
	free(req->async);
}

/* io_openat_force_async: these opens would always say -EAGAIN inline. */
static bool open_force_async(const struct nw_open *op)
{
	return op->how.flags & (O_TRUNC | O_CREAT | NW_O_TMPFILE_BIT);
}

static int sys_openat2(int dfd, const char *path, const struct open_how *how)
{
	long fd = syscall(SYS_openat2, dfd, path, how, sizeof(*how));

	if (fd < 0 && errno == ENOSYS)
		WRITE_ONCE(openat2_missing, true);
	return fd < 0 ? -errno : (int)fd;
}

/* The worker's open: the program's flags, blocking. fd or -errno. */
static int open_blocking(struct nw_req *req, struct nw_open *op)
{
	int fd;

	if (req->opcode == IORING_OP_OPENAT ||
	    (READ_ONCE(openat2_missing) && !op->how.resolve)) {
		uint32_t flags = op->sqe_flags;
		uint32_t mode = op->sqe_mode;

		if (req->opcode == IORING_OP_OPENAT2) {
			flags = (uint32_t)op->how.flags;
			mode = (uint32_t)op->how.mode;
		}
		fd = (int)syscall(SYS_openat, op->dfd, op->path, flags, mode);
		return fd < 0 ? -errno : fd;
	}
	return sys_openat2(op->dfd, op->path, &op->how);
}

/*
 * The inline attempt: the dentry cache only, and O_NONBLOCK. Returns
 * false when a worker must open instead; else *fd is the fd or -errno.
 */
static bool open_nonblock(struct nw_open *op, int *fd)
{
	struct open_how how = op->how;
	bool add_nonblock = !(how.flags & (O_PATH | O_NONBLOCK));
	bool user_cached = how.resolve & RESOLVE_CACHED;
	int fl;

	how.resolve |= RESOLVE_CACHED;
	if (add_nonblock)
		how.flags |= O_NONBLOCK;
	*fd = sys_openat2(op->dfd, op->path, &how);
	if (*fd == -EAGAIN)
		return user_cached;
	/*
	 * -EINVAL may be ours (a kernel before RESOLVE_CACHED, or OPENAT
	 * flags openat2 refuses where openat ignores them): the worker
	 * gives the authoritative answer. -ENOSYS: no openat2 here.
	 */
	if (*fd == -EINVAL || *fd == -ENOSYS)
		return false;
	if (*fd >= 0 && add_nonblock) {
		fl = fcntl(*fd, F_GETFL);
		if (fl >= 0)
			fcntl(*fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	return true;
}

int nw_openat_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_open *op = nw_req_cmd(req, struct nw_open);
	int fd;

	if (issue_flags & NW_ISSUE_F_NONBLOCK) {
		/*
		 * Not skipped under punt_all (NOWAIT_PUNT): the inline try
		 * decides results (a FIFO opens without waiting for a peer).
		 */
		if (open_force_async(op) || READ_ONCE(openat2_missing))
			return NW_PUNT;
		if (!open_nonblock(op, &fd))
			return NW_PUNT;
	} else {
		fd = open_blocking(req, op);
	}
	if (fd < 0)
		return fd; /* the kernel fails the link */
	nw_fd_forget(req->ring, fd);
	if (op->file_slot) {
		fd = nw_rsrc_install(req->ring, fd, op->file_slot, req);
		if (fd < 0)
			return fd;
	}
	req->res = fd;
	return NW_COMPLETE;
}

int nw_close_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_close *cl = nw_req_cmd(req, struct nw_close);

	if (READ_ONCE(sqe->off) || READ_ONCE(sqe->addr) ||
	    READ_ONCE(sqe->len) || READ_ONCE(sqe->rw_flags) ||
	    READ_ONCE(sqe->buf_index))
		return -EINVAL;
	if (req->sqe_flags & IOSQE_FIXED_FILE)
		return -EBADF;
	cl->fd = READ_ONCE(sqe->fd);
	cl->file_slot = READ_ONCE(sqe->file_index);
	if (cl->file_slot && cl->fd)
		return -EINVAL;
	return 0;
}

int nw_close_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_close *cl = nw_req_cmd(req, struct nw_close);
	struct nw_ring *ring;
	int ret;

	if (cl->file_slot) {
		ret = nw_rsrc_remove(req->ring, cl->file_slot - 1, req);
		if (ret < 0)
			return ret;
		req->res = 0;
		return NW_COMPLETE;
	}
	/* Not an fd (-EBADF), or a ring: io_is_uring_fops says -EBADF. */
	ret = nw_ring_lookup(cl->fd, &ring);
	if (ret != -EOPNOTSUPP)
		return -EBADF;
	/* The fd is gone even when close reports an error (EIO, EINTR). */
	nw_poll_fd_closing(cl->fd); /* what is parked on it keeps the file */
	ret = close(cl->fd) < 0 ? -errno : 0;
	if (ret < 0)
		return ret;
	req->res = 0;
	return NW_COMPLETE;
}

/* ---- PIPE ---- */

struct nw_pipe {
	uint64_t fds; /* the program's int[2] */
	int flags;
	uint32_t file_slot; /* slot + 1, IORING_FILE_INDEX_ALLOC, or 0 */
};

#ifndef O_NOTIFICATION_PIPE
#define O_NOTIFICATION_PIPE O_EXCL
#endif

int nw_pipe_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_pipe *p = nw_req_cmd(req, struct nw_pipe);

	if (READ_ONCE(sqe->fd) || READ_ONCE(sqe->off) || READ_ONCE(sqe->addr3))
		return -EINVAL;
	p->fds = READ_ONCE(sqe->addr);
	p->flags = (int)READ_ONCE(sqe->rw_flags); /* pipe_flags */
	if (p->flags &
	    ~(O_CLOEXEC | O_NONBLOCK | O_DIRECT | O_NOTIFICATION_PIPE))
		return -EINVAL;
	p->file_slot = READ_ONCE(sqe->file_index);
	return 0;
}

/*
 * io_pipe_fixed: the read end into the slot (or an allocated one), the
 * write end into the next (or another allocated one); the slots' indexes
 * are written back. Either failing undoes the other.
 */
static int pipe_fixed(struct nw_req *req, struct nw_pipe *p, int fds[2])
{
	bool alloc = p->file_slot == IORING_FILE_INDEX_ALLOC;
	int out[2] = {-1, -1}, ret;

	ret = nw_rsrc_install(req->ring, fds[0], p->file_slot, req);
	if (ret < 0) {
		close(fds[1]);
		return ret;
	}
	out[0] = alloc ? ret : (int)p->file_slot - 1;
	ret = nw_rsrc_install(req->ring, fds[1],
			      alloc ? p->file_slot : p->file_slot + 1, req);
	if (ret >= 0) {
		out[1] = alloc ? ret : (int)p->file_slot;
		if (!nw_copy_to_user((void *)(uintptr_t)p->fds, out,
				     sizeof(out)))
			return 0;
		ret = -EFAULT;
	}
	nw_rsrc_remove(req->ring, (unsigned int)out[0], req);
	if (out[1] >= 0)
		nw_rsrc_remove(req->ring, (unsigned int)out[1], req);
	return ret;
}

int nw_pipe_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_pipe *p = nw_req_cmd(req, struct nw_pipe);
	int fds[2], ret;

	(void)issue_flags; /* pipe2(2) does not block */
	if (p->file_slot && (p->flags & O_CLOEXEC))
		return -EINVAL;
	if (pipe2(fds, p->flags))
		return -errno;
	if (p->file_slot) {
		ret = pipe_fixed(req, p, fds);
		if (ret < 0)
			return ret;
	} else if (nw_copy_to_user((void *)(uintptr_t)p->fds, fds,
				   sizeof(fds))) {
		close(fds[0]);
		close(fds[1]);
		return -EFAULT;
	}
	req->res = 0;
	return NW_COMPLETE;
}

/* ---- FIXED_FD_INSTALL ---- */

struct nw_fd_install {
	int cmd; /* F_DUPFD_CLOEXEC, or F_DUPFD with IORING_FIXED_FD_NO_CLOEXEC */
};

int nw_fd_install_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_fd_install *fi = nw_req_cmd(req, struct nw_fd_install);
	unsigned int flags;

	if (READ_ONCE(sqe->off) || READ_ONCE(sqe->addr) ||
	    READ_ONCE(sqe->len) || READ_ONCE(sqe->buf_index) ||
	    READ_ONCE(sqe->splice_fd_in) || READ_ONCE(sqe->addr3))
		return -EINVAL;
	/* Only a direct descriptor is installed. */
	if (!(req->sqe_flags & IOSQE_FIXED_FILE))
		return -EBADF;
	flags = READ_ONCE(sqe->rw_flags); /* install_fd_flags */
	if (flags & ~IORING_FIXED_FD_NO_CLOEXEC)
		return -EINVAL;
	/* The task's own credentials install fds: never a personality's. */
	if (req->flags & NW_REQ_F_CREDS)
		return -EPERM;
	fi->cmd = (flags & IORING_FIXED_FD_NO_CLOEXEC) ? F_DUPFD
						       : F_DUPFD_CLOEXEC;
	return 0;
}

/* receive_fd: the slot's file at the lowest free number of the process. */
int nw_fd_install_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_fd_install *fi = nw_req_cmd(req, struct nw_fd_install);
	int fd;

	(void)issue_flags;
	fd = fcntl(req->fd, fi->cmd, 0);
	if (fd < 0)
		return -errno;
	req->res = fd;
	return NW_COMPLETE;
}
