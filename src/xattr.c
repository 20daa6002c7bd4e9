/* SPDX-License-Identifier: MIT */
/*
 * FSETXATTR, SETXATTR, FGETXATTR, GETXATTR. Semantics: kernel
 * io_uring/xattr.c and fs/xattr.c setxattr_copy / import_xattr_name
 * (6.18), io_uring_prep_getxattr(3), getxattr(2), setxattr(2).
 *
 * Prep does what the kernel's prep does, in its order: a fixed file is
 * -EBADF for the path forms (the f-forms take one, looked up at issue),
 * unknown flags -EINVAL, the name is copied (empty or longer than
 * XATTR_NAME_MAX: -ERANGE), a set's value is copied (over XATTR_SIZE_MAX:
 * -E2BIG) and the path of the path forms is copied (the kernel's getname).
 * The copies live in one allocation in req->async (SUBMIT_STABLE). These
 * ops block on filesystems and the kernel forces them async, so they run
 * in a worker (opdef always_punt), on the system calls, whose results are
 * the kernel's: getxattr(2) follows symlinks, as LOOKUP_FOLLOW does. An
 * error of the call only sets the result (the kernel's io_xattr_finish has
 * no req_set_fail); a bad fd of the f-forms (a failed file lookup) also
 * fails the link.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <linux/limits.h>
#include "xattr.h"
#include "fs.h"

#define NW_XATTR_NAME_BUF (XATTR_NAME_MAX + 1)

struct nw_xattr {
	char *name;    /* in req->async */
	char *path;    /* in req->async; NULL for the fd forms */
	void *value;   /* set: the copy in req->async; get: the program's */
	uint32_t size; /* sqe->len */
	unsigned int flags; /* XATTR_CREATE / XATTR_REPLACE */
	bool set;
};
_Static_assert(sizeof(struct nw_xattr) <= NW_REQ_CMD_SIZE, "nw_xattr too big");

/*
 * import_xattr_name: strncpy_from_user of at most XATTR_NAME_MAX + 1
 * bytes (fs.c's fault-safe chunked copy). 0, -EFAULT, or -ERANGE for ""
 * and a name with no NUL in the buffer.
 */
static int name_copy(char *dst, uint64_t uaddr)
{
	int len = nw_getname_max(dst, uaddr, NW_XATTR_NAME_BUF);

	if (len == -EFAULT)
		return len;
	return len > 0 ? 0 : -ERANGE;
}

/*
 * The copies of one request, in one allocation: name, then the path (if
 * any), then a set's value.
 */
static int xattr_alloc(struct nw_req *req, struct nw_xattr *x, bool path)
{
	size_t size = NW_XATTR_NAME_BUF + (path ? PATH_MAX : 0);
	char *buf;

	if (x->set)
		size += x->size;
	buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	req->async = buf;
	x->name = buf;
	x->path = path ? buf + NW_XATTR_NAME_BUF : NULL;
	if (x->set)
		x->value = buf + NW_XATTR_NAME_BUF + (path ? PATH_MAX : 0);
	return 0;
}

/* __io_getxattr_prep and __io_setxattr_prep, then the path if any. */
static int xattr_prep(struct nw_req *req, const struct io_uring_sqe *sqe,
		      bool set, bool path)
{
	struct nw_xattr *x = nw_req_cmd(req, struct nw_xattr);
	uint64_t uname = READ_ONCE(sqe->addr);
	int ret;

	/* A path has no file: a fixed one is the path forms' -EBADF. */
	if (path && (req->sqe_flags & IOSQE_FIXED_FILE))
		return -EBADF;
	x->set = set;
	x->value = (void *)(uintptr_t)READ_ONCE(sqe->addr2);
	x->size = READ_ONCE(sqe->len);
	x->flags = READ_ONCE(sqe->xattr_flags);
	if (set ? x->flags & ~(unsigned int)(XATTR_CREATE | XATTR_REPLACE)
		: x->flags)
		return -EINVAL;
	if (set && x->size > XATTR_SIZE_MAX) {
		/* Only after the name, which may say -ERANGE first. */
		char name[NW_XATTR_NAME_BUF];

		ret = name_copy(name, uname);
		return ret ? ret : -E2BIG;
	}
	ret = xattr_alloc(req, x, path);
	if (ret)
		return ret;
	ret = name_copy(x->name, uname);
	if (!ret && set && x->size &&
	    nw_copy_from_user(x->value,
			      (const void *)(uintptr_t)READ_ONCE(sqe->addr2),
			      x->size))
		ret = -EFAULT;
	if (!ret && path) {
		ret = nw_getname(x->path, READ_ONCE(sqe->addr3), false);
		ret = ret < 0 ? ret : 0;
	}
	return ret;
}

/* A ring's fd: the kernel's ring file is an anon inode (no xattrs). */
static void xattr_file(struct nw_req *req)
{
	if (!(req->sqe_flags & IOSQE_FIXED_FILE))
		req->fd = nw_ring_fd_as_file(req->fd);
}

int nw_fgetxattr_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	xattr_file(req);
	return xattr_prep(req, sqe, false, false);
}

int nw_getxattr_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	return xattr_prep(req, sqe, false, true);
}

int nw_fsetxattr_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	xattr_file(req);
	return xattr_prep(req, sqe, true, false);
}

int nw_setxattr_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	return xattr_prep(req, sqe, true, true);
}

void nw_xattr_cleanup(struct nw_req *req)
{
	free(req->async);
}

int nw_xattr_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_xattr *x = nw_req_cmd(req, struct nw_xattr);
	ssize_t r;

	if (x->path && x->set)
		r = setxattr(x->path, x->name, x->value, x->size,
			     (int)x->flags);
	else if (x->path)
		r = getxattr(x->path, x->name, x->value, x->size);
	else if (!nw_fd_usable(req->fd))
		return -EBADF; /* the file lookup failed: fails the link */
	else if (x->set)
		r = fsetxattr(req->fd, x->name, x->value, x->size,
			      (int)x->flags);
	else
		r = fgetxattr(req->fd, x->name, x->value, x->size);
	req->res = r < 0 ? -errno : (int)r;
	return NW_COMPLETE;
}
