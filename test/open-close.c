/* SPDX-License-Identifier: MIT */
/*
 * OPENAT, OPENAT2, CLOSE: flags and modes, O_NONBLOCK left off the new
 * file unless asked, flags OPENAT ignores and OPENAT2 refuses, struct
 * open_how copied with copy_struct_from_user's rules, RESOLVE_CACHED set
 * by the program (-EAGAIN is final), direct descriptors without a file
 * table, FIFOs, closing bad fds and the ring's own fd, and link failure.
 * Semantics: io_uring/openclose.c, fs/open.c build_open_how/open_flags.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "helpers.h"

#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif

static char tmpdir[64];
static struct t_ring ring;
static int dirfd_;

static struct io_uring_sqe *op_sqe(int op)
{
	struct io_uring_sqe *sqe = t_get_sqe(&ring);

	T_ASSERT(sqe != NULL);
	sqe->opcode = (uint8_t)op;
	sqe->user_data = 1;
	return sqe;
}

static int run(void)
{
	return t_run(&ring, 1);
}

static struct io_uring_sqe *prep_openat(int dfd, const char *path,
					unsigned int flags, unsigned int mode)
{
	struct io_uring_sqe *sqe = op_sqe(IORING_OP_OPENAT);

	sqe->fd = dfd;
	sqe->addr = (uintptr_t)path;
	sqe->open_flags = flags;
	sqe->len = mode;
	return sqe;
}

static int do_openat(int dfd, const char *path, unsigned int flags,
		     unsigned int mode)
{
	prep_openat(dfd, path, flags, mode);
	return run();
}

static struct io_uring_sqe *prep_openat2(int dfd, const char *path,
					 const void *how, unsigned int size)
{
	struct io_uring_sqe *sqe = op_sqe(IORING_OP_OPENAT2);

	sqe->fd = dfd;
	sqe->addr = (uintptr_t)path;
	sqe->addr2 = (uintptr_t)how;
	sqe->len = size;
	return sqe;
}

static int do_openat2(int dfd, const char *path, uint64_t flags, uint64_t mode,
		      uint64_t resolve)
{
	struct open_how how = {flags, mode, resolve};

	prep_openat2(dfd, path, &how, sizeof(how));
	return run();
}

static struct io_uring_sqe *prep_close(int fd)
{
	struct io_uring_sqe *sqe = op_sqe(IORING_OP_CLOSE);

	sqe->fd = fd;
	return sqe;
}

static int do_close(int fd)
{
	prep_close(fd);
	return run();
}

static void make_file(const char *name, const char *data)
{
	int fd = openat(dirfd_, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	close(fd);
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* The lowest free fd number (what the next open gets). */
static int lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY);

	T_ASSERT_GE(fd, 0);
	close(fd);
	return fd;
}

