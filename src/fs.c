/* SPDX-License-Identifier: MIT */
/*
 * STATX, RENAMEAT, UNLINKAT, MKDIRAT, SYMLINKAT, LINKAT. Semantics: kernel
 * io_uring/fs.c and statx.c (6.18), reference/kernel-semantics.md 1.8.
 *
 * Prep rejects what the kernel's prep rejects and copies the path names
 * (the kernel's getname, IORING_FEAT_SUBMIT_STABLE) into one allocation
 * in req->async, freed by nw_fs_cleanup. These ops are blocking-only in
 * the kernel (REQ_F_FORCE_ASYNC at prep): their opdef rows say
 * always_punt, so the core sends them straight to a worker, which runs the
 * system call.
 *
 * A failure of the system call completes the request without failing its
 * link: the kernel only sets the result here (no req_set_fail), so a
 * linked request after an unlinkat that says -ENOENT still runs. Errors
 * found at prep do fail the link, as every init failure does.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "fs.h"

/*
 * Path reads go in chunks that never cross a 4 KiB boundary (the smallest
 * page size), so each chunk is either readable or a fault, like the
 * kernel's strncpy_from_user. The first chunk is short: most paths are.
 */
#define NW_PATH_PAGE  4096U
#define NW_PATH_FIRST 256U

int nw_getname_max(char *dst, uint64_t uaddr, size_t max)
{
	size_t n = 0, want = NW_PATH_FIRST;

	while (n < max) {
		uint64_t at = uaddr + n;
		size_t chunk = NW_PATH_PAGE - (at & (NW_PATH_PAGE - 1));
		const char *nul;

		if (chunk > max - n)
			chunk = max - n;
		if (chunk > want)
			chunk = want;
		if (at < uaddr ||
		    nw_copy_from_user(dst + n, (const void *)(uintptr_t)at,
				      chunk))
			return -EFAULT;
		nul = memchr(dst + n, 0, chunk);
		if (nul)
			return (int)(nul - dst);
		n += chunk;
		want = max;
	}
	return -ENAMETOOLONG;
}

int nw_getname(char *dst, uint64_t uaddr, bool empty_ok)
{
	int len = nw_getname_max(dst, uaddr, PATH_MAX);

	return len == 0 && !empty_ok ? -ENOENT : len;
}

bool nw_fd_usable(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && !(fl & O_PATH);
}

/*
 * Copy one path (p2 == NULL) or two into one allocation owned by
 * req->async: the first path's error wins, as in the kernel's preps.
 */
int nw_getnames(struct nw_req *req, uint64_t u1, bool empty1, char **p1,
		uint64_t u2, char **p2)
{
	size_t size = p2 ? 2 * PATH_MAX : PATH_MAX;
	char *buf = malloc(size), *shrunk;
	int len1, len2 = -1;

	if (!buf)
		return -ENOMEM;
	len1 = nw_getname(buf, u1, empty1);
	if (len1 < 0) {
		free(buf);
		return len1;
	}
	if (p2) {
		len2 = nw_getname(buf + len1 + 1, u2, false);
		if (len2 < 0) {
			free(buf);
			return len2;
		}
	}
	shrunk = realloc(buf, (size_t)len1 + 1 + (size_t)(len2 + 1));
	if (shrunk)
		buf = shrunk;
	req->async = buf;
	*p1 = buf;
	if (p2)
		*p2 = buf + len1 + 1;
	return 0;
}

void nw_fs_cleanup(struct nw_req *req)
{
	free(req->async);
}

/* What every op of this file carries: dfds, paths, flags. */
struct nw_fs {
	char *path1;	/* in req->async */
	char *path2;	/* in req->async, or NULL */
	int dfd1, dfd2; /* old/new dfd, or the one dfd */
	unsigned int flags;
	unsigned int mask; /* STATX: sqe->len; MKDIRAT: the mode */
	uint64_t buf;	   /* STATX: the program's struct statx */
};
_Static_assert(sizeof(struct nw_fs) <= NW_REQ_CMD_SIZE, "nw_fs too big");

/* The system call's result: 0 or -errno, without failing the link. */
static int fs_done(struct nw_req *req, int ret)
{
	req->res = ret < 0 ? -errno : ret;
	return NW_COMPLETE;
}

int nw_statx_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_fs *fs = nw_req_cmd(req, struct nw_fs);

	if (READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	if (req->sqe_flags & IOSQE_FIXED_FILE)
		return -EBADF;
	fs->dfd1 = READ_ONCE(sqe->fd);
	fs->mask = READ_ONCE(sqe->len);
	fs->buf = READ_ONCE(sqe->addr2);
	fs->flags = READ_ONCE(sqe->statx_flags);
	fs->path2 = NULL;
	/* getname_uflags: AT_EMPTY_PATH allows "", never a NULL pointer. */
	return nw_getnames(req, READ_ONCE(sqe->addr), fs->flags & AT_EMPTY_PATH,
			   &fs->path1, 0, NULL);
}

