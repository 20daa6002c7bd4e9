/* SPDX-License-Identifier: MIT */
/*
 * READ, WRITE, READV, WRITEV on anonymous pipes: nowait-first issue, parking
 * on readiness and completion when the peer acts, short results, EOF, EPIPE
 * (and whether SIGPIPE is raised), RWF_NOWAIT, O_NONBLOCK, the ignored
 * offset, bad fds and buffers, many parked reads, reads racing writes.
 * Semantics: io_uring/rw.c, fs/pipe.c (FMODE_NOWAIT on pipes, >= 6.4).
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>
#include "helpers.h"

static volatile sig_atomic_t sigpipe_count;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipe_count++;
}

static int pipe_bytes(int fd)
{
	int n = -1;

	T_ASSERT_EQ(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

/* A read on an empty pipe parks; the test writes after submitting. */
static void test_read_parks(void)
{
	struct t_ring r;
	char buf[64];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	memset(buf, 0, sizeof(buf));
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1);
	t_expect_read_parked(&r, 1, p[1], "hello", buf, 50);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* A parked read completes when another thread writes (test in GETEVENTS). */
static void test_read_other_thread(void)
{
	static const char msg[] = "from another thread";
	struct t_writer w;
	struct t_ring r;
	char buf[64];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	memset(buf, 0, sizeof(buf));
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 7);
	t_writer_start(&w, p[1], msg, sizeof(msg), 20000);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 7, sizeof(msg)), 0);
	T_ASSERT_EQ(memcmp(buf, msg, sizeof(msg)), 0);
	T_ASSERT_EQ(t_writer_join(&w), sizeof(msg));
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* Data already there: the read completes before submit returns. */
static void test_read_inline(void)
{
	struct t_ring r;
	char buf[16];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(write(p[1], "0123456789abcdef", 16), 16);
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 16), 0);
	T_ASSERT_EQ(memcmp(buf, "0123456789abcdef", 16), 0);

	/* The write side too: a write with room completes inline. */
	t_queue_rw(&r, IORING_OP_WRITE, p[1], "xyz", 3, 0, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, 3), 0);
	T_ASSERT_EQ(pipe_bytes(p[0]), 3);

	/* A zero-length read of an empty pipe completes at once with 0. */
	T_ASSERT_EQ(read(p[0], buf, 3), 3);
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, 0, 0, 4);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 4, 0), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* Asking 100 with 16 available gives 16: a short read on a pipe is final. */
static void test_short_read(void)
{
	struct t_ring r;
	char buf[100];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(write(p[1], "0123456789abcdef", 16), 16);
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 16), 0);
	T_ASSERT_EQ(memcmp(buf, "0123456789abcdef", 16), 0);

	/* Parked, then 16 arrive: also 16, not a wait for 100. */
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(p[1], "fedcba9876543210", 16), 16);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 16), 0);
	T_ASSERT_EQ(memcmp(buf, "fedcba9876543210", 16), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* EOF: the write end closed, before the read and while it is parked. */
static void test_eof(void)
{
	struct t_ring r;
	char buf[32];
	int p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);

	T_ASSERT_EQ(pipe(p), 0);
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	close(p[1]);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 0), 0);
	close(p[0]);

	/* Data then EOF: the data first, then 0. */
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(write(p[1], "abc", 3), 3);
	close(p[1]);
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 3), 0);
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 3);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, 0), 0);
	close(p[0]);
	t_ring_exit(&r);
}

/*
 * A write to a pipe without a reader fails with -EPIPE. pipe_write raises
 * SIGPIPE on the task that runs it: inline that is the submitter.
 */