static void test_openat(void)
{
	char buf[16];
	struct stat st;
	int fd;

	make_file("f", "hello");
	fd = do_openat(dirfd_, "f", O_RDONLY, 0);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(read(fd, buf, sizeof(buf)), 5);
	T_ASSERT_EQ(memcmp(buf, "hello", 5), 0);
	/* Tried nonblocking, but the file is left blocking. */
	T_ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	T_ASSERT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	T_ASSERT(!fd_open(fd));

	fd = do_openat(dirfd_, "f", O_RDWR | O_NONBLOCK | O_CLOEXEC, 0);
	T_ASSERT_GE(fd, 0);
	T_ASSERT(fcntl(fd, F_GETFL) & O_NONBLOCK);
	T_ASSERT_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	T_ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	T_ASSERT_EQ(do_close(fd), 0);

	/* Creation: the mode under the umask, O_EXCL, O_TRUNC. */
	fd = do_openat(dirfd_, "new", O_WRONLY | O_CREAT | O_EXCL, 0666);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(fstat(fd, &st), 0);
	T_ASSERT_EQ(st.st_mode & 07777, 0644);
	T_ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	T_ASSERT_EQ(write(fd, "abc", 3), 3);
	T_ASSERT_EQ(do_close(fd), 0);
	T_ASSERT_EQ(do_openat(dirfd_, "new", O_WRONLY | O_CREAT | O_EXCL, 0666),
		    -EEXIST);
	fd = do_openat(dirfd_, "new", O_WRONLY | O_TRUNC, 0);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(fstat(fd, &st), 0);
	T_ASSERT_EQ(st.st_size, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	/* O_TMPFILE: a file without a name in the directory. */
	fd = do_openat(dirfd_, ".", O_TMPFILE | O_RDWR, 0600);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(fstat(fd, &st), 0);
	T_ASSERT_EQ(st.st_nlink, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	T_ASSERT_EQ(do_openat(dirfd_, ".", O_TMPFILE | O_RDONLY, 0600),
		    -EINVAL);

	/* OPENAT ignores unknown flags and a mode without O_CREAT. */
	fd = do_openat(dirfd_, "f", O_RDONLY | 0x40000000, 0);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	fd = do_openat(dirfd_, "f", O_RDONLY, 0777);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	/* O_PATH keeps only what goes with it (O_CREAT is dropped). */
	fd = do_openat(dirfd_, "nope", O_PATH | O_CREAT, 0644);
	T_ASSERT_EQ(fd, -ENOENT);
	fd = do_openat(dirfd_, "f", O_PATH | O_RDWR | O_TRUNC, 0);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(read(fd, buf, 1), -1);
	T_ASSERT_EQ(do_close(fd), 0);
	T_ASSERT_EQ(fstatat(dirfd_, "f", &st, 0), 0);
	T_ASSERT_EQ(st.st_size, 5); /* not truncated */

	/* Errors of the lookup and of the open. */
	T_ASSERT_EQ(do_openat(dirfd_, "nope", O_RDONLY, 0), -ENOENT);
	T_ASSERT_EQ(do_openat(dirfd_, "f/x", O_RDONLY, 0), -ENOTDIR);
	T_ASSERT_EQ(do_openat(dirfd_, ".", O_WRONLY, 0), -EISDIR);
	T_ASSERT_EQ(do_openat(dirfd_, "f", O_RDONLY | O_DIRECTORY, 0),
		    -ENOTDIR);
	T_ASSERT_EQ(symlinkat("f", dirfd_, "sl"), 0);
	T_ASSERT_EQ(do_openat(dirfd_, "sl", O_RDONLY | O_NOFOLLOW, 0), -ELOOP);
	fd = do_openat(dirfd_, "sl", O_RDONLY, 0);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	T_ASSERT_EQ(do_openat(999, "f", O_RDONLY, 0), -EBADF);
	fd = do_openat(999, "/", O_RDONLY, 0);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	T_ASSERT_EQ(
		do_openat(dirfd_, "f", O_RDONLY | O_CREAT | O_DIRECTORY, 0644),
		-EINVAL);
	/* Through a worker on request. */
	prep_openat(dirfd_, "f", O_RDONLY, 0)->flags = IOSQE_ASYNC;
	fd = run();
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	T_ASSERT_EQ(unlinkat(dirfd_, "sl", 0), 0);
	T_ASSERT_EQ(unlinkat(dirfd_, "new", 0), 0);
}

static void test_openat2(void)
{
	struct open_how how = {O_RDONLY, 0, 0};
	unsigned char big[64];
	int fd;

	fd = do_openat2(dirfd_, "f", O_RDONLY, 0, 0);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	/* openat2 refuses what openat ignores. */
	T_ASSERT_EQ(do_openat2(dirfd_, "f", O_RDONLY | 0x40000000, 0, 0),
		    -EINVAL);
	T_ASSERT_EQ(do_openat2(dirfd_, "f", O_RDONLY, 0644, 0), -EINVAL);
	T_ASSERT_EQ(do_openat2(dirfd_, "f", O_RDONLY, 0, 0x10000), -EINVAL);
	T_ASSERT_EQ(do_openat2(dirfd_, "f", O_PATH | O_RDWR, 0, 0), -EINVAL);
	/* RESOLVE_* restrictions. */
	T_ASSERT_EQ(do_openat2(dirfd_, "../", O_RDONLY, 0, RESOLVE_BENEATH),
		    -EXDEV);
	T_ASSERT_EQ(symlinkat("f", dirfd_, "sl"), 0);
	T_ASSERT_EQ(do_openat2(dirfd_, "sl", O_RDONLY, 0, RESOLVE_NO_SYMLINKS),
		    -ELOOP);
	T_ASSERT_EQ(unlinkat(dirfd_, "sl", 0), 0);
	/* The program's RESOLVE_CACHED: cached works, creation is -EAGAIN. */
	fd = do_openat2(dirfd_, "f", O_RDONLY, 0, RESOLVE_CACHED);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	T_ASSERT_EQ(
		do_openat2(dirfd_, "c", O_RDWR | O_CREAT, 0600, RESOLVE_CACHED),
		-EAGAIN);
	T_ASSERT_EQ(faccessat(dirfd_, "c", F_OK, 0), -1);
	fd = do_openat2(dirfd_, "c", O_RDWR | O_CREAT, 0600, 0);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	T_ASSERT_EQ(unlinkat(dirfd_, "c", 0), 0);

	/* struct open_how sizes: too small, larger with zeros, non-zero. */
	prep_openat2(dirfd_, "f", &how, 16);
	T_ASSERT_EQ(run(), -EINVAL);
	memset(big, 0, sizeof(big));
	memcpy(big, &how, sizeof(how));
	prep_openat2(dirfd_, "f", big, sizeof(big));
	fd = run();
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	big[40] = 1;
	prep_openat2(dirfd_, "f", big, sizeof(big));
	T_ASSERT_EQ(run(), -E2BIG);
	/* The tail is checked before the head is read. */
	prep_openat2(dirfd_, "f", (void *)8, 24);
	T_ASSERT_EQ(run(), -EFAULT);
	prep_openat2(dirfd_, "f", (void *)8, 32);
	T_ASSERT_EQ(run(), -EFAULT);
	prep_openat2(dirfd_, "f", NULL, 24);
	T_ASSERT_EQ(run(), -EFAULT);
	/* The how's error comes before the path's. */
	prep_openat2(dirfd_, (const char *)8, big, sizeof(big));
	T_ASSERT_EQ(run(), -E2BIG);
	prep_openat2(dirfd_, (const char *)8, &how, sizeof(how));
	T_ASSERT_EQ(run(), -EFAULT);
}

/* What prep rejects, and direct descriptors without a file table. */
static void test_open_prep(void)
{
	struct io_uring_sqe *sqe;
	int fd;

	T_ASSERT_EQ(do_openat(dirfd_, (const char *)8, O_RDONLY, 0), -EFAULT);
	T_ASSERT_EQ(do_openat(dirfd_, NULL, O_RDONLY, 0), -EFAULT);
	T_ASSERT_EQ(do_openat(dirfd_, "", O_RDONLY, 0), -ENOENT);
	prep_openat(dirfd_, "f", O_RDONLY, 0)->buf_index = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_openat(dirfd_, "f", O_RDONLY, 0)->ioprio = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_openat(dirfd_, "f", O_RDONLY, 0)->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(run(), -EBADF);
	/* OPENAT does not check off (addr2). */
	prep_openat(dirfd_, "f", O_RDONLY, 0)->off = 7;
	fd = run();
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(do_close(fd), 0);

	/* file_index: the file is opened, then there is no table. */
	prep_openat(dirfd_, "f", O_RDONLY, 0)->file_index = 1;
	T_ASSERT_EQ(run(), -ENXIO);
	prep_openat(dirfd_, "f", O_RDONLY, 0)->file_index =
		IORING_FILE_INDEX_ALLOC;
	T_ASSERT_EQ(run(), -ENFILE);
	prep_openat(dirfd_, "f", O_RDONLY | O_CLOEXEC, 0)->file_index = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_openat(dirfd_, "slot", O_RDWR | O_CREAT, 0600)->file_index = 1;
	T_ASSERT_EQ(run(), -ENXIO);
	T_ASSERT_EQ(faccessat(dirfd_, "slot", F_OK, 0), 0);
	T_ASSERT_EQ(unlinkat(dirfd_, "slot", 0), 0);
	{
		struct open_how how = {O_RDONLY | O_CLOEXEC, 0, 0};

		sqe = prep_openat2(dirfd_, "f", &how, sizeof(how));
		sqe->file_index = 2;
		T_ASSERT_EQ(run(), -EINVAL);
	}
}

/* A FIFO: the cached first try opens with O_NONBLOCK, as the kernel. */
static void test_fifo(void)
{
	int fd, wfd;

	T_ASSERT_EQ(mkfifoat(dirfd_, "fifo", 0600), 0);
	/* Reading side without a writer: opens at once, left blocking. */
	fd = do_openat(dirfd_, "fifo", O_RDONLY, 0);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	/* Now there is a reader: a writer opens too. */
	wfd = do_openat(dirfd_, "fifo", O_WRONLY, 0);
	T_ASSERT_GE(wfd, 0);
	T_ASSERT_EQ(write(wfd, "p", 1), 1);
	T_ASSERT_EQ(do_close(wfd), 0);
	T_ASSERT_EQ(do_close(fd), 0);
	/* A writer without a reader, asked nonblocking: -ENXIO. */
	T_ASSERT_EQ(do_openat(dirfd_, "fifo", O_WRONLY | O_NONBLOCK, 0),
		    -ENXIO);
	T_ASSERT_EQ(unlinkat(dirfd_, "fifo", 0), 0);
}

static void test_close(void)
{
	struct io_uring_sqe *sqe;
	int fd, dup_ring;

	T_ASSERT_EQ(do_close(999), -EBADF);
	T_ASSERT_EQ(do_close(-1), -EBADF);
	/* The ring's own fd, or a dup of it: -EBADF, the ring lives on. */
	T_ASSERT_EQ(do_close(ring.fd), -EBADF);
	dup_ring = dup(ring.fd);
	T_ASSERT_GE(dup_ring, 0);
	T_ASSERT_EQ(do_close(dup_ring), -EBADF);
	T_ASSERT(fd_open(dup_ring));
	close(dup_ring);
	t_prep_nop(t_get_sqe(&ring), 5);
	T_ASSERT_EQ(t_submit_and_wait(&ring, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&ring, 5, 0), 0);

	fd = open("/dev/null", O_RDONLY);
	T_ASSERT_GE(fd, 0);
	prep_close(fd)->off = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_close(fd)->addr = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_close(fd)->len = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_close(fd)->rw_flags = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_close(fd)->buf_index = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_close(fd)->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(run(), -EBADF);
	prep_close(fd)->file_index = 1;
	T_ASSERT_EQ(run(), -EINVAL); /* both an fd and a slot */
	prep_close(0)->file_index = 1;
	T_ASSERT_EQ(run(), -ENXIO); /* no file table */
	T_ASSERT(fd_open(fd));
	/* An O_PATH fd closes like any other. */
	T_ASSERT_EQ(do_close(fd), 0);
	T_ASSERT(!fd_open(fd));
	fd = open(tmpdir, O_PATH);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(do_close(fd), 0);
	/* Async close. */
	fd = open("/dev/null", O_RDONLY);
	T_ASSERT_GE(fd, 0);
	prep_close(fd)->flags = IOSQE_ASYNC;
	T_ASSERT_EQ(run(), 0);
	T_ASSERT(!fd_open(fd));

	/* A failed close fails its link; a good one does not. */
	sqe = prep_close(999);
	sqe->flags = IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&ring), 2);
	T_ASSERT_EQ(t_submit_and_wait(&ring, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&ring, 1, -EBADF), 0);
	T_ASSERT_EQ(t_expect_cqe(&ring, 2, -ECANCELED), 0);
}

