/* SPDX-License-Identifier: MIT */
/*
 * A request holds its file, not its fd number: a READ, RECV or POLL_ADD
 * parked on a pipe or a socket goes on waiting on that file after the
 * program closes the fd (close, dup2 over it, IORING_OP_CLOSE) and gets
 * the number back for another file, and completes with the old file's
 * data (a socket's shutdown wakes it), a multishot POLL_ADD keeps
 * posting until removed; the new file under the number is
 * unrelated, and a request on it is served at once, not after the
 * engine's periodic re-check of its watches (50 ms). The old file is
 * released with the last request on it (EPIPE for its writer).
 * Semantics: the kernel's requests hold req->file (io_uring/io_uring.c
 * io_file_get_normal), close_fd() drops only the table's reference.
 * Run directly (the user engine learns of each close through
 * nowait_fd_closing) and again re-executed under LD_PRELOAD=
 * libnowait-preload.so (NOWAIT_MODE=user), whose close/dup2 interposers
 * tell the engine: the program then calls nothing but libc.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nowait.h>
#include "helpers.h"

#define CHILD_ENV "NOWAIT_TEST_FDREUSE_CHILD"
#define ROUNDS	  10
#define FAST_MS	  20 /* far below the engine's 50 ms re-check */
#define ARRIVE_MS 5000

/*
 * The program is about to close fd: tell the user engine when it is
 * linked directly. Under the preload (and on the kernel) libc's close
 * alone does it.
 */
static void closing(int fd)
{
	if (t_engine() == T_ENGINE_USER)
		nowait_fd_closing(fd);
}

static void do_close(int fd)
{
	closing(fd);
	T_ASSERT_EQ(close(fd), 0);
}

static void queue_read(struct t_ring *r, int op, int fd, void *buf,
		       unsigned int len, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, op, fd, buf, len, 0, ud);
}

static void expect_cqe(struct t_ring *r, unsigned int ms, uint64_t ud, int res)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_wait_cqe_timeout(r, &cqe, ms), 0);
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, res);
}

/* A pipe whose read end is fd number want (the lowest free one). */
static void pipe_at(int p[2], int want)
{
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(p[0], want);
}

/*
 * With the read end gone (the last request on it done), a write on the
 * pipe fails with EPIPE. Released when the request is freed, which may
 * follow its CQE by a moment: bounded retries, not a timing assertion.
 */
static void expect_reader_gone(int wfd)
{
	int i;

	for (i = 0; i < 2000; i++) {
		if (write(wfd, "x", 1) < 0) {
			T_ASSERT_EQ(errno, EPIPE);
			return;
		}
		usleep(1000);
	}
	T_ASSERT(!"the old pipe's read end was never released");
}

/*
 * The number is closed and reused with nothing parked on it: a read on
 * the new file is watched at once (mshot-shutdown-race, multicqes_drain).
 */
static void test_reuse_served_fast(void)
{
	struct t_ring r;
	char buf[8];
	int p[2], n, i;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	n = p[0];
	for (i = 0; i < ROUNDS; i++) {
		queue_read(&r, IORING_OP_READ, n, buf, sizeof(buf), 1);
		T_ASSERT_EQ(t_submit(&r), 1);
		T_ASSERT_EQ(write(p[1], "ab", 2), 2);
		expect_cqe(&r, FAST_MS, 1, 2);
		do_close(p[0]);
		do_close(p[1]);
		pipe_at(p, n);
	}
	do_close(p[0]);
	do_close(p[1]);
	t_ring_exit(&r);
}

/*
 * A READ parked on a pipe outlives close(fd): a new pipe takes the
 * number, the old one's writer still reaches the read, the new pipe is
 * untouched and served on its own.
 */
static void test_read_keeps_file(void)
{
	char buf[8] = {0}, buf2[8] = {0};
	struct t_ring r;
	int a[2], b[2], n, i, nbytes = -1;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	for (i = 0; i < ROUNDS; i++) {
		T_ASSERT_EQ(pipe(a), 0);
		n = a[0];
		queue_read(&r, IORING_OP_READ, n, buf, sizeof(buf), 2);
		T_ASSERT_EQ(t_submit(&r), 1);
		do_close(a[0]);
		pipe_at(b, n);
		T_ASSERT_EQ(write(a[1], "A", 1), 1);
		expect_cqe(&r, ARRIVE_MS, 2, 1);
		T_ASSERT_EQ(buf[0], 'A');
		T_ASSERT_EQ(ioctl(b[0], FIONREAD, &nbytes), 0);
		T_ASSERT_EQ(nbytes, 0);
		queue_read(&r, IORING_OP_READ, n, buf2, sizeof(buf2), 3);
		T_ASSERT_EQ(t_submit(&r), 1);
		T_ASSERT_EQ(write(b[1], "B", 1), 1);
		expect_cqe(&r, FAST_MS, 3, 1);
		T_ASSERT_EQ(buf2[0], 'B');
		expect_reader_gone(a[1]);
		do_close(a[1]);
		do_close(b[0]);
		do_close(b[1]);
	}
	t_ring_exit(&r);
}

