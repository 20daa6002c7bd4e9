/* SPDX-License-Identifier: MIT */
/*
 * STATX, RENAMEAT, UNLINKAT, MKDIRAT, SYMLINKAT, LINKAT: results, the
 * fields prep rejects, path copies at submit (bad pointers, paths that run
 * into unmapped memory, PATH_MAX), and the kernel's link rule for these
 * ops: an error of the system call does not cancel the next linked
 * request, an error found at prep does.
 * Semantics: io_uring/fs.c, io_uring/statx.c, fs/namei.c getname.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "helpers.h"

static char tmpdir[64];
static struct t_ring ring;
static int dirfd_;

/* A zeroed SQE for op with user_data 1. */
static struct io_uring_sqe *op_sqe(int op)
{
	struct io_uring_sqe *sqe = t_get_sqe(&ring);

	T_ASSERT(sqe != NULL);
	sqe->opcode = (uint8_t)op;
	sqe->user_data = 1;
	return sqe;
}

/* Submit what is queued (one SQE) and return its CQE's res. */
static int run(void)
{
	return t_run(&ring, 1);
}

/* Queue op, linked to a NOP; return op's res and the NOP's in *nop. */
static int run_linked(struct io_uring_sqe *sqe, int *nop)
{
	struct io_uring_cqe cqe;
	int res = 0, i;

	sqe->flags |= IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&ring), 2);
	T_ASSERT_EQ(t_submit_and_wait(&ring, 2), 2);
	for (i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(&ring, &cqe), 0);
		if (cqe.user_data == 1)
			res = cqe.res;
		else
			*nop = cqe.res;
	}
	return res;
}

static struct io_uring_sqe *prep_path(int op, int dfd, const char *path)
{
	struct io_uring_sqe *sqe = op_sqe(op);

	sqe->fd = dfd;
	sqe->addr = (uintptr_t)path;
	return sqe;
}

static int do_mkdirat(int dfd, const char *path, unsigned int mode)
{
	prep_path(IORING_OP_MKDIRAT, dfd, path)->len = mode;
	return run();
}

static int do_unlinkat(int dfd, const char *path, unsigned int flags)
{
	prep_path(IORING_OP_UNLINKAT, dfd, path)->unlink_flags = flags;
	return run();
}

static int do_renameat(int odfd, const char *old, int ndfd, const char *new,
		       unsigned int flags)
{
	struct io_uring_sqe *sqe = prep_path(IORING_OP_RENAMEAT, odfd, old);

	sqe->addr2 = (uintptr_t) new;
	sqe->len = (unsigned int)ndfd;
	sqe->rename_flags = flags;
	return run();
}

static int do_symlinkat(const char *target, int dfd, const char *path)
{
	struct io_uring_sqe *sqe = prep_path(IORING_OP_SYMLINKAT, dfd, target);

	sqe->addr2 = (uintptr_t)path;
	return run();
}

static int do_linkat(int odfd, const char *old, int ndfd, const char *new,
		     unsigned int flags)
{
	struct io_uring_sqe *sqe = prep_path(IORING_OP_LINKAT, odfd, old);

	sqe->addr2 = (uintptr_t) new;
	sqe->len = (unsigned int)ndfd;
	sqe->hardlink_flags = flags;
	return run();
}

static struct io_uring_sqe *prep_statx(int dfd, const char *path,
				       unsigned int flags, unsigned int mask,
				       struct statx *buf)
{
	struct io_uring_sqe *sqe = prep_path(IORING_OP_STATX, dfd, path);

	sqe->statx_flags = flags;
	sqe->len = mask;
	sqe->addr2 = (uintptr_t)buf;
	return sqe;
}

static int do_statx(int dfd, const char *path, unsigned int flags,
		    unsigned int mask, struct statx *buf)
{
	prep_statx(dfd, path, flags, mask, buf);
	return run();
}

