/* SPDX-License-Identifier: MIT */
/*
 * READ, WRITE, READV, WRITEV on regular files: explicit offsets, offset -1
 * (the file position, IORING_FEAT_RW_CUR_POS), EOF, large reads complete in
 * full, IOSQE_ASYNC, and the errors of wrong fd modes and directories.
 * Semantics: io_uring/rw.c (io_kiocb_update_pos, short results retried on
 * regular files), fs/read_write.c rw_verify_area.
 */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <nowait.h>
#include "helpers.h"

static char tmpdir[64];

/* Submit one SQE already queued, wait for it, check ud and res. */
static void run_one(struct t_ring *r, uint64_t ud, int res)
{
	T_ASSERT_EQ(t_submit_and_wait(r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(r, ud, res), 0);
}

/* A fresh empty temp file opened O_RDWR (unlinked at once). */
static int temp_file(void)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/f.XXXXXX", tmpdir);
	fd = mkstemp(path);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(unlink(path), 0);
	return fd;
}

static void test_offsets(void)
{
	struct t_ring r;
	char buf[64];
	int fd = temp_file();

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	t_queue_rw(&r, IORING_OP_WRITE, fd, "hello world", 11, 0, 1);
	run_one(&r, 1, 11);
	t_queue_rw(&r, IORING_OP_WRITE, fd, "WORLD", 5, 6, 2);
	run_one(&r, 2, 5);
	/* A write past the end leaves a hole of zeros. */
	t_queue_rw(&r, IORING_OP_WRITE, fd, "end", 3, 20, 3);
	run_one(&r, 3, 3);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_END), 23);
	/* Explicit offsets do not move the file position. */
	T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 23);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);

	memset(buf, 'x', sizeof(buf));
	t_queue_rw(&r, IORING_OP_READ, fd, buf, 5, 6, 4);
	run_one(&r, 4, 5);
	T_ASSERT_EQ(memcmp(buf, "WORLD", 5), 0);
	t_queue_rw(&r, IORING_OP_READ, fd, buf, sizeof(buf), 0, 5);
	run_one(&r, 5, 23);
	T_ASSERT_EQ(memcmp(buf, "hello WORLD\0\0\0\0\0\0\0\0\0end", 23), 0);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 0);

	/* Read at or past EOF: 0. */
	t_queue_rw(&r, IORING_OP_READ, fd, buf, sizeof(buf), 23, 6);
	run_one(&r, 6, 0);
	t_queue_rw(&r, IORING_OP_READ, fd, buf, sizeof(buf), 1 << 20, 7);
	run_one(&r, 7, 0);
	/* Straddling EOF: the bytes up to EOF (a short read is final here). */
	t_queue_rw(&r, IORING_OP_READ, fd, buf, sizeof(buf), 20, 8);
	run_one(&r, 8, 3);
	T_ASSERT_EQ(memcmp(buf, "end", 3), 0);

	/* Negative offsets other than -1: -EINVAL. */
	t_queue_rw(&r, IORING_OP_READ, fd, buf, 4, (uint64_t)-2, 9);
	run_one(&r, 9, -EINVAL);
	t_queue_rw(&r, IORING_OP_WRITE, fd, "x", 1, (uint64_t)-100, 10);
	run_one(&r, 10, -EINVAL);
	/* Zero length at any offset: 0. */
	t_queue_rw(&r, IORING_OP_READ, fd, buf, 0, 5, 11);
	run_one(&r, 11, 0);
	t_ring_exit(&r);
	close(fd);
}