static void test_epipe(void)
{
	struct sigaction sa, old;
	struct t_ring r;
	int p[2];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigpipe;
	T_ASSERT_EQ(sigaction(SIGPIPE, &sa, &old), 0);
	sigpipe_count = 0;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	close(p[0]);
	t_queue_rw(&r, IORING_OP_WRITE, p[1], "data", 4, 0, 1);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -EPIPE), 0);
	/* The kernel's inline write raises SIGPIPE on the submitter. */
	T_ASSERT_EQ(sigpipe_count, 1);

	/* WRITEV too. */
	{
		struct iovec iov[2] = {{(void *)"ab", 2}, {(void *)"cd", 2}};

		t_queue_rw(&r, IORING_OP_WRITEV, p[1], iov, 2, 0, 2);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 2, -EPIPE), 0);
		T_ASSERT_EQ(sigpipe_count, 2);
	}
	close(p[1]);

	/*
	 * A write parked on a full pipe whose reader then goes away: -EPIPE
	 * from the retry.
	 */
	{
		static char big[65536];
		int sz;

		T_ASSERT_EQ(pipe(p), 0);
		sz = fcntl(p[1], F_GETPIPE_SZ);
		T_ASSERT_GT(sz, 0);
		T_ASSERT_LE(sz, (int)sizeof(big));
		T_ASSERT_EQ(write(p[1], big, sz), sz);
		sigpipe_count = 0;
		t_queue_rw(&r, IORING_OP_WRITE, p[1], "x", 1, 0, 3);
		T_ASSERT_EQ(t_submit(&r), 1);
		t_expect_no_cqe(&r, 20);
		close(p[0]);
		T_ASSERT_EQ(t_expect_cqe(&r, 3, -EPIPE), 0);
		/* The retry runs as task_work on the submitter: SIGPIPE. */
		T_ASSERT_EQ(sigpipe_count, 1);
		close(p[1]);
	}

	t_ring_exit(&r);
	T_ASSERT_EQ(sigaction(SIGPIPE, &old, NULL), 0);
}

/*
 * A write larger than the free space: since 6.4 the nonblocking attempt
 * writes what fits and the CQE reports that short count.
 */
static void test_write_short(void)
{
	static char big[65536 + 16384], out[65536];
	struct t_ring r;
	int p[2], sz, i, res;
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	sz = fcntl(p[1], F_GETPIPE_SZ);
	T_ASSERT_EQ(sz, 65536);
	for (i = 0; i < (int)sizeof(big); i++)
		big[i] = (char)(i * 7 + 3);
	T_ASSERT_EQ(write(p[1], big, 60000), 60000);
	t_queue_rw(&r, IORING_OP_WRITE, p[1], big + 60000, 16384, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	res = cqe.res;
	T_ASSERT_EQ(cqe.user_data, 1);
	/*
	 * pipe_write merges only len % PAGE_SIZE (0 here) into the partly
	 * filled last page, so one free slot of 16 takes one page: 4096.
	 */
	T_ASSERT_EQ(res, 4096);
	T_ASSERT_EQ(pipe_bytes(p[0]), 60000 + 4096);
	T_ASSERT_EQ(read(p[0], out, sz), 60000 + 4096);
	T_ASSERT_EQ(memcmp(out, big, 60000 + 4096), 0);

	/* A full pipe: the write parks and completes in full once drained. */
	T_ASSERT_EQ(write(p[1], big, sz), sz);
	t_queue_rw(&r, IORING_OP_WRITE, p[1], "tail", 4, 0, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(read(p[0], out, 4096), 4096);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 4), 0);
	T_ASSERT_EQ(pipe_bytes(p[0]), sz - 4096 + 4);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* RWF_NOWAIT makes -EAGAIN final: the CQE carries it. */
static void test_rwf_nowait(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	char buf[16];
	int p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	sqe = t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1);
	sqe->rw_flags = RWF_NOWAIT;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -EAGAIN), 0);

	/* With data it reads. */
	T_ASSERT_EQ(write(p[1], "ab", 2), 2);
	sqe = t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 2);
	sqe->rw_flags = RWF_NOWAIT;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 2), 0);

	/* READV with RWF_NOWAIT, and IOSQE_ASYNC does not make it wait. */
	{
		struct iovec iov = {buf, sizeof(buf)};

		sqe = t_queue_rw(&r, IORING_OP_READV, p[0], &iov, 1, 0, 3);
		sqe->rw_flags = RWF_NOWAIT;
		sqe = t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0,
				 4);
		sqe->rw_flags = RWF_NOWAIT;
		sqe->flags = IOSQE_ASYNC;
		T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
		{
			struct io_uring_cqe cqe;
			int i, seen = 0;

			for (i = 0; i < 2; i++) {
				T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
				T_ASSERT(cqe.user_data == 3 ||
					 cqe.user_data == 4);
				seen |= 1 << (cqe.user_data - 3);
				T_ASSERT_EQ(cqe.res, -EAGAIN);
			}
			T_ASSERT_EQ(seen, 3);
		}
	}

	/* A write with RWF_NOWAIT on a full pipe: -EAGAIN. */
	{
		static char big[65536];
		int sz = fcntl(p[1], F_GETPIPE_SZ);

		T_ASSERT_EQ(write(p[1], big, sz), sz);
		sqe = t_queue_rw(&r, IORING_OP_WRITE, p[1], "x", 1, 0, 5);
		sqe->rw_flags = RWF_NOWAIT;
		T_ASSERT_EQ(t_submit(&r), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 5, -EAGAIN), 0);
	}

	/* Unknown rw_flags bits: -EOPNOTSUPP from kiocb_set_rw_flags. */
	sqe = t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 6);
	sqe->rw_flags = 0x80000000U;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 6, -EOPNOTSUPP), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* O_NONBLOCK pipes are poll-retried (since 5.15), not failed -EAGAIN. */