/* openat -> read -> close as one linked chain; a failed open cancels. */
static void test_chain(void)
{
	struct io_uring_sqe *sqe;
	char buf[8];
	int fd;

	/* The fd number the open will get is the lowest free one. */
	fd = lowest_free_fd();
	prep_openat(dirfd_, "f", O_RDONLY, 0)->flags = IOSQE_IO_LINK;
	sqe = t_get_sqe(&ring);
	t_prep_rw(sqe, IORING_OP_READ, fd, buf, 5, 0, 2);
	sqe->flags = IOSQE_IO_LINK;
	prep_close(fd)->user_data = 3;
	T_ASSERT_EQ(t_submit_and_wait(&ring, 3), 3);
	T_ASSERT_EQ(t_expect_cqe(&ring, 1, fd), 0);
	T_ASSERT_EQ(t_expect_cqe(&ring, 2, 5), 0);
	T_ASSERT_EQ(t_expect_cqe(&ring, 3, 0), 0);
	T_ASSERT_EQ(memcmp(buf, "hello", 5), 0);
	T_ASSERT(!fd_open(fd));

	prep_openat(dirfd_, "nope", O_RDONLY, 0)->flags = IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&ring), 2);
	T_ASSERT_EQ(t_submit_and_wait(&ring, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&ring, 1, -ENOENT), 0);
	T_ASSERT_EQ(t_expect_cqe(&ring, 2, -ECANCELED), 0);
}