/* Offset -1 reads and writes at the file position and advances it. */
static void test_cur_pos(void)
{
	struct t_ring r;
	char buf[64];
	int fd = temp_file(), i;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	t_queue_rw(&r, IORING_OP_WRITE, fd, "abcd", 4, (uint64_t)-1, 1);
	run_one(&r, 1, 4);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 4);
	t_queue_rw(&r, IORING_OP_WRITE, fd, "efgh", 4, (uint64_t)-1, 2);
	run_one(&r, 2, 4);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 8);

	T_ASSERT_EQ(lseek(fd, 2, SEEK_SET), 2);
	t_queue_rw(&r, IORING_OP_READ, fd, buf, 3, (uint64_t)-1, 3);
	run_one(&r, 3, 3);
	T_ASSERT_EQ(memcmp(buf, "cde", 3), 0);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 5);

	/* A chain of linked reads at -1 reads consecutive pieces. */
	T_ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
	for (i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe =
			t_queue_rw(&r, IORING_OP_READ, fd, buf + 2 * i, 2,
				   (uint64_t)-1, 10 + i);

		if (i < 3)
			sqe->flags = IOSQE_IO_LINK;
	}
	T_ASSERT_EQ(t_submit_and_wait(&r, 4), 4);
	for (i = 0; i < 4; i++)
		T_ASSERT_EQ(t_expect_cqe(&r, 10 + i, 2), 0);
	T_ASSERT_EQ(memcmp(buf, "abcdefgh", 8), 0);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 8);

	/* At EOF: 0 and the position stays. */
	t_queue_rw(&r, IORING_OP_READ, fd, buf, 8, (uint64_t)-1, 20);
	run_one(&r, 20, 0);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 8);

	/* READV and WRITEV at -1 too. */
	{
		struct iovec iov[2] = {{(void *)"12", 2}, {(void *)"345", 3}};

		t_queue_rw(&r, IORING_OP_WRITEV, fd, iov, 2, (uint64_t)-1, 21);
		run_one(&r, 21, 5);
		T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 13);
		T_ASSERT_EQ(lseek(fd, 6, SEEK_SET), 6);
		iov[0].iov_base = buf;
		iov[1].iov_base = buf + 10;
		t_queue_rw(&r, IORING_OP_READV, fd, iov, 2, (uint64_t)-1, 22);
		run_one(&r, 22, 5);
		T_ASSERT_EQ(memcmp(buf, "gh", 2), 0);
		T_ASSERT_EQ(memcmp(buf + 10, "123", 3), 0);
		T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 11);
	}

	/* O_APPEND: writes at -1 and at an explicit offset both append. */
	{
		int afd;
		char path[128];

		snprintf(path, sizeof(path), "%s/append", tmpdir);
		afd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0600);
		T_ASSERT_GE(afd, 0);
		T_ASSERT_EQ(write(afd, "base", 4), 4);
		t_queue_rw(&r, IORING_OP_WRITE, afd, "-a", 2, (uint64_t)-1, 23);
		run_one(&r, 23, 2);
		t_queue_rw(&r, IORING_OP_WRITE, afd, "-b", 2, 0, 24);
		run_one(&r, 24, 2);
		T_ASSERT_EQ(pread(afd, buf, sizeof(buf), 0), 8);
		T_ASSERT_EQ(memcmp(buf, "base-a-b", 8), 0);
		close(afd);
		unlink(path);
	}
	t_ring_exit(&r);
	close(fd);
}

/* A 1 MiB read (and write) is complete: regular files never go short. */
static void test_large(void)
{
	const size_t sz = 1 << 20;
	char *wbuf = malloc(sz), *rbuf = malloc(sz);
	struct iovec iov[4];
	struct t_ring r;
	size_t i;
	int fd = temp_file();

	T_ASSERT(wbuf && rbuf);
	for (i = 0; i < sz; i++)
		wbuf[i] = (char)(i * 131 + (i >> 12));
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	t_queue_rw(&r, IORING_OP_WRITE, fd, wbuf, sz, 0, 1);
	run_one(&r, 1, (int)sz);
	t_queue_rw(&r, IORING_OP_READ, fd, rbuf, sz, 0, 2);
	run_one(&r, 2, (int)sz);
	T_ASSERT_EQ(memcmp(rbuf, wbuf, sz), 0);

	/* After dropping the page cache hint, through IOSQE_ASYNC too. */
	T_ASSERT_EQ(posix_fadvise(fd, 0, sz, POSIX_FADV_DONTNEED), 0);
	memset(rbuf, 0, sz);
	t_queue_rw(&r, IORING_OP_READ, fd, rbuf, sz, 0, 3)->flags = IOSQE_ASYNC;
	run_one(&r, 3, (int)sz);
	T_ASSERT_EQ(memcmp(rbuf, wbuf, sz), 0);

	/* READV of 4 x 256 KiB at offset 4096: the file has sz - 4096 left. */
	memset(rbuf, 0, sz);
	for (i = 0; i < 4; i++) {
		iov[i].iov_base = rbuf + i * (sz / 4);
		iov[i].iov_len = sz / 4;
	}
	t_queue_rw(&r, IORING_OP_READV, fd, iov, 4, 4096, 4);
	run_one(&r, 4, (int)(sz - 4096));
	T_ASSERT_EQ(memcmp(rbuf, wbuf + 4096, sz - 4096), 0);
	t_ring_exit(&r);
	close(fd);
	free(wbuf);
	free(rbuf);
}