static void test_nonblock_fd(void)
{
	struct t_ring r;
	char buf[16];
	int p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe2(p, O_NONBLOCK), 0);
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	T_ASSERT_EQ(write(p[1], "nb", 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 2), 0);
	T_ASSERT_EQ(memcmp(buf, "nb", 2), 0);
	/* The file's O_NONBLOCK flag is left alone. */
	T_ASSERT(fcntl(p[0], F_GETFL) & O_NONBLOCK);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* A blocking pipe stays blocking for the program: no O_NONBLOCK appears. */
static void test_flags_untouched(void)
{
	struct t_ring r;
	char buf[16];
	int p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 10);
	T_ASSERT_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0);
	T_ASSERT_EQ(fcntl(p[1], F_GETFL) & O_NONBLOCK, 0);
	T_ASSERT_EQ(write(p[1], "z", 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 1), 0);
	T_ASSERT_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* Pipes are streams: the SQE offset is ignored, whatever it is. */
static void test_offset_ignored(void)
{
	struct t_ring r;
	char buf[16];
	int p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	t_queue_rw(&r, IORING_OP_WRITE, p[1], "offs", 4, 12345, 1);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 4), 0);
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, 2, 12345, 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 2), 0);
	T_ASSERT_EQ(memcmp(buf, "of", 2), 0);
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, 2, (uint64_t)-1, 3);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, 2), 0);
	T_ASSERT_EQ(memcmp(buf, "fs", 2), 0);
	/*
	 * But a negative offset other than -1 is not: rw_verify_area checks
	 * the position before the stream ignores it: -EINVAL, nothing written.
	 */
	t_queue_rw(&r, IORING_OP_WRITE, p[1], "n", 1, (uint64_t)-5, 4);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 4, -EINVAL), 0);
	T_ASSERT_EQ(pipe_bytes(p[0]), 0);
	/* Parked with an offset, then written. */
	t_queue_rw(&r, IORING_OP_READ, p[0], buf, 4, 777, 5);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 10);
	T_ASSERT_EQ(write(p[1], "late", 4), 4);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, 4), 0);
	T_ASSERT_EQ(memcmp(buf, "late", 4), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* READV/WRITEV scatter and gather across several iovecs. */
static void test_vectored(void)
{
	char a[3], b[5], c[8], d[1];
	struct iovec wiov[3] = {{(void *)"abc", 3},
				{(void *)"", 0},
				{(void *)"defghijklmno", 12}};
	struct iovec riov[4] = {{a, 3}, {b, 5}, {c, 8}, {d, 1}};
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	t_queue_rw(&r, IORING_OP_WRITEV, p[1], wiov, 3, 0, 1);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 15), 0);
	t_queue_rw(&r, IORING_OP_READV, p[0], riov, 4, 0, 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 15), 0);
	T_ASSERT_EQ(memcmp(a, "abc", 3), 0);
	T_ASSERT_EQ(memcmp(b, "defgh", 5), 0);
	T_ASSERT_EQ(memcmp(c, "ijklmno", 7), 0);

	/* A parked READV; the iovec array may be reused after submit. */
	{
		struct iovec tmp[2] = {{a, 2}, {b, 3}};

		t_queue_rw(&r, IORING_OP_READV, p[0], tmp, 2, 0, 3);
		T_ASSERT_EQ(t_submit(&r), 1);
		memset(tmp, 0, sizeof(tmp));
		t_expect_no_cqe(&r, 10);
		T_ASSERT_EQ(write(p[1], "VWXYZ", 5), 5);
		T_ASSERT_EQ(t_expect_cqe(&r, 3, 5), 0);
		T_ASSERT_EQ(memcmp(a, "VW", 2), 0);
		T_ASSERT_EQ(memcmp(b, "XYZ", 3), 0);
	}

	/* Zero iovecs: 0. Too many (> UIO_MAXIOV): -EINVAL. */
	t_queue_rw(&r, IORING_OP_WRITEV, p[1], wiov, 0, 0, 4);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 4, 0), 0);
	t_queue_rw(&r, IORING_OP_WRITEV, p[1], wiov, 1025, 0, 5);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, -EINVAL), 0);
	/* An unmapped iovec array: -EFAULT. */
	t_queue_rw(&r, IORING_OP_READV, p[0], (void *)8, 2, 0, 6);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 6, -EFAULT), 0);
	T_ASSERT_EQ(pipe_bytes(p[0]), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* Bad fds and bad buffers fail in the CQE, never crash. */
static void test_bad_input(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	char buf[8];
	int p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	t_queue_rw(&r, IORING_OP_READ, -1, buf, sizeof(buf), 0, 1);
	t_queue_rw(&r, IORING_OP_WRITE, 9999, buf, sizeof(buf), 0, 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -EBADF), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, -EBADF), 0);

	/* Read end written, write end read. */
	t_queue_rw(&r, IORING_OP_WRITE, p[0], "x", 1, 0, 3);
	t_queue_rw(&r, IORING_OP_READ, p[1], buf, sizeof(buf), 0, 4);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, -EBADF), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 4, -EBADF), 0);

	/* A bad destination with data present: -EFAULT. */
	T_ASSERT_EQ(write(p[1], "data", 4), 4);
	t_queue_rw(&r, IORING_OP_READ, p[0], (void *)8, 4, 0, 5);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, -EFAULT), 0);
	/* pipe_read keeps the bytes a failed copy did not take. */
	T_ASSERT_EQ(pipe_bytes(p[0]), 4);

	/* A bad source: -EFAULT, nothing written. */
	T_ASSERT_EQ(read(p[0], buf, 4), 4);
	t_queue_rw(&r, IORING_OP_WRITE, p[1], (void *)8, 4, 0, 6);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 6, -EFAULT), 0);
	T_ASSERT_EQ(pipe_bytes(p[0]), 0);

	/* A bad destination on a parked read: -EFAULT when data arrives. */
	t_queue_rw(&r, IORING_OP_READ, p[0], (void *)8, 4, 0, 7);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 10);
	T_ASSERT_EQ(write(p[1], "more", 4), 4);
	T_ASSERT_EQ(t_expect_cqe(&r, 7, -EFAULT), 0);
	T_ASSERT_EQ(pipe_bytes(p[0]), 4);

	/* A fixed-file READ with no registered files: -EBADF. */
	sqe = t_queue_rw(&r, IORING_OP_READ, 0, buf, sizeof(buf), 0, 8);
	sqe->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 8, -EBADF), 0);

	/* buf_index means nothing to a plain READ: it reads. */
	sqe = t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 9);
	sqe->buf_index = 1;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 9, 4), 0);
	T_ASSERT_EQ(memcmp(buf, "more", 4), 0);

	/* An invalid ioprio class (7): -EINVAL from ioprio_check_cap. */
	T_ASSERT_EQ(write(p[1], "prio", 4), 4);
	sqe = t_queue_rw(&r, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 10);
	sqe->ioprio = 7 << 13;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 10, -EINVAL), 0);
	T_ASSERT_EQ(pipe_bytes(p[0]), 4);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