/*
 * An fd number reused for another kind of file: a pipe read through the
 * ring (a stream: offsets ignored), closed through the ring, and the
 * number opened again on a regular file, where the offset counts.
 */
static void test_fd_reuse(void)
{
	struct io_uring_sqe *sqe;
	char buf[8];
	int p[2], fd;

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(write(p[1], "xy", 2), 2);
	sqe = t_get_sqe(&ring);
	t_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 3, 1);
	T_ASSERT_EQ(run(), 2);
	T_ASSERT_EQ(do_close(p[1]), 0);
	T_ASSERT_EQ(do_close(p[0]), 0);
	fd = do_openat(dirfd_, "f", O_RDONLY, 0);
	T_ASSERT_GE(fd, 0);
	if (fd != p[0]) { /* the number went elsewhere: nothing to check */
		T_ASSERT_EQ(do_close(fd), 0);
		return;
	}
	memset(buf, 0, sizeof(buf));
	sqe = t_get_sqe(&ring);
	t_prep_rw(sqe, IORING_OP_READ, fd, buf, sizeof(buf), 3, 1);
	T_ASSERT_EQ(run(), 2);
	T_ASSERT_EQ(memcmp(buf, "lo", 2), 0);
	T_ASSERT_EQ(do_close(fd), 0);
}