static void test_vectored(void)
{
	char a[4], b[6], c[10];
	struct iovec wiov[3] = {{(void *)"0123", 4},
				{(void *)"456789", 6},
				{(void *)"abcdefghij", 10}};
	struct iovec riov[3] = {{c, 10}, {a, 4}, {b, 6}};
	struct t_ring r;
	int fd = temp_file();

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	t_queue_rw(&r, IORING_OP_WRITEV, fd, wiov, 3, 100, 1);
	run_one(&r, 1, 20);
	t_queue_rw(&r, IORING_OP_READV, fd, riov, 3, 100, 2);
	run_one(&r, 2, 20);
	T_ASSERT_EQ(memcmp(c, "0123456789", 10), 0);
	T_ASSERT_EQ(memcmp(a, "abcd", 4), 0);
	T_ASSERT_EQ(memcmp(b, "efghij", 6), 0);
	/* The iovec array is copied at submit: clobbering it after is fine. */
	t_queue_rw(&r, IORING_OP_READV, fd, riov, 3, 104, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	memset(riov, 0, sizeof(riov));
	T_ASSERT_EQ(t_expect_cqe(&r, 3, 16), 0);
	T_ASSERT_EQ(memcmp(c, "456789abcd", 10), 0);
	T_ASSERT_EQ(memcmp(a, "efgh", 4), 0);
	T_ASSERT_EQ(memcmp(b, "ij", 2), 0);
	t_ring_exit(&r);
	close(fd);
}

/* IOSQE_ASYNC reads and writes go through a worker and complete alike. */
static void test_async(void)
{
	struct io_uring_cqe cqe;
	struct t_ring r;
	char bufs[8][8];
	int fd = temp_file(), i;
	unsigned int seen = 0;

	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	T_ASSERT_EQ(pwrite(fd, "0123456789abcdef", 16, 0), 16);
	t_queue_rw(&r, IORING_OP_WRITE, fd, "ASYNC", 5, 16, 1)->flags =
		IOSQE_ASYNC;
	run_one(&r, 1, 5);
	for (i = 0; i < 8; i++)
		t_queue_rw(&r, IORING_OP_READ, fd, bufs[i], 2, 2 * i, 10 + i)
			->flags = IOSQE_ASYNC;
	T_ASSERT_EQ(t_submit_and_wait(&r, 8), 8);
	for (i = 0; i < 8; i++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_GE(cqe.user_data, 10);
		T_ASSERT_LT(cqe.user_data, 18);
		seen |= 1U << (cqe.user_data - 10);
		T_ASSERT_EQ(cqe.res, 2);
		T_ASSERT_EQ(cqe.flags, 0);
	}
	T_ASSERT_EQ(seen, 0xff);
	for (i = 0; i < 8; i++)
		T_ASSERT_EQ(memcmp(bufs[i], "0123456789abcdef" + 2 * i, 2), 0);
	/* Async at -1 on the file position. */
	T_ASSERT_EQ(lseek(fd, 16, SEEK_SET), 16);
	t_queue_rw(&r, IORING_OP_READ, fd, bufs[0], 8, (uint64_t)-1, 20)
		->flags = IOSQE_ASYNC;
	run_one(&r, 20, 5);
	T_ASSERT_EQ(memcmp(bufs[0], "ASYNC", 5), 0);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 21);
	/* An async EFAULT is still a CQE, not a crash. */
	t_queue_rw(&r, IORING_OP_READ, fd, (void *)8, 4, 0, 21)->flags =
		IOSQE_ASYNC;
	run_one(&r, 21, -EFAULT);
	t_ring_exit(&r);
	close(fd);
}