#define NPIPES 64

/* 64 reads parked at once, written in reverse order. */
static void test_many_pipes(void)
{
	static char bufs[NPIPES][16];
	int pipes[NPIPES][2];
	struct io_uring_cqe cqe;
	struct t_ring r;
	unsigned int seen[NPIPES] = {0};
	int i;

	T_ASSERT_EQ(t_ring_init(&r, NPIPES, NULL), 0);
	for (i = 0; i < NPIPES; i++) {
		T_ASSERT_EQ(pipe(pipes[i]), 0);
		t_queue_rw(&r, IORING_OP_READ, pipes[i][0], bufs[i],
			   sizeof(bufs[i]), 0, 1000 + i);
	}
	T_ASSERT_EQ(t_submit(&r), NPIPES);
	t_expect_no_cqe(&r, 20);
	for (i = NPIPES - 1; i >= 0; i--) {
		char msg[16];

		snprintf(msg, sizeof(msg), "pipe-%03d", i);
		T_ASSERT_EQ(write(pipes[i][1], msg, 8), 8);
	}
	for (i = 0; i < NPIPES; i++) {
		char msg[16];
		int k;

		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_GE(cqe.user_data, 1000);
		T_ASSERT_LT(cqe.user_data, 1000 + NPIPES);
		k = cqe.user_data - 1000;
		T_ASSERT_EQ(seen[k], 0);
		seen[k] = 1;
		T_ASSERT_EQ(cqe.res, 8);
		T_ASSERT_EQ(cqe.flags, 0);
		snprintf(msg, sizeof(msg), "pipe-%03d", k);
		T_ASSERT_EQ(memcmp(bufs[k], msg, 8), 0);
	}
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	for (i = 0; i < NPIPES; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	t_ring_exit(&r);
}

/*
 * More parked reads than one harvest takes (NW_LOOP_BATCH, 64), on a
 * DEFER_TASKRUN ring: one GETEVENTS for all of them gets every CQE, each
 * read its own pipe's data, round after round (stale edges included).
 */
#define NDEFER 200

static void test_many_pipes_defer(void)
{
	static char bufs[NDEFER][16];
	struct io_uring_params p = {
		.flags =
			IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	};
	static int pipes[NDEFER][2];
	struct io_uring_cqe cqe;
	struct t_ring r;
	int i, round, ret;

	ret = t_ring_init(&r, 256, &p);
	if (ret == -EINVAL)
		return; /* a kernel before 6.1 */
	T_ASSERT_EQ(ret, 0);
	for (i = 0; i < NDEFER; i++)
		if (pipe(pipes[i])) {
			T_ASSERT_EQ(errno, EMFILE); /* a small RLIMIT_NOFILE */
			printf("many_pipes_defer: %d pipes only\n", i);
			break;
		}
	for (round = 0; round < 3 && i == NDEFER; round++) {
		unsigned char seen[NDEFER] = {0};
		int k;

		for (k = 0; k < NDEFER; k++)
			t_queue_rw(&r, IORING_OP_READ, pipes[k][0], bufs[k],
				   sizeof(bufs[k]), 0, k);
		T_ASSERT_EQ(t_submit(&r), NDEFER);
		for (k = 0; k < NDEFER; k++) {
			char msg[16];

			snprintf(msg, sizeof(msg), "r%d-p%03d", round, k);
			T_ASSERT_EQ(write(pipes[k][1], msg, 8), 8);
		}
		T_ASSERT_EQ(t_enter(r.fd, 0, NDEFER, IORING_ENTER_GETEVENTS,
				    NULL, 0),
			    0);
		T_ASSERT_EQ(t_cq_ready(&r), NDEFER);
		for (k = 0; k < NDEFER; k++) {
			char msg[16];
			unsigned int u;

			T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
			u = (unsigned int)cqe.user_data;
			T_ASSERT_LT(u, NDEFER);
			T_ASSERT_EQ(seen[u], 0);
			seen[u] = 1;
			T_ASSERT_EQ(cqe.res, 8);
			snprintf(msg, sizeof(msg), "r%d-p%03d", round, u);
			T_ASSERT_EQ(memcmp(bufs[u], msg, 8), 0);
		}
		T_ASSERT_EQ(t_cq_ready(&r), 0);
	}
	while (i-- > 0) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	t_ring_exit(&r);
}

/* Several reads parked on one pipe each get a distinct part of the data. */
static void test_same_pipe_readers(void)
{
	char bufs[8][4];
	struct io_uring_cqe cqe;
	struct t_ring r;
	unsigned int seen = 0, got = 0;
	int p[2], i;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	for (i = 0; i < 8; i++)
		t_queue_rw(&r, IORING_OP_READ, p[0], bufs[i], 4, 0, i);
	T_ASSERT_EQ(t_submit(&r), 8);
	t_expect_no_cqe(&r, 10);
	for (i = 0; i < 8; i++) {
		char msg[4] = {'m', (char)('0' + i), 'x', 'y'};

		T_ASSERT_EQ(write(p[1], msg, 4), 4);
	}
	for (i = 0; i < 8; i++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_LT(cqe.user_data, 8);
		T_ASSERT_EQ(seen & (1U << cqe.user_data), 0);
		seen |= 1U << cqe.user_data;
		T_ASSERT_EQ(cqe.res, 4);
		T_ASSERT_EQ(bufs[cqe.user_data][0], 'm');
		got |= 1U << (bufs[cqe.user_data][1] - '0');
	}
	T_ASSERT_EQ(seen, 0xff);
	T_ASSERT_EQ(got, 0xff);
	T_ASSERT_EQ(pipe_bytes(p[0]), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

struct racer {
	int fd;
	int rounds;
};

static void *race_writer(void *arg)
{
	struct racer *rc = arg;
	uint32_t i;

	for (i = 0; i < (uint32_t)rc->rounds; i++) {
		if (i % 3 == 0)
			sched_yield();
		else if (i % 3 == 1)
			usleep(i % 50);
		if (write(rc->fd, &i, sizeof(i)) != sizeof(i))
			abort();
	}
	return NULL;
}

/* 1000 rounds of a read racing a write from another thread. */
static void test_race(void)
{
	struct io_uring_cqe cqe;
	struct racer rc;
	struct t_ring r;
	pthread_t th;
	uint32_t val, i;
	int p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	rc.fd = p[1];
	rc.rounds = 1000;
	T_ASSERT_EQ(pthread_create(&th, NULL, race_writer, &rc), 0);
	for (i = 0; i < 1000; i++) {
		val = ~0U;
		t_queue_rw(&r, IORING_OP_READ, p[0], &val, sizeof(val), 0, i);
		if (i % 2)
			T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		else
			T_ASSERT_EQ(t_submit(&r), 1);
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, i);
		T_ASSERT_EQ(cqe.res, sizeof(val));
		T_ASSERT_EQ(val, i);
	}
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

struct drainer {
	int fd;
	size_t total;
};

static void *race_reader(void *arg)
{
	struct drainer *d = arg;
	char buf[1024];
	size_t got = 0;
	ssize_t n;

	while (got < d->total) {
		n = read(d->fd, buf,
			 sizeof(buf) < d->total - got ? sizeof(buf)
						      : d->total - got);
		if (n <= 0)
			abort();
		got += n;
		if (got % 3 == 0)
			sched_yield();
	}
	return NULL;
}

/* Writes on a small pipe racing a reader: every byte lands, no loss. */
static void test_race_writes(void)
{
	static char chunk[3000];
	struct io_uring_cqe cqe;
	struct drainer d;
	struct t_ring r;
	pthread_t th;
	size_t total = 0;
	int p[2], i;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	/* One page: writes of 3000 often find the pipe full. */
	T_ASSERT_EQ(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	d.fd = p[0];
	d.total = 300 * sizeof(chunk);
	T_ASSERT_EQ(pthread_create(&th, NULL, race_reader, &d), 0);
	for (i = 0; i < 300; i++) {
		size_t done = 0;

		/* Short writes are final for pipes: resubmit the rest. */
		while (done < sizeof(chunk)) {
			t_queue_rw(&r, IORING_OP_WRITE, p[1], chunk + done,
				   sizeof(chunk) - done, 0, i);
			T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
			T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
			T_ASSERT_EQ(cqe.user_data, i);
			T_ASSERT_GT(cqe.res, 0);
			T_ASSERT_LE(cqe.res, sizeof(chunk) - done);
			done += cqe.res;
		}
		total += done;
	}
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	T_ASSERT_EQ(total, d.total);
	T_ASSERT_EQ(pipe_bytes(p[0]), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_read_parks();
	test_read_other_thread();
	test_read_inline();
	test_short_read();
	test_eof();
	test_epipe();
	test_write_short();
	test_rwf_nowait();
	test_nonblock_fd();
	test_flags_untouched();
	test_offset_ignored();
	test_vectored();
	test_bad_input();
	test_many_pipes();
	test_many_pipes_defer();
	test_same_pipe_readers();
	test_race();
	test_race_writes();
	return T_EXIT_PASS;
}