/* Many opens in one batch, the path buffers reused after submit. */
static void test_batch(void)
{
	struct io_uring_cqe cqe;
	char names[16][8];
	int fds[16], i, before, after;

	before = lowest_free_fd();
	for (i = 0; i < 16; i++) {
		snprintf(names[i], sizeof(names[i]), "b%d", i);
		prep_openat(dirfd_, names[i], O_RDWR | O_CREAT, 0600)
			->user_data = 100 + i;
	}
	T_ASSERT_EQ(t_submit(&ring), 16);
	memset(names, 0, sizeof(names));
	for (i = 0; i < 16; i++) {
		T_ASSERT_EQ(t_wait_cqe(&ring, &cqe), 0);
		T_ASSERT_GE(cqe.res, 0);
		fds[cqe.user_data - 100] = cqe.res;
	}
	for (i = 0; i < 16; i++)
		prep_close(fds[i])->user_data = 200 + i;
	T_ASSERT_EQ(t_submit(&ring), 16);
	for (i = 0; i < 16; i++) {
		T_ASSERT_EQ(t_wait_cqe(&ring, &cqe), 0);
		T_ASSERT_EQ(cqe.res, 0);
	}
	for (i = 0; i < 16; i++) {
		char name[8];

		snprintf(name, sizeof(name), "b%d", i);
		T_ASSERT_EQ(unlinkat(dirfd_, name, 0), 0);
	}
	/* No fd leaked along the way. */
	after = lowest_free_fd();
	T_ASSERT_EQ(after, before);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	umask(022);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/nowait-open.XXXXXX");
	T_ASSERT(mkdtemp(tmpdir) != NULL);
	dirfd_ = open(tmpdir, O_RDONLY | O_DIRECTORY);
	T_ASSERT_GE(dirfd_, 0);
	T_ASSERT_EQ(t_ring_init(&ring, 32, NULL), 0);
	test_openat();
	test_openat2();
	test_open_prep();
	test_fifo();
	test_close();
	test_chain();
	test_fd_reuse();
	test_batch();
	t_ring_exit(&ring);
	T_ASSERT_EQ(unlinkat(dirfd_, "f", 0), 0);
	close(dirfd_);
	T_ASSERT_EQ(rmdir(tmpdir), 0);
	return T_EXIT_PASS;
}