/* Wrong fd modes, directories, bad fds and buffers. */
static void test_errors(void)
{
	struct t_ring r;
	char buf[16], path[128];
	int rfd, wfd, dfd;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	snprintf(path, sizeof(path), "%s/ro", tmpdir);
	wfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	T_ASSERT_GE(wfd, 0);
	T_ASSERT_EQ(write(wfd, "readonly", 8), 8);
	rfd = open(path, O_RDONLY);
	T_ASSERT_GE(rfd, 0);

	t_queue_rw(&r, IORING_OP_WRITE, rfd, "x", 1, 0, 1);
	run_one(&r, 1, -EBADF);
	t_queue_rw(&r, IORING_OP_READ, wfd, buf, sizeof(buf), 0, 2);
	run_one(&r, 2, -EBADF);
	{
		struct iovec iov = {buf, sizeof(buf)};

		t_queue_rw(&r, IORING_OP_WRITEV, rfd, &iov, 1, 0, 3);
		run_one(&r, 3, -EBADF);
		t_queue_rw(&r, IORING_OP_READV, wfd, &iov, 1, 0, 4);
		run_one(&r, 4, -EBADF);
	}
	t_queue_rw(&r, IORING_OP_READ, rfd, buf, sizeof(buf), 0, 5);
	run_one(&r, 5, 8);

	dfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	T_ASSERT_GE(dfd, 0);
	t_queue_rw(&r, IORING_OP_READ, dfd, buf, sizeof(buf), 0, 6);
	run_one(&r, 6, -EISDIR);
	t_queue_rw(&r, IORING_OP_READ, dfd, buf, sizeof(buf), (uint64_t)-1, 7);
	run_one(&r, 7, -EISDIR);
	/* An O_PATH fd has no read: -EBADF. */
	{
		int pfd = open(path, O_PATH);

		T_ASSERT_GE(pfd, 0);
		t_queue_rw(&r, IORING_OP_READ, pfd, buf, sizeof(buf), 0, 8);
		run_one(&r, 8, -EBADF);
		close(pfd);
	}
	/* A closed fd. */
	t_queue_rw(&r, IORING_OP_READ, 4000, buf, sizeof(buf), 0, 9);
	run_one(&r, 9, -EBADF);
	/* Bad buffers: -EFAULT, file unchanged. */
	t_queue_rw(&r, IORING_OP_READ, rfd, (void *)8, 4, 0, 10);
	run_one(&r, 10, -EFAULT);
	t_queue_rw(&r, IORING_OP_WRITE, wfd, (void *)8, 4, 0, 11);
	run_one(&r, 11, -EFAULT);
	T_ASSERT_EQ(pread(rfd, buf, sizeof(buf), 0), 8);
	T_ASSERT_EQ(memcmp(buf, "readonly", 8), 0);

	close(dfd);
	close(rfd);
	close(wfd);
	unlink(path);
	t_ring_exit(&r);
}

/* Writes then reads in one batch, unlinked, see each other's data. */
static void test_link_order(void)
{
	struct t_ring r;
	char buf[8];
	int fd = temp_file();

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	t_queue_rw(&r, IORING_OP_WRITE, fd, "linked", 6, 0, 1)->flags =
		IOSQE_IO_LINK;
	t_queue_rw(&r, IORING_OP_READ, fd, buf, 6, 0, 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 6), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 6), 0);
	T_ASSERT_EQ(memcmp(buf, "linked", 6), 0);
	t_ring_exit(&r);
	close(fd);
}

/*
 * A temp file holding data (len, a multiple of 4), read 4 bytes at a time
 * at each offset in full (user_data 0, 1...): the engine learns it is a
 * regular file. Returns it.
 */
static int file_read_at_offsets(struct t_ring *r, const char *data, size_t len)
{
	char buf[4];
	int fd = temp_file();

	T_ASSERT_EQ(pwrite(fd, data, len, 0), (ssize_t)len);
	for (size_t i = 0; i < len / 4; i++) {
		t_queue_rw(r, IORING_OP_READ, fd, buf, 4, i * 4, i);
		run_one(r, i, 4);
		T_ASSERT_EQ(memcmp(buf, data + i * 4, 4), 0);
	}
	return fd;
}

