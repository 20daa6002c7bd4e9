/* SPDX-License-Identifier: MIT */
/*
 * FSETXATTR, SETXATTR, FGETXATTR, GETXATTR on a file in /tmp: values set
 * and read back, sizes (0 asks the length, too small -ERANGE), XATTR_CREATE
 * and XATTR_REPLACE, what prep rejects (flags, names empty or too long,
 * values over XATTR_SIZE_MAX, bad pointers, fixed files) and which errors
 * fail a link. Skips when the filesystem has no user xattrs.
 * Semantics: io_uring/xattr.c, fs/xattr.c.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "helpers.h"

static char path[64], link_path[80];
static struct t_ring ring;
static void *bad; /* an inaccessible page */

static struct io_uring_sqe *xattr_sqe(int op, int fd, const char *p,
				      const char *name, const void *value,
				      unsigned int len, unsigned int flags)
{
	struct io_uring_sqe *sqe = t_get_sqe(&ring);

	T_ASSERT(sqe != NULL);
	sqe->opcode = (uint8_t)op;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)name;
	sqe->addr2 = (uintptr_t)value;
	sqe->addr3 = (uintptr_t)p;
	sqe->len = len;
	sqe->xattr_flags = flags;
	sqe->user_data = 1;
	return sqe;
}

static int run(void)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_submit_and_wait(&ring, 1), 1);
	T_ASSERT_EQ(t_wait_cqe(&ring, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 1);
	return cqe.res;
}

/* Run sqe linked to a NOP: sqe's result is res, the NOP's nop_res. */
static void run_linked(struct io_uring_sqe *sqe, int res, int nop_res)
{
	sqe->flags |= IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&ring), 2);
	T_ASSERT_EQ(t_submit_and_wait(&ring, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&ring, 1, res), 0);
	T_ASSERT_EQ(t_expect_cqe(&ring, 2, nop_res), 0);
}

static int set(const char *p, const char *name, const void *v, unsigned int n,
	       unsigned int flags)
{
	xattr_sqe(IORING_OP_SETXATTR, 0, p, name, v, n, flags);
	return run();
}

static int get(const char *p, const char *name, void *v, unsigned int n)
{
	xattr_sqe(IORING_OP_GETXATTR, 0, p, name, v, n, 0);
	return run();
}

static int fset(int fd, const char *name, const void *v, unsigned int n,
		unsigned int flags)
{
	xattr_sqe(IORING_OP_FSETXATTR, fd, NULL, name, v, n, flags);
	return run();
}

static int fget(int fd, const char *name, void *v, unsigned int n)
{
	xattr_sqe(IORING_OP_FGETXATTR, fd, NULL, name, v, n, 0);
	return run();
}

static void test_path_ops(void)
{
	char buf[64];

	T_ASSERT_EQ(set(path, "user.one", "value1", 6, 0), 0);
	memset(buf, 0, sizeof(buf));
	T_ASSERT_EQ(get(path, "user.one", buf, sizeof(buf)), 6);
	T_ASSERT_EQ(memcmp(buf, "value1", 6), 0);
	/* Size 0 asks the length; too small a buffer: -ERANGE. */
	T_ASSERT_EQ(get(path, "user.one", NULL, 0), 6);
	T_ASSERT_EQ(get(path, "user.one", buf, 3), -ERANGE);
	/* Through a symlink: followed. */
	T_ASSERT_EQ(get(link_path, "user.one", buf, sizeof(buf)), 6);
	/* CREATE on an existing one, REPLACE on a missing one. */
	T_ASSERT_EQ(set(path, "user.one", "x", 1, XATTR_CREATE), -EEXIST);
	T_ASSERT_EQ(set(path, "user.two", "x", 1, XATTR_REPLACE), -ENODATA);
	T_ASSERT_EQ(set(path, "user.one", "v2", 2, XATTR_REPLACE), 0);
	T_ASSERT_EQ(get(path, "user.one", buf, sizeof(buf)), 2);
	T_ASSERT_EQ(memcmp(buf, "v2", 2), 0);
	/* An empty value. */
	T_ASSERT_EQ(set(path, "user.empty", NULL, 0, 0), 0);
	T_ASSERT_EQ(get(path, "user.empty", buf, sizeof(buf)), 0);
	T_ASSERT_EQ(get(path, "user.none", buf, sizeof(buf)), -ENODATA);
	/* Another namespace nobody may use. */
	T_ASSERT_EQ(set(path, "bogus.one", "x", 1, 0), -EOPNOTSUPP);
	/* A missing file (an error of the call). */
	T_ASSERT_EQ(get("/tmp/nw-xattr-missing/x", "user.one", buf, 8),
		    -ENOENT);
	T_ASSERT_EQ(getxattr(path, "user.one", buf, sizeof(buf)), 2);
}