/* The same through dup2 over the number, and through IORING_OP_CLOSE. */
static void test_dup2_and_op_close(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	char buf[8] = {0};
	int a[2], other[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(a), 0);
	T_ASSERT_EQ(pipe(other), 0);
	queue_read(&r, IORING_OP_READ, a[0], buf, sizeof(buf), 4);
	T_ASSERT_EQ(t_submit(&r), 1);
	closing(a[0]);
	T_ASSERT_EQ(dup2(other[0], a[0]), a[0]);
	T_ASSERT_EQ(write(a[1], "D", 1), 1);
	expect_cqe(&r, ARRIVE_MS, 4, 1);
	T_ASSERT_EQ(buf[0], 'D');
	expect_reader_gone(a[1]);
	do_close(a[0]);
	do_close(a[1]);

	/* IORING_OP_CLOSE: the engine closes it, nobody else tells it. */
	T_ASSERT_EQ(pipe(a), 0);
	queue_read(&r, IORING_OP_READ, a[0], buf, sizeof(buf), 5);
	T_ASSERT_EQ(t_submit(&r), 1);
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_CLOSE;
	sqe->fd = a[0];
	sqe->user_data = 6;
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_cqe(&r, ARRIVE_MS, 6, 0);
	T_ASSERT_EQ(fcntl(a[0], F_GETFD), -1); /* the number is free */
	T_ASSERT_EQ(write(a[1], "C", 1), 1);
	expect_cqe(&r, ARRIVE_MS, 5, 1);
	T_ASSERT_EQ(buf[0], 'C');
	expect_reader_gone(a[1]);
	do_close(a[1]);
	do_close(other[0]);
	do_close(other[1]);
	t_ring_exit(&r);
}

/*
 * A RECV parked on a socket outlives close(fd): data from the peer
 * reaches it, and so does the peer's shutdown (EOF); a POLL_ADD too.
 */
static void test_socket_keeps_file(void)
{
	struct io_uring_sqe *sqe;
	char buf[8] = {0};
	struct t_ring r;
	int s[2], b[2], n;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	n = s[0];
	queue_read(&r, IORING_OP_RECV, n, buf, sizeof(buf), 7);
	T_ASSERT_EQ(t_submit(&r), 1);
	do_close(n);
	pipe_at(b, n);
	T_ASSERT_EQ(send(s[1], "S", 1, 0), 1);
	expect_cqe(&r, ARRIVE_MS, 7, 1);
	T_ASSERT_EQ(buf[0], 'S');
	do_close(b[0]);
	do_close(b[1]);
	do_close(s[1]);

	/* A POLL_ADD: the data stays in the old socket, POLLIN for it. */
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	n = s[0];
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	t_prep_poll_add(sqe, n, POLLIN, 0, 8);
	T_ASSERT_EQ(t_submit(&r), 1);
	do_close(n);
	pipe_at(b, n);
	T_ASSERT_EQ(send(s[1], "P", 1, 0), 1);
	expect_cqe(&r, ARRIVE_MS, 8, POLLIN);
	do_close(b[0]);
	do_close(b[1]);
	do_close(s[1]);

	/* shutdown(2) by the peer wakes a RECV on a closed fd with EOF. */
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	queue_read(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 9);
	T_ASSERT_EQ(t_submit(&r), 1);
	do_close(s[0]);
	T_ASSERT_EQ(shutdown(s[1], SHUT_WR), 0);
	expect_cqe(&r, ARRIVE_MS, 9, 0);
	do_close(s[1]);
	t_ring_exit(&r);
}

/*
 * A multishot POLL_ADD outlives close(fd) too: each write to the old pipe
 * posts POLLIN with F_MORE; POLL_REMOVE ends it, and with it the file.
 */
static void test_multishot_poll_keeps_file(void)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	struct t_ring r;
	int a[2], b[2], n, i, got = 0;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(a), 0);
	n = a[0];
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	t_prep_poll_add(sqe, n, POLLIN, IORING_POLL_ADD_MULTI, 10);
	T_ASSERT_EQ(t_submit(&r), 1);
	do_close(n);
	pipe_at(b, n);
	for (i = 0; i < 2; i++) {
		T_ASSERT_EQ(write(a[1], "M", 1), 1);
		T_ASSERT_EQ(t_wait_cqe_timeout(&r, &cqe, ARRIVE_MS), 0);
		T_ASSERT_EQ(cqe.user_data, 10);
		T_ASSERT_EQ(cqe.res, POLLIN);
		T_ASSERT(cqe.flags & IORING_CQE_F_MORE);
	}
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	t_prep_poll_remove(sqe, 10, 11);
	T_ASSERT_EQ(t_submit(&r), 1);
	for (i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe_timeout(&r, &cqe, ARRIVE_MS), 0);
		if (cqe.user_data == 10) {
			T_ASSERT_EQ(cqe.res, -ECANCELED);
			T_ASSERT(!(cqe.flags & IORING_CQE_F_MORE));
		} else {
			T_ASSERT_EQ(cqe.user_data, 11);
			T_ASSERT_EQ(cqe.res, 0);
		}
		got |= 1 << (cqe.user_data - 10);
	}
	T_ASSERT_EQ(got, 3);
	expect_reader_gone(a[1]);
	do_close(a[1]);
	do_close(b[0]);
	do_close(b[1]);
	t_ring_exit(&r);
}

static void run_checks(void)
{
	test_reuse_served_fast();
	test_read_keeps_file();
	test_dup2_and_op_close();
	test_socket_keeps_file();
	test_multishot_poll_keeps_file();
}

/* Run this program again under the preload's engine. */
static int preloaded(void)
{
	t_rerun_preloaded(CHILD_ENV, 40000);
	return 0;
}

int main(void)
{
	t_watchdog(60);
	signal(SIGPIPE, SIG_IGN);
	if (getenv(CHILD_ENV)) {
		T_ASSERT(t_ring_is_nowait()); /* really the preload's engine */
		run_checks();
		return T_EXIT_PASS;
	}
	t_require_engine();
	run_checks();
	if (t_engine() == T_ENGINE_USER)
		return preloaded();
	return T_EXIT_PASS;
}