static void make_file(const char *name, const char *data)
{
	int fd = openat(dirfd_, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	close(fd);
}

static void test_mkdir_unlink(void)
{
	struct stat st;
	char abs[128];

	T_ASSERT_EQ(do_mkdirat(dirfd_, "d", 0750), 0);
	T_ASSERT_EQ(fstatat(dirfd_, "d", &st, 0), 0);
	T_ASSERT(S_ISDIR(st.st_mode));
	T_ASSERT_EQ(st.st_mode & 07777, 0750);
	/* The mode is a umode_t: bits above 16 are dropped. */
	T_ASSERT_EQ(do_mkdirat(dirfd_, "d/m", 0x10000 | 0700), 0);
	T_ASSERT_EQ(fstatat(dirfd_, "d/m", &st, 0), 0);
	T_ASSERT_EQ(st.st_mode & 07777, 0700);
	T_ASSERT_EQ(do_mkdirat(dirfd_, "d", 0755), -EEXIST);
	T_ASSERT_EQ(do_mkdirat(dirfd_, "nope/sub", 0755), -ENOENT);
	make_file("f", "data");
	T_ASSERT_EQ(do_mkdirat(dirfd_, "f/sub", 0755), -ENOTDIR);
	snprintf(abs, sizeof(abs), "%s/abs", tmpdir);
	T_ASSERT_EQ(do_mkdirat(AT_FDCWD, abs, 0755), 0);
	/* An absolute path ignores the dfd, even a bad one. */
	T_ASSERT_EQ(do_unlinkat(999, abs, AT_REMOVEDIR), 0);
	T_ASSERT_EQ(do_mkdirat(999, "rel", 0755), -EBADF);

	T_ASSERT_EQ(do_unlinkat(dirfd_, "d", 0), -EISDIR);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "d", AT_REMOVEDIR), -ENOTEMPTY);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "d/m", AT_REMOVEDIR), 0);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "d", AT_REMOVEDIR), 0);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "d", AT_REMOVEDIR), -ENOENT);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "f", AT_REMOVEDIR), -ENOTDIR);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "f/x", 0), -ENOTDIR);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "f", 0), 0);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "f", 0), -ENOENT);
	T_ASSERT_EQ(fstatat(dirfd_, "f", &st, 0), -1);
}

static void test_rename_links(void)
{
	char buf[64];
	struct stat st;
	ssize_t n;

	make_file("a", "AAA");
	make_file("b", "BBBB");
	T_ASSERT_EQ(do_renameat(dirfd_, "a", dirfd_, "c", 0), 0);
	T_ASSERT_EQ(fstatat(dirfd_, "a", &st, 0), -1);
	T_ASSERT_EQ(fstatat(dirfd_, "c", &st, 0), 0);
	T_ASSERT_EQ(st.st_size, 3);
	T_ASSERT_EQ(do_renameat(dirfd_, "a", dirfd_, "c", 0), -ENOENT);
	T_ASSERT_EQ(do_renameat(dirfd_, "c", dirfd_, "b", RENAME_NOREPLACE),
		    -EEXIST);
	T_ASSERT_EQ(do_renameat(dirfd_, "c", dirfd_, "b", RENAME_EXCHANGE), 0);
	T_ASSERT_EQ(fstatat(dirfd_, "c", &st, 0), 0);
	T_ASSERT_EQ(st.st_size, 4);
	/* Unknown rename flags: the system call's -EINVAL. */
	T_ASSERT_EQ(do_renameat(dirfd_, "c", dirfd_, "b", 0x100), -EINVAL);
	/* Across dfds: old relative to the dir, new absolute. */
	{
		char abs[128];

		snprintf(abs, sizeof(abs), "%s/moved", tmpdir);
		T_ASSERT_EQ(do_renameat(dirfd_, "c", AT_FDCWD, abs, 0), 0);
		T_ASSERT_EQ(fstatat(dirfd_, "moved", &st, 0), 0);
	}

	/* symlinkat: the target need not exist. */
	T_ASSERT_EQ(do_symlinkat("moved", dirfd_, "sl"), 0);
	n = readlinkat(dirfd_, "sl", buf, sizeof(buf));
	T_ASSERT_EQ(n, 5);
	T_ASSERT_EQ(memcmp(buf, "moved", 5), 0);
	T_ASSERT_EQ(do_symlinkat("whatever", dirfd_, "sl"), -EEXIST);
	T_ASSERT_EQ(do_symlinkat("x", dirfd_, "nope/sl"), -ENOENT);
	T_ASSERT_EQ(do_symlinkat("dangling", dirfd_, "dl"), 0);

	/* linkat: a second name, AT_SYMLINK_FOLLOW, errors. */
	T_ASSERT_EQ(do_linkat(dirfd_, "moved", dirfd_, "hard", 0), 0);
	T_ASSERT_EQ(fstatat(dirfd_, "moved", &st, 0), 0);
	T_ASSERT_EQ(st.st_nlink, 2);
	T_ASSERT_EQ(do_linkat(dirfd_, "moved", dirfd_, "hard", 0), -EEXIST);
	T_ASSERT_EQ(do_linkat(dirfd_, "nope", dirfd_, "x", 0), -ENOENT);
	/* Without FOLLOW the link is to the symlink itself. */
	T_ASSERT_EQ(do_linkat(dirfd_, "sl", dirfd_, "sl2", 0), 0);
	T_ASSERT_EQ(fstatat(dirfd_, "sl2", &st, AT_SYMLINK_NOFOLLOW), 0);
	T_ASSERT(S_ISLNK(st.st_mode));
	T_ASSERT_EQ(do_linkat(dirfd_, "sl", dirfd_, "sl3", AT_SYMLINK_FOLLOW),
		    0);
	T_ASSERT_EQ(fstatat(dirfd_, "sl3", &st, AT_SYMLINK_NOFOLLOW), 0);
	T_ASSERT(S_ISREG(st.st_mode));
	T_ASSERT_EQ(st.st_nlink, 3);
	T_ASSERT_EQ(do_linkat(dirfd_, "dl", dirfd_, "dl2", AT_SYMLINK_FOLLOW),
		    -ENOENT);
	T_ASSERT_EQ(do_linkat(dirfd_, "moved", dirfd_, "x", 0x1), -EINVAL);

	/* Clean up through the ring as well. */
	T_ASSERT_EQ(do_unlinkat(dirfd_, "sl", 0), 0);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "sl2", 0), 0);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "sl3", 0), 0);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "dl", 0), 0);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "hard", 0), 0);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "moved", 0), 0);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "b", 0), 0);
}