static void test_fd_ops(void)
{
	char buf[64];
	int fd = open(path, O_RDWR), opath;

	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(fset(fd, "user.fd", "by-fd", 5, 0), 0);
	memset(buf, 0, sizeof(buf));
	T_ASSERT_EQ(fget(fd, "user.fd", buf, sizeof(buf)), 5);
	T_ASSERT_EQ(memcmp(buf, "by-fd", 5), 0);
	T_ASSERT_EQ(fget(fd, "user.fd", NULL, 0), 5);
	T_ASSERT_EQ(fget(fd, "user.nope", buf, sizeof(buf)), -ENODATA);
	T_ASSERT_EQ(fset(fd, "user.fd", "x", 1, XATTR_CREATE), -EEXIST);
	T_ASSERT_EQ(fget(-1, "user.fd", buf, sizeof(buf)), -EBADF);
	T_ASSERT_EQ(fset(9999, "user.fd", "x", 1, 0), -EBADF);
	opath = open(path, O_PATH);
	T_ASSERT_GE(opath, 0);
	T_ASSERT_EQ(fget(opath, "user.fd", buf, sizeof(buf)), -EBADF);
	/* A registered file: -EBADF at prep. */
	xattr_sqe(IORING_OP_FGETXATTR, 0, NULL, "user.fd", buf, 8, 0)->flags |=
		IOSQE_FIXED_FILE;
	T_ASSERT_EQ(run(), -EBADF);
	xattr_sqe(IORING_OP_GETXATTR, 0, path, "user.fd", buf, 8, 0)->flags |=
		IOSQE_FIXED_FILE;
	T_ASSERT_EQ(run(), -EBADF);
	/* More than XATTR_SIZE_MAX asked: clamped, only 5 bytes written. */
	T_ASSERT_EQ(fget(fd, "user.fd", buf, 1U << 20), 5);
	close(opath);
	close(fd);
}

static void test_prep_errors(void)
{
	static char big[XATTR_SIZE_MAX + 2];
	char name[300], buf[16];

	/* Flags: only CREATE/REPLACE for a set, none for a get. */
	T_ASSERT_EQ(set(path, "user.f", "x", 1, 4), -EINVAL);
	xattr_sqe(IORING_OP_GETXATTR, 0, path, "user.one", buf, 8, 1);
	T_ASSERT_EQ(run(), -EINVAL);
	/* Names: empty, 255 bytes (fine here), 256 bytes, unreadable. */
	T_ASSERT_EQ(set(path, "", "x", 1, 0), -ERANGE);
	T_ASSERT_EQ(get(path, "", buf, 8), -ERANGE);
	memset(name, 'n', sizeof(name));
	memcpy(name, "user.", 5);
	name[255] = 0;
	T_ASSERT_EQ(get(path, name, buf, 8), -ENODATA);
	name[255] = 'n';
	name[256] = 0;
	T_ASSERT_EQ(get(path, name, buf, 8), -ERANGE);
	T_ASSERT_EQ(set(path, name, big, sizeof(big), 0), -ERANGE);
	T_ASSERT_EQ(get(path, NULL, buf, 8), -EFAULT);
	T_ASSERT_EQ(set(path, bad, "x", 1, 0), -EFAULT);
	/* A name running into an unmapped page. */
	memcpy((char *)bad - 5, "user.", 5);
	T_ASSERT_EQ(get(path, (char *)bad - 5, buf, 8), -EFAULT);
	/* Values: over XATTR_SIZE_MAX, unreadable. */
	T_ASSERT_EQ(set(path, "user.big", big, XATTR_SIZE_MAX + 1, 0), -E2BIG);
	T_ASSERT_EQ(set(path, "user.bad", bad, 4, 0), -EFAULT);
	T_ASSERT_EQ(set(path, "user.bad", bad, 0, 0), 0);
	/* Paths: NULL, empty, unreadable. */
	T_ASSERT_EQ(get(NULL, "user.one", buf, 8), -EFAULT);
	T_ASSERT_EQ(get("", "user.one", buf, 8), -ENOENT);
	T_ASSERT_EQ(set(bad, "user.one", "x", 1, 0), -EFAULT);
	/* A get into an unwritable buffer: the call's -EFAULT. */
	T_ASSERT_EQ(get(path, "user.one", bad, 8), -EFAULT);
	T_ASSERT_EQ(getxattr(path, "user.big", buf, 8), -1);
}

