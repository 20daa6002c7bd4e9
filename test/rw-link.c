/* SPDX-License-Identifier: MIT */
/*
 * Linked chains of pipe reads and writes: a parked member holds the rest of
 * the chain back; a short result (read, EOF or write) counts as a failure
 * for IOSQE_IO_LINK and cancels the followers with -ECANCELED, not for
 * IOSQE_IO_HARDLINK. Semantics: io_uring/rw.c (res != requested length ->
 * req_set_fail), io_uring.c io_fail_links.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "helpers.h"

static struct io_uring_sqe *queue_rw(struct t_ring *r, int op, int fd,
				     const void *addr, unsigned int len,
				     unsigned int flags, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, op, fd, addr, len, 0, ud);
	sqe->flags = flags;
	return sqe;
}

static int pipe_bytes(int fd)
{
	int n = -1;

	T_ASSERT_EQ(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

/* WRITE -> READ on the same pipe: the read sees the write's data. */
static void test_write_then_read(void)
{
	struct t_ring r;
	char buf[8];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_rw(&r, IORING_OP_WRITE, p[1], "chain", 5, IOSQE_IO_LINK, 1);
	queue_rw(&r, IORING_OP_READ, p[0], buf, 5, 0, 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 5), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 5), 0);
	T_ASSERT_EQ(memcmp(buf, "chain", 5), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/*
 * WRITE(pipe a) -> READ(pipe b, parks) -> WRITE(pipe a): the last write
 * waits for the parked read, which completes when the test writes b.
 */
static void test_parked_member(void)
{
	struct t_ring r;
	char buf[8];
	int a[2], b[2];

	T_ASSERT_EQ(pipe(a), 0);
	T_ASSERT_EQ(pipe(b), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_rw(&r, IORING_OP_WRITE, a[1], "one", 3, IOSQE_IO_LINK, 1);
	queue_rw(&r, IORING_OP_READ, b[0], buf, 4, IOSQE_IO_LINK, 2);
	queue_rw(&r, IORING_OP_WRITE, a[1], "two", 3, 0, 3);
	T_ASSERT_EQ(t_submit(&r), 3);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 3), 0);
	t_expect_no_cqe(&r, 30);
	/* Only the head ran: "two" is not in pipe a yet. */
	T_ASSERT_EQ(pipe_bytes(a[0]), 3);
	T_ASSERT_EQ(write(b[1], "wake", 4), 4);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 4), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, 3), 0);
	T_ASSERT_EQ(pipe_bytes(a[0]), 6);
	T_ASSERT_EQ(read(a[0], buf, 6), 6);
	T_ASSERT_EQ(memcmp(buf, "onetwo", 6), 0);

	/* A parked head: the follower waits for it. */
	queue_rw(&r, IORING_OP_READ, b[0], buf, 2, IOSQE_IO_LINK, 4);
	queue_rw(&r, IORING_OP_WRITE, a[1], "z", 1, 0, 5);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(pipe_bytes(a[0]), 0);
	{
		struct t_writer w;

		t_writer_start(&w, b[1], "ok", 2, 10000);
		T_ASSERT_EQ(t_expect_cqe(&r, 4, 2), 0);
		T_ASSERT_EQ(t_expect_cqe(&r, 5, 1), 0);
		T_ASSERT_EQ(t_writer_join(&w), 2);
	}
	T_ASSERT_EQ(pipe_bytes(a[0]), 1);
	t_ring_exit(&r);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

/* A short read (100 asked, 16 there) breaks the link: -ECANCELED. */
static void test_short_read_breaks(void)
{
	struct t_ring r;
	char buf[100];
	int p[2], q[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(pipe(q), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(write(p[1], "0123456789abcdef", 16), 16);
	queue_rw(&r, IORING_OP_READ, p[0], buf, 100, IOSQE_IO_LINK, 1);
	queue_rw(&r, IORING_OP_WRITE, q[1], "no", 2, IOSQE_IO_LINK, 2);
	queue_rw(&r, IORING_OP_WRITE, q[1], "no", 2, 0, 3);
	T_ASSERT_EQ(t_submit_and_wait(&r, 3), 3);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 16), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, -ECANCELED), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, -ECANCELED), 0);
	T_ASSERT_EQ(pipe_bytes(q[0]), 0);

	/* The same when the short read comes from a parked read. */
	queue_rw(&r, IORING_OP_READ, p[0], buf, 100, IOSQE_IO_LINK, 4);
	queue_rw(&r, IORING_OP_WRITE, q[1], "no", 2, 0, 5);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(p[1], "short", 5), 5);
	T_ASSERT_EQ(t_expect_cqe(&r, 4, 5), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, -ECANCELED), 0);
	T_ASSERT_EQ(pipe_bytes(q[0]), 0);

	/* A full-length read keeps the chain going. */
	T_ASSERT_EQ(write(p[1], "exact", 5), 5);
	queue_rw(&r, IORING_OP_READ, p[0], buf, 5, IOSQE_IO_LINK, 6);
	queue_rw(&r, IORING_OP_WRITE, q[1], "go", 2, 0, 7);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 6, 5), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 7, 2), 0);
	T_ASSERT_EQ(pipe_bytes(q[0]), 2);

	/* EOF (0 of 100) is short too. */
	close(p[1]);
	queue_rw(&r, IORING_OP_READ, p[0], buf, 100, IOSQE_IO_LINK, 8);
	queue_rw(&r, IORING_OP_WRITE, q[1], "no", 2, 0, 9);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 8, 0), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 9, -ECANCELED), 0);
	T_ASSERT_EQ(pipe_bytes(q[0]), 2);

	/* An error in the chain: -EBADF, then -ECANCELED. */
	queue_rw(&r, IORING_OP_READ, -1, buf, 1, IOSQE_IO_LINK, 10);
	queue_rw(&r, IORING_OP_WRITE, q[1], "no", 2, 0, 11);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 10, -EBADF), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 11, -ECANCELED), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(q[0]);
	close(q[1]);
}