static void test_statx(void)
{
	struct statx stx, ref;
	int fd;

	make_file("s", "0123456789");
	T_ASSERT_EQ(do_symlinkat("s", dirfd_, "sl"), 0);
	memset(&stx, 0xff, sizeof(stx));
	T_ASSERT_EQ(do_statx(dirfd_, "s", 0, STATX_BASIC_STATS, &stx), 0);
	T_ASSERT_EQ(statx(dirfd_, "s", 0, STATX_BASIC_STATS, &ref), 0);
	T_ASSERT_EQ(stx.stx_size, 10);
	T_ASSERT_EQ(stx.stx_ino, ref.stx_ino);
	T_ASSERT_EQ(stx.stx_mode, ref.stx_mode);
	T_ASSERT_EQ(stx.stx_nlink, 1);
	T_ASSERT(stx.stx_mask & STATX_SIZE);
	T_ASSERT(S_ISREG(stx.stx_mode));
	/* Symlinks: followed, or not with AT_SYMLINK_NOFOLLOW. */
	T_ASSERT_EQ(do_statx(dirfd_, "sl", 0, STATX_BASIC_STATS, &stx), 0);
	T_ASSERT(S_ISREG(stx.stx_mode));
	T_ASSERT_EQ(do_statx(dirfd_, "sl", AT_SYMLINK_NOFOLLOW,
			     STATX_BASIC_STATS, &stx),
		    0);
	T_ASSERT(S_ISLNK(stx.stx_mode));
	/* AT_EMPTY_PATH: the dfd itself. */
	fd = openat(dirfd_, "s", O_RDONLY);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(do_statx(fd, "", AT_EMPTY_PATH, STATX_SIZE, &stx), 0);
	T_ASSERT_EQ(stx.stx_size, 10);
	/* "" without AT_EMPTY_PATH fails at prep; NULL always does. */
	T_ASSERT_EQ(do_statx(fd, "", 0, STATX_SIZE, &stx), -ENOENT);
	T_ASSERT_EQ(do_statx(fd, NULL, AT_EMPTY_PATH, STATX_SIZE, &stx),
		    -EFAULT);
	/*
	 * A flag vfs_statx does not know is -EINVAL, with "" too: the statx
	 * system call's "" + AT_EMPTY_PATH shortcut ignores it, io_uring's
	 * path never takes that shortcut.
	 */
	T_ASSERT_EQ(
		do_statx(fd, "", AT_EMPTY_PATH | 0x10000000, STATX_SIZE, &stx),
		-EINVAL);
	T_ASSERT_EQ(do_statx(fd, "", AT_EMPTY_PATH | AT_REMOVEDIR, STATX_SIZE,
			     &stx),
		    -EINVAL);
	close(fd);
	T_ASSERT_EQ(do_statx(AT_FDCWD, tmpdir, 0, STATX_BASIC_STATS, &stx), 0);
	T_ASSERT(S_ISDIR(stx.stx_mode));
	T_ASSERT_EQ(do_statx(dirfd_, "nope", 0, STATX_BASIC_STATS, &stx),
		    -ENOENT);
	T_ASSERT_EQ(do_statx(dirfd_, "s/x", 0, STATX_BASIC_STATS, &stx),
		    -ENOTDIR);
	T_ASSERT_EQ(do_statx(999, "s", 0, STATX_BASIC_STATS, &stx), -EBADF);
	/* The result buffer: a bad one is -EFAULT after a good lookup. */
	T_ASSERT_EQ(do_statx(dirfd_, "s", 0, STATX_BASIC_STATS, (void *)8),
		    -EFAULT);
	T_ASSERT_EQ(do_statx(dirfd_, "nope", 0, STATX_BASIC_STATS, (void *)8),
		    -ENOENT);
	T_ASSERT_EQ(do_statx(dirfd_, "s", 0, STATX_BASIC_STATS, NULL), -EFAULT);
	/* Flags and mask the system call refuses. */
	T_ASSERT_EQ(do_statx(dirfd_, "s", 0x80000000, STATX_SIZE, &stx),
		    -EINVAL);
	T_ASSERT_EQ(do_statx(dirfd_, "s",
			     AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC,
			     STATX_SIZE, &stx),
		    -EINVAL);
	T_ASSERT_EQ(do_statx(dirfd_, "s", 0, 0x80000000U, &stx), -EINVAL);
	/* The fd is a dfd, not a file: no fixed files here. */
	prep_statx(dirfd_, "s", 0, STATX_SIZE, &stx)->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(run(), -EBADF);
	/* Through a worker on request. */
	prep_statx(dirfd_, "s", 0, STATX_SIZE, &stx)->flags = IOSQE_ASYNC;
	T_ASSERT_EQ(run(), 0);
	T_ASSERT_EQ(stx.stx_size, 10);
	T_ASSERT_EQ(unlinkat(dirfd_, "sl", 0), 0);
	T_ASSERT_EQ(unlinkat(dirfd_, "s", 0), 0);
}