/*
 * A file read at offsets again and again (the engine then knows it is a
 * regular file), closed with IORING_OP_CLOSE, its number taken by a pipe:
 * a READ at offset 0 on that number is a pipe read (the offset ignored),
 * parked while the pipe is empty, its data once written; and the file
 * kind comes back for a file on the number after the pipe goes.
 */
static void test_number_reused(void)
{
	char buf[16], data[16] = "0123456789abcde";
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int fd, p[2], i;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	fd = file_read_at_offsets(&r, data, sizeof(data));
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	sqe->opcode = IORING_OP_CLOSE;
	sqe->fd = fd;
	sqe->user_data = 10;
	run_one(&r, 10, 0);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(p[0], fd); /* the lowest free number */
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 11);
	t_expect_read_parked(&r, 11, p[1], "pipe", buf, 20);
	close(p[1]);
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	sqe->opcode = IORING_OP_CLOSE;
	sqe->fd = p[0];
	sqe->user_data = 12;
	run_one(&r, 12, 0);
	T_ASSERT_EQ(temp_file(), fd);
	T_ASSERT_EQ(pwrite(fd, data, sizeof(data), 0), (ssize_t)sizeof(data));
	for (i = 0; i < 4; i++) {
		/* a short read of a file continues to the end: 8 of 10 */
		t_queue_rw(&r, IORING_OP_READ, fd, buf, 10, 8, 20 + i);
		run_one(&r, 20 + i, 8);
		T_ASSERT_EQ(memcmp(buf, data + 8, 8), 0);
	}
	close(fd);
	t_ring_exit(&r);
}

/*
 * The same number reused behind the engine's back (a plain close, no
 * hook): a file read at offsets in full (the engine's file hint set),
 * then a pipe on the number. READ at offset 0 there is a pipe read: it
 * waits while the pipe is empty, and a short one is not continued. Then
 * a socket on the number; then a file again, read at its offsets, once
 * the engine is told of the socket's close (nowait_fd_closing, the
 * library's contract: it keeps what it learnt of the number till then).
 */
static void test_number_reused_unseen(void)
{
	char buf[16], data[16] = "0123456789abcde";
	struct t_ring r;
	int fd, p[2], s[2], i;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	fd = file_read_at_offsets(&r, data, sizeof(data));
	close(fd);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(p[0], fd); /* the lowest free number */
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 11);
	t_expect_read_parked(&r, 11, p[1], "pipe", buf, 20);
	T_ASSERT_EQ(write(p[1], "abcdef", 6), 6);
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 12);
	run_one(&r, 12, 6); /* short: a pipe read is not continued */
	T_ASSERT_EQ(memcmp(buf, "abcdef", 6), 0);
	close(p[0]);
	close(p[1]);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(s[0], fd);
	T_ASSERT_EQ(write(s[1], "sock", 4), 4);
	t_queue_rw(&r, IORING_OP_READ, s[0], buf, sizeof(buf), 0, 13);
	run_one(&r, 13, 4);
	T_ASSERT_EQ(memcmp(buf, "sock", 4), 0);
	if (t_engine() == T_ENGINE_USER)
		nowait_fd_closing(s[0]);
	close(s[0]);
	close(s[1]);
	T_ASSERT_EQ(temp_file(), fd);
	T_ASSERT_EQ(pwrite(fd, data, sizeof(data), 0), (ssize_t)sizeof(data));
	for (i = 0; i < 3; i++) {
		t_queue_rw(&r, IORING_OP_READ, fd, buf, 4, 12 - (uint64_t)i * 4,
			   20 + i);
		run_one(&r, 20 + i, 4);
		T_ASSERT_EQ(memcmp(buf, data + 12 - i * 4, 4), 0);
	}
	t_queue_rw(&r, IORING_OP_READ, fd, buf, 10, 8, 24);
	run_one(&r, 24, 8); /* a short read of a file continues to EOF */
	T_ASSERT_EQ(memcmp(buf, data + 8, 8), 0);
	close(fd);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/nowait-rw-file.XXXXXX");
	T_ASSERT(mkdtemp(tmpdir) != NULL);
	test_offsets();
	test_cur_pos();
	test_large();
	test_vectored();
	test_async();
	test_errors();
	test_link_order();
	test_number_reused();
	test_number_reused_unseen();
	rmdir(tmpdir);
	return T_EXIT_PASS;
}