/* HARDLINK: a short read does not stop the chain. */
static void test_hardlink(void)
{
	struct t_ring r;
	char buf[100];
	int p[2], q[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(pipe(q), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(write(p[1], "four", 4), 4);
	queue_rw(&r, IORING_OP_READ, p[0], buf, 100, IOSQE_IO_HARDLINK, 1);
	queue_rw(&r, IORING_OP_WRITE, q[1], "yes", 3, 0, 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 4), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 3), 0);
	T_ASSERT_EQ(pipe_bytes(q[0]), 3);

	/* A parked, then short, hardlinked read. */
	queue_rw(&r, IORING_OP_READ, p[0], buf, 100, IOSQE_IO_HARDLINK, 3);
	queue_rw(&r, IORING_OP_WRITE, q[1], "yes", 3, 0, 4);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, 1), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 4, 3), 0);
	T_ASSERT_EQ(pipe_bytes(q[0]), 6);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

/* A short pipe write (more than the free space) breaks the link too. */
static void test_short_write_breaks(void)
{
	static char big[65536 + 8192];
	struct t_ring r;
	int p[2], q[2], sz;

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(pipe(q), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	sz = fcntl(p[1], F_GETPIPE_SZ);
	T_ASSERT_EQ(sz, 65536);
	/* 15 of 16 slots used: one page of room. */
	T_ASSERT_EQ(write(p[1], big, sz - 4096), sz - 4096);
	queue_rw(&r, IORING_OP_WRITE, p[1], big, 8192, IOSQE_IO_LINK, 1);
	queue_rw(&r, IORING_OP_WRITE, q[1], "no", 2, 0, 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 4096), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, -ECANCELED), 0);
	T_ASSERT_EQ(pipe_bytes(q[0]), 0);
	T_ASSERT_EQ(pipe_bytes(p[0]), sz);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

/* A link of reads parked one after another on one pipe, fed piecewise. */
static void test_chain_of_parked(void)
{
	struct t_ring r;
	char buf[6][2];
	int p[2], i;

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	for (i = 0; i < 6; i++)
		queue_rw(&r, IORING_OP_READ, p[0], buf[i], 2,
			 i < 5 ? IOSQE_IO_LINK : 0, i);
	T_ASSERT_EQ(t_submit(&r), 6);
	for (i = 0; i < 6; i++) {
		char msg[2] = {'A', (char)('0' + i)};

		t_expect_no_cqe(&r, 5);
		T_ASSERT_EQ(write(p[1], msg, 2), 2);
		T_ASSERT_EQ(t_expect_cqe(&r, i, 2), 0);
		T_ASSERT_EQ(memcmp(buf[i], msg, 2), 0);
	}
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* IOSQE_ASYNC head: the chain still runs in order. */
static void test_async_chain(void)
{
	struct t_ring r;
	char buf[8];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_rw(&r, IORING_OP_READ, p[0], buf, 3, IOSQE_IO_LINK | IOSQE_ASYNC,
		 1);
	queue_rw(&r, IORING_OP_WRITE, p[1], "bye", 3, IOSQE_IO_LINK, 2);
	queue_rw(&r, IORING_OP_READ, p[0], buf + 3, 3, 0, 3);
	T_ASSERT_EQ(t_submit(&r), 3);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(p[1], "hi!", 3), 3);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 3), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 3), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, 3), 0);
	T_ASSERT_EQ(memcmp(buf, "hi!bye", 6), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_write_then_read();
	test_parked_member();
	test_short_read_breaks();
	test_hardlink();
	test_short_write_breaks();
	test_chain_of_parked();
	test_async_chain();
	return T_EXIT_PASS;
}