/* Paths: bad pointers, unmapped tails, the PATH_MAX limit. */
static void test_paths(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *map, *path;
	struct statx stx;
	size_t i;

	T_ASSERT_EQ(do_mkdirat(dirfd_, (const char *)8, 0755), -EFAULT);
	T_ASSERT_EQ(do_mkdirat(dirfd_, NULL, 0755), -EFAULT);
	T_ASSERT_EQ(do_unlinkat(dirfd_, (const char *)-4096L, 0), -EFAULT);
	T_ASSERT_EQ(do_mkdirat(dirfd_, "", 0755), -ENOENT);
	T_ASSERT_EQ(do_unlinkat(dirfd_, "", 0), -ENOENT);
	T_ASSERT_EQ(do_renameat(dirfd_, "", dirfd_, "x", 0), -ENOENT);
	T_ASSERT_EQ(do_renameat(dirfd_, "x", dirfd_, (const char *)8, 0),
		    -EFAULT);
	/* The first path's error wins. */
	T_ASSERT_EQ(do_renameat(dirfd_, (const char *)8, dirfd_, "", 0),
		    -EFAULT);
	T_ASSERT_EQ(do_renameat(dirfd_, "", dirfd_, (const char *)8, 0),
		    -ENOENT);
	T_ASSERT_EQ(do_symlinkat("", dirfd_, "x"), -ENOENT);
	T_ASSERT_EQ(do_symlinkat("x", dirfd_, NULL), -EFAULT);
	T_ASSERT_EQ(do_linkat(dirfd_, "", dirfd_, "x", 0), -ENOENT);
	T_ASSERT_EQ(do_linkat(dirfd_, "x", dirfd_, "", AT_EMPTY_PATH), -ENOENT);
	T_ASSERT_EQ(do_statx(dirfd_, (const char *)8, 0, STATX_SIZE, &stx),
		    -EFAULT);

	/* A name running into an unmapped page, and one ending right there. */
	map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(map != MAP_FAILED);
	T_ASSERT_EQ(munmap(map + pg, (size_t)pg), 0);
	memset(map, 'z', (size_t)pg);
	T_ASSERT_EQ(do_mkdirat(dirfd_, map + pg - 10, 0755), -EFAULT);
	map[pg - 1] = '\0';
	T_ASSERT_EQ(do_mkdirat(dirfd_, map + pg - 10, 0755), 0);
	T_ASSERT_EQ(do_unlinkat(dirfd_, map + pg - 10, AT_REMOVEDIR), 0);
	/*
	 * No NUL up to the hole: -EFAULT, unless PATH_MAX bytes were read
	 * before it (4 KiB pages): then -ENAMETOOLONG.
	 */
	map[pg - 1] = 'z';
	T_ASSERT_EQ(do_mkdirat(dirfd_, map + 1, 0755), -EFAULT);
	if (pg == PATH_MAX)
		T_ASSERT_EQ(do_mkdirat(dirfd_, map, 0755), -ENAMETOOLONG);
	munmap(map, (size_t)pg);

	/* PATH_MAX - 1 characters pass prep; PATH_MAX do not. */
	path = malloc(PATH_MAX + 2);
	T_ASSERT(path != NULL);
	for (i = 0; i < PATH_MAX + 1; i++)
		path[i] = (i % 2) ? '/' : 'q';
	path[PATH_MAX - 1] = '\0';
	T_ASSERT_EQ(do_mkdirat(dirfd_, path, 0755), -ENOENT);
	path[PATH_MAX - 1] = 'q';
	path[PATH_MAX] = '\0';
	T_ASSERT_EQ(do_mkdirat(dirfd_, path, 0755), -ENAMETOOLONG);
	T_ASSERT_EQ(do_statx(dirfd_, path, 0, STATX_SIZE, &stx), -ENAMETOOLONG);
	T_ASSERT_EQ(do_renameat(dirfd_, "x", dirfd_, path, 0), -ENAMETOOLONG);
	free(path);
}