/* Errors of the call leave a link alone; prep errors and bad fds break it. */
static void test_links(void)
{
	char buf[16];

	run_linked(
		xattr_sqe(IORING_OP_GETXATTR, 0, path, "user.none", buf, 8, 0),
		-ENODATA, 0);
	run_linked(
		xattr_sqe(IORING_OP_GETXATTR, 0, path, "user.one", buf, 1, 0),
		-ERANGE, 0);
	run_linked(xattr_sqe(IORING_OP_GETXATTR, 0, "/tmp/nw-xattr-missing/x",
			     "user.one", buf, 8, 0),
		   -ENOENT, 0);
	run_linked(xattr_sqe(IORING_OP_GETXATTR, 0, path, "", buf, 8, 0),
		   -ERANGE, -ECANCELED);
	run_linked(xattr_sqe(IORING_OP_FGETXATTR, 9999, NULL, "user.one", buf,
			     8, 0),
		   -EBADF, -ECANCELED);
	run_linked(xattr_sqe(IORING_OP_SETXATTR, 0, path, "user.x", "x", 1, 8),
		   -EINVAL, -ECANCELED);
	/* A successful set, then a linked get of what it set. */
	xattr_sqe(IORING_OP_SETXATTR, 0, path, "user.chain", "linked", 6, 0)
		->flags |= IOSQE_IO_LINK;
	memset(buf, 0, sizeof(buf));
	xattr_sqe(IORING_OP_GETXATTR, 0, path, "user.chain", buf, sizeof(buf),
		  0)
		->user_data = 2;
	T_ASSERT_EQ(t_submit_and_wait(&ring, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&ring, 1, 0), 0);
	T_ASSERT_EQ(t_expect_cqe(&ring, 2, 6), 0);
	T_ASSERT_EQ(memcmp(buf, "linked", 6), 0);
}

int main(void)
{
	int fd, ret;

	t_require_engine();
	t_watchdog(60);
	snprintf(path, sizeof(path), "/tmp/nw-xattr-%d", (int)getpid());
	snprintf(link_path, sizeof(link_path), "%s.lnk", path);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	T_ASSERT_GE(fd, 0);
	close(fd);
	if (setxattr(path, "user.probe", "1", 1, 0) < 0) {
		printf("no user xattrs on /tmp (%s): skip\n", strerror(errno));
		unlink(path);
		return T_EXIT_SKIP;
	}
	T_ASSERT_EQ(symlink(path, link_path), 0);
	bad = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(bad != MAP_FAILED);
	T_ASSERT_EQ(mprotect((char *)bad + 4096, 4096, PROT_NONE), 0);
	bad = (char *)bad + 4096;
	ret = t_ring_init(&ring, 8, NULL);
	T_ASSERT_EQ(ret, 0);
	test_path_ops();
	test_fd_ops();
	test_prep_errors();
	test_links();
	t_ring_exit(&ring);
	unlink(link_path);
	unlink(path);
	return T_EXIT_PASS;
}