int nw_statx_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_fs *fs = nw_req_cmd(req, struct nw_fs);
	struct statx stx;

	/*
	 * vfs_statx refuses flags it does not know. The system call skips
	 * that check for "" with AT_EMPTY_PATH (its fd shortcut); io_uring's
	 * do_statx always walks the name, so the check is made here.
	 */
	if (fs->flags & ~(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT |
			  AT_EMPTY_PATH | AT_STATX_SYNC_TYPE)) {
		req->res = -EINVAL;
		return NW_COMPLETE;
	}
	if (statx(fs->dfd1, fs->path1, (int)fs->flags, fs->mask, &stx) < 0)
		return fs_done(req, -1);
	/* do_statx's cp_statx: the result reaches the program or -EFAULT. */
	req->res =
		nw_copy_to_user((void *)(uintptr_t)fs->buf, &stx, sizeof(stx));
	return NW_COMPLETE;
}

int nw_renameat_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_fs *fs = nw_req_cmd(req, struct nw_fs);

	if (READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	if (req->sqe_flags & IOSQE_FIXED_FILE)
		return -EBADF;
	fs->dfd1 = READ_ONCE(sqe->fd);
	fs->dfd2 = (int)READ_ONCE(sqe->len);
	fs->flags = READ_ONCE(sqe->rename_flags);
	return nw_getnames(req, READ_ONCE(sqe->addr), false, &fs->path1,
			   READ_ONCE(sqe->addr2), &fs->path2);
}

int nw_renameat_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_fs *fs = nw_req_cmd(req, struct nw_fs);

	return fs_done(req, renameat2(fs->dfd1, fs->path1, fs->dfd2, fs->path2,
				      fs->flags));
}

int nw_unlinkat_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_fs *fs = nw_req_cmd(req, struct nw_fs);

	if (READ_ONCE(sqe->off) || READ_ONCE(sqe->len) ||
	    READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	if (req->sqe_flags & IOSQE_FIXED_FILE)
		return -EBADF;
	fs->dfd1 = READ_ONCE(sqe->fd);
	fs->flags = READ_ONCE(sqe->unlink_flags);
	if (fs->flags & ~(unsigned int)AT_REMOVEDIR)
		return -EINVAL;
	fs->path2 = NULL;
	return nw_getnames(req, READ_ONCE(sqe->addr), false, &fs->path1, 0,
			   NULL);
}

int nw_unlinkat_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_fs *fs = nw_req_cmd(req, struct nw_fs);

	return fs_done(req, unlinkat(fs->dfd1, fs->path1, (int)fs->flags));
}

int nw_mkdirat_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_fs *fs = nw_req_cmd(req, struct nw_fs);

	if (READ_ONCE(sqe->off) || READ_ONCE(sqe->rw_flags) ||
	    READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	if (req->sqe_flags & IOSQE_FIXED_FILE)
		return -EBADF;
	fs->dfd1 = READ_ONCE(sqe->fd);
	fs->mask = (uint16_t)READ_ONCE(sqe->len); /* umode_t */
	fs->path2 = NULL;
	return nw_getnames(req, READ_ONCE(sqe->addr), false, &fs->path1, 0,
			   NULL);
}

int nw_mkdirat_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_fs *fs = nw_req_cmd(req, struct nw_fs);

	return fs_done(req, mkdirat(fs->dfd1, fs->path1, (mode_t)fs->mask));
}

int nw_symlinkat_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_fs *fs = nw_req_cmd(req, struct nw_fs);

	if (READ_ONCE(sqe->len) || READ_ONCE(sqe->rw_flags) ||
	    READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	if (req->sqe_flags & IOSQE_FIXED_FILE)
		return -EBADF;
	fs->dfd2 = READ_ONCE(sqe->fd);
	/* path1: the link's target, path2: the new link's name. */
	return nw_getnames(req, READ_ONCE(sqe->addr), false, &fs->path1,
			   READ_ONCE(sqe->addr2), &fs->path2);
}

int nw_symlinkat_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_fs *fs = nw_req_cmd(req, struct nw_fs);

	return fs_done(req, symlinkat(fs->path1, fs->dfd2, fs->path2));
}

int nw_linkat_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_fs *fs = nw_req_cmd(req, struct nw_fs);

	if (READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	if (req->sqe_flags & IOSQE_FIXED_FILE)
		return -EBADF;
	fs->dfd1 = READ_ONCE(sqe->fd);
	fs->dfd2 = (int)READ_ONCE(sqe->len);
	fs->flags = READ_ONCE(sqe->hardlink_flags);
	/* getname_uflags for the old path: AT_EMPTY_PATH allows "". */
	return nw_getnames(req, READ_ONCE(sqe->addr), fs->flags & AT_EMPTY_PATH,
			   &fs->path1, READ_ONCE(sqe->addr2), &fs->path2);
}

int nw_linkat_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_fs *fs = nw_req_cmd(req, struct nw_fs);

	return fs_done(req, linkat(fs->dfd1, fs->path1, fs->dfd2, fs->path2,
				   (int)fs->flags));
}