/* Fields each prep requires to be zero, and the fixed-file flag. */
static void test_prep_errors(void)
{
	struct io_uring_sqe *sqe;
	struct statx stx;

	prep_path(IORING_OP_UNLINKAT, dirfd_, "x")->len = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_path(IORING_OP_UNLINKAT, dirfd_, "x")->off = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_path(IORING_OP_UNLINKAT, dirfd_, "x")->unlink_flags = 0x1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_path(IORING_OP_UNLINKAT, dirfd_, "x")->buf_index = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_path(IORING_OP_UNLINKAT, dirfd_, "x")->splice_fd_in = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_path(IORING_OP_UNLINKAT, dirfd_, "x")->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(run(), -EBADF);
	/* A field error comes before the path's. */
	sqe = prep_path(IORING_OP_UNLINKAT, dirfd_, (const char *)8);
	sqe->len = 1;
	T_ASSERT_EQ(run(), -EINVAL);

	prep_path(IORING_OP_MKDIRAT, dirfd_, "x")->off = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_path(IORING_OP_MKDIRAT, dirfd_, "x")->rw_flags = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_path(IORING_OP_MKDIRAT, dirfd_, "x")->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(run(), -EBADF);

	sqe = prep_path(IORING_OP_SYMLINKAT, dirfd_, "x");
	sqe->addr2 = (uintptr_t) "y";
	sqe->len = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	sqe = prep_path(IORING_OP_SYMLINKAT, dirfd_, "x");
	sqe->addr2 = (uintptr_t) "y";
	sqe->rw_flags = 1;
	T_ASSERT_EQ(run(), -EINVAL);

	sqe = prep_path(IORING_OP_RENAMEAT, dirfd_, "x");
	sqe->addr2 = (uintptr_t) "y";
	sqe->len = (unsigned int)dirfd_;
	sqe->buf_index = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	sqe = prep_path(IORING_OP_RENAMEAT, dirfd_, "x");
	sqe->addr2 = (uintptr_t) "y";
	sqe->len = (unsigned int)dirfd_;
	sqe->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(run(), -EBADF);

	sqe = prep_path(IORING_OP_LINKAT, dirfd_, "x");
	sqe->addr2 = (uintptr_t) "y";
	sqe->splice_fd_in = 3;
	T_ASSERT_EQ(run(), -EINVAL);

	prep_statx(dirfd_, "x", 0, STATX_SIZE, &stx)->buf_index = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	/* ioprio is for read/write ops only. */
	prep_statx(dirfd_, "x", 0, STATX_SIZE, &stx)->ioprio = 1;
	T_ASSERT_EQ(run(), -EINVAL);
}

/*
 * The link rule: these ops only set their result, so a linked request
 * after a failed mkdirat runs; a prep failure cancels the chain.
 */
static void test_links(void)
{
	struct statx stx;
	int nop;

	nop = 99;
	T_ASSERT_EQ(
		run_linked(prep_path(IORING_OP_UNLINKAT, dirfd_, "nope"), &nop),
		-ENOENT);
	T_ASSERT_EQ(nop, 0);
	nop = 99;
	T_ASSERT_EQ(run_linked(prep_statx(dirfd_, "nope", 0, STATX_SIZE, &stx),
			       &nop),
		    -ENOENT);
	T_ASSERT_EQ(nop, 0);
	nop = 99;
	T_ASSERT_EQ(
		run_linked(prep_path(IORING_OP_MKDIRAT, AT_FDCWD, "/"), &nop),
		-EEXIST);
	T_ASSERT_EQ(nop, 0);
	nop = 99;
	T_ASSERT_EQ(run_linked(prep_path(IORING_OP_UNLINKAT, dirfd_, ""), &nop),
		    -ENOENT);
	T_ASSERT_EQ(nop, -ECANCELED);

	/* A chain runs in order: mkdir, then a file's rename into it. */
	make_file("m", "x");
	prep_path(IORING_OP_MKDIRAT, dirfd_, "into")->flags = IOSQE_IO_LINK;
	{
		struct io_uring_sqe *sqe =
			prep_path(IORING_OP_RENAMEAT, dirfd_, "m");
		struct io_uring_cqe cqe;

		sqe->addr2 = (uintptr_t) "into/m";
		sqe->len = (unsigned int)dirfd_;
		sqe->user_data = 2;
		sqe->flags = IOSQE_IO_LINK;
		sqe = prep_path(IORING_OP_UNLINKAT, dirfd_, "into/m");
		sqe->user_data = 3;
		T_ASSERT_EQ(t_submit_and_wait(&ring, 3), 3);
		for (int i = 1; i <= 3; i++) {
			T_ASSERT_EQ(t_wait_cqe(&ring, &cqe), 0);
			T_ASSERT_EQ(cqe.user_data, i);
			T_ASSERT_EQ(cqe.res, 0);
		}
	}
	T_ASSERT_EQ(do_unlinkat(dirfd_, "into", AT_REMOVEDIR), 0);
}

/* Paths are copied at submit; many requests run concurrently. */
static void test_stable_and_batch(void)
{
	struct io_uring_cqe cqe;
	char names[16][16];
	struct stat st;
	int i;

	for (i = 0; i < 16; i++) {
		snprintf(names[i], sizeof(names[i]), "batch%d", i);
		prep_path(IORING_OP_MKDIRAT, dirfd_, names[i])->user_data =
			100 + i;
	}
	T_ASSERT_EQ(t_submit(&ring), 16);
	memset(names, 'X', sizeof(names)); /* the engine has its copies */
	for (i = 0; i < 16; i++) {
		T_ASSERT_EQ(t_wait_cqe(&ring, &cqe), 0);
		T_ASSERT_GE(cqe.user_data, 100);
		T_ASSERT_LT(cqe.user_data, 116);
		T_ASSERT_EQ(cqe.res, 0);
	}
	for (i = 0; i < 16; i++) {
		snprintf(names[i], sizeof(names[i]), "batch%d", i);
		T_ASSERT_EQ(fstatat(dirfd_, names[i], &st, 0), 0);
		prep_path(IORING_OP_UNLINKAT, dirfd_, names[i])->unlink_flags =
			AT_REMOVEDIR;
		T_ASSERT_EQ(run(), 0);
	}
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	umask(022);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/nowait-fs-ops.XXXXXX");
	T_ASSERT(mkdtemp(tmpdir) != NULL);
	dirfd_ = open(tmpdir, O_RDONLY | O_DIRECTORY);
	T_ASSERT_GE(dirfd_, 0);
	T_ASSERT_EQ(t_ring_init(&ring, 32, NULL), 0);
	test_mkdir_unlink();
	test_rename_links();
	test_statx();
	test_paths();
	test_prep_errors();
	test_links();
	test_stable_and_batch();
	t_ring_exit(&ring);
	close(dirfd_);
	T_ASSERT_EQ(rmdir(tmpdir), 0);
	return T_EXIT_PASS;
}
