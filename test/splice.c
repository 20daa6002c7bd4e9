/* SPDX-License-Identifier: MIT */
/*
 * SPLICE and TEE: pipe to pipe, file to pipe and pipe to file with and
 * without offsets, tee, a fixed input (SPLICE_F_FD_IN_FIXED), a splice
 * that waits for an empty input or a full output, IOSQE_ASYNC, a socket
 * input (a worker), the program's SPLICE_F_NONBLOCK and O_NONBLOCK, EOF,
 * EPIPE without SIGPIPE, short splices failing links, and the errors prep
 * and do_splice give (-EINVAL, -ESPIPE, -EBADF).
 * Semantics: io_uring/splice.c, fs/splice.c do_splice / do_tee.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "helpers.h"

#define NW_SPLICE_F_NONBLOCK 0x02

static volatile sig_atomic_t sigpipe_count;
static char tmpname[64];

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipe_count++;
}

static struct io_uring_sqe *queue_splice(struct t_ring *r, int op, int fd_in,
					 int64_t off_in, int fd_out,
					 int64_t off_out, unsigned int len,
					 unsigned int flags, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = (uint8_t)op;
	sqe->fd = fd_out;
	sqe->splice_fd_in = fd_in;
	sqe->splice_off_in = (uint64_t)off_in;
	sqe->off = (uint64_t)off_out;
	sqe->len = len;
	sqe->splice_flags = flags;
	sqe->user_data = ud;
	return sqe;
}

/* Submit one splice and return its result. */
static int splice1(struct t_ring *r, int op, int fd_in, int64_t off_in,
		   int fd_out, int64_t off_out, unsigned int len,
		   unsigned int flags)
{
	struct io_uring_cqe cqe;

	queue_splice(r, op, fd_in, off_in, fd_out, off_out, len, flags, 9);
	T_ASSERT_EQ(t_submit_and_wait(r, 1), 1);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 9);
	return cqe.res;
}

static int pipe_bytes(int fd)
{
	int n = -1;

	T_ASSERT_EQ(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

static void expect_read(int fd, const char *want, size_t len)
{
	char buf[256];

	T_ASSERT(len <= sizeof(buf));
	T_ASSERT_EQ(read(fd, buf, len), (ssize_t)len);
	T_ASSERT_EQ(memcmp(buf, want, len), 0);
}

/* A regular file holding "0123456789" x 10, unlinked already. */
static int data_file(void)
{
	int fd = open(tmpname, O_RDWR | O_CREAT | O_TRUNC, 0600);

	T_ASSERT_GE(fd, 0);
	unlink(tmpname);
	for (int i = 0; i < 10; i++)
		T_ASSERT_EQ(write(fd, "0123456789", 10), 10);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static void test_pipe_to_pipe(void)
{
	struct t_ring r;
	int a[2], b[2];

	T_ASSERT_EQ(pipe(a), 0);
	T_ASSERT_EQ(pipe(b), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(write(a[1], "hello splice", 12), 12);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 12, 0),
		    12);
	expect_read(b[0], "hello splice", 12);
	T_ASSERT_EQ(pipe_bytes(a[0]), 0);

	/* Short: 5 of 20 are there. It fails the link after it. */
	T_ASSERT_EQ(write(a[1], "abcde", 5), 5);
	queue_splice(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 20, 0, 1)
		->flags |= IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&r), 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 5), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, -ECANCELED), 0);
	expect_read(b[0], "abcde", 5);

	/* The full length does not fail it. */
	T_ASSERT_EQ(write(a[1], "xyz", 3), 3);
	queue_splice(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 3, 0, 1)
		->flags |= IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&r), 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 3), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 0), 0);
	expect_read(b[0], "xyz", 3);

	/* Length 0: 0, nothing looked at but the fds. */
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], 7, b[1], 7, 0, 0), 0);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, -1, -1, b[1], -1, 0, 0),
		    -EBADF);
	t_ring_exit(&r);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

static void test_file_pipe(void)
{
	struct t_ring r;
	int fd = data_file(), p[2];
	char buf[32];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	/* An explicit offset leaves the file position alone. */
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, fd, 13, p[1], -1, 7, 0), 7);
	expect_read(p[0], "3456789", 7);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 0);
	/* -1: the file position, which moves. */
	T_ASSERT_EQ(lseek(fd, 95, SEEK_SET), 95);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, fd, -1, p[1], -1, 20, 0), 5);
	expect_read(p[0], "56789", 5);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 100);
	/* At end of file: 0. */
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, fd, 100, p[1], -1, 20, 0), 0);

	/* Pipe to file at an offset, and at the file position. */
	T_ASSERT_EQ(write(p[1], "ABCDEFGH", 8), 8);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, p[0], -1, fd, 40, 4, 0), 4);
	T_ASSERT_EQ(pread(fd, buf, 6, 39), 6);
	T_ASSERT_EQ(memcmp(buf, "9ABCD4", 6), 0);
	T_ASSERT_EQ(lseek(fd, 2, SEEK_SET), 2);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, p[0], -1, fd, -1, 4, 0), 4);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 6);
	T_ASSERT_EQ(pread(fd, buf, 8, 0), 8);
	T_ASSERT_EQ(memcmp(buf, "01EFGH67", 8), 0);

	/* Offsets on a pipe end: -ESPIPE; neither end a pipe: -EINVAL. */
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, fd, 0, p[1], 0, 4, 0),
		    -ESPIPE);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, p[0], 0, fd, 0, 4, 0),
		    -ESPIPE);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, fd, 0, fd, 50, 4, 0),
		    -EINVAL);
	/* A negative offset other than -1 on the file. */
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, fd, -5, p[1], -1, 4, 0),
		    -EINVAL);
	t_ring_exit(&r);
	close(fd);
	close(p[0]);
	close(p[1]);
}

static void test_tee(void)
{
	struct t_ring r;
	int a[2], b[2], fd = data_file();

	T_ASSERT_EQ(pipe(a), 0);
	T_ASSERT_EQ(pipe(b), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(write(a[1], "teedata", 7), 7);
	T_ASSERT_EQ(splice1(&r, IORING_OP_TEE, a[0], 0, b[1], 0, 7, 0), 7);
	expect_read(b[0], "teedata", 7);
	expect_read(a[0], "teedata", 7);
	/* Offsets are refused at prep, non-pipes by do_tee. */
	T_ASSERT_EQ(splice1(&r, IORING_OP_TEE, a[0], 1, b[1], 0, 7, 0),
		    -EINVAL);
	T_ASSERT_EQ(splice1(&r, IORING_OP_TEE, a[0], 0, b[1], 1, 7, 0),
		    -EINVAL);
	T_ASSERT_EQ(splice1(&r, IORING_OP_TEE, fd, 0, b[1], 0, 7, 0), -EINVAL);
	T_ASSERT_EQ(splice1(&r, IORING_OP_TEE, a[0], 0, a[1], 0, 7, 0),
		    -EINVAL);
	T_ASSERT_EQ(splice1(&r, IORING_OP_TEE, a[0], 0, b[1], 0, 0, 0), 0);
	/* An empty input with the program's SPLICE_F_NONBLOCK. */
	T_ASSERT_EQ(splice1(&r, IORING_OP_TEE, a[0], 0, b[1], 0, 7,
			    NW_SPLICE_F_NONBLOCK),
		    -EAGAIN);
	/* A tee waits for data like a splice. */
	queue_splice(&r, IORING_OP_TEE, a[0], 0, b[1], 0, 64, 0, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	T_ASSERT_EQ(write(a[1], "late", 4), 4);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, 4), 0);
	expect_read(b[0], "late", 4);
	expect_read(a[0], "late", 4);
	t_ring_exit(&r);
	close(fd);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

static void test_fixed_in(void)
{
	struct t_ring r;
	int a[2], b[2], files[2];

	T_ASSERT_EQ(pipe(a), 0);
	T_ASSERT_EQ(pipe(b), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	files[0] = b[1];
	files[1] = a[0];
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, files, 2), 0);
	T_ASSERT_EQ(write(a[1], "fixed", 5), 5);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, 1, -1, b[1], -1, 5,
			    SPLICE_F_FD_IN_FIXED),
		    5);
	expect_read(b[0], "fixed", 5);
	/* Both fixed: the output through IOSQE_FIXED_FILE. */
	T_ASSERT_EQ(write(a[1], "both", 4), 4);
	queue_splice(&r, IORING_OP_SPLICE, 1, -1, 0, -1, 4,
		     SPLICE_F_FD_IN_FIXED, 4)
		->flags |= IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 4, 4), 0);
	expect_read(b[0], "both", 4);
	/* A slot out of range: -EBADF, which fails the link. */
	queue_splice(&r, IORING_OP_SPLICE, 7, -1, b[1], -1, 4,
		     SPLICE_F_FD_IN_FIXED, 5)
		->flags |= IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&r), 6);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, -EBADF), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 6, -ECANCELED), 0);
	/* A fixed input that waits for data. */
	queue_splice(&r, IORING_OP_SPLICE, 1, -1, b[1], -1, 64,
		     SPLICE_F_FD_IN_FIXED, 7);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	T_ASSERT_EQ(write(a[1], "wait", 4), 4);
	T_ASSERT_EQ(t_expect_cqe(&r, 7, 4), 0);
	expect_read(b[0], "wait", 4);
	t_ring_exit(&r);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

/* A splice waits for an empty input, then for a full output. */
static void test_waits(void)
{
	static char big[1 << 16];
	struct t_writer w;
	struct t_ring r;
	int a[2], b[2], room = 0, n;

	T_ASSERT_EQ(pipe(a), 0);
	T_ASSERT_EQ(pipe(b), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_splice(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 100, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 50);
	T_ASSERT_EQ(write(a[1], "arrives", 7), 7);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 7), 0);
	expect_read(b[0], "arrives", 7);

	/* Another thread writes while the test waits in GETEVENTS. */
	queue_splice(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 100, 0, 2);
	t_writer_start(&w, a[1], "thread", 6, 20000);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 6), 0);
	T_ASSERT_EQ(t_writer_join(&w), 6);
	expect_read(b[0], "thread", 6);

	/* Fill the output, put data in the input: it waits for room. */
	T_ASSERT_EQ(fcntl(b[1], F_SETFL, O_NONBLOCK), 0);
	while ((n = (int)write(b[1], big, sizeof(big))) > 0)
		room += n;
	T_ASSERT_EQ(fcntl(b[1], F_SETFL, 0), 0);
	T_ASSERT_EQ(write(a[1], "full", 4), 4);
	queue_splice(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 4, 0, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 50);
	while (room > 0) {
		n = (int)read(b[0], big, sizeof(big));
		T_ASSERT_GT(n, 0);
		room -= n;
	}
	T_ASSERT_EQ(t_expect_cqe(&r, 3, 4), 0);
	expect_read(b[0], "full", 4);

	/* IOSQE_ASYNC: the same result. */
	queue_splice(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 100, 0, 4)
		->flags |= IOSQE_ASYNC;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	T_ASSERT_EQ(write(a[1], "async", 5), 5);
	T_ASSERT_EQ(t_expect_cqe(&r, 4, 5), 0);
	expect_read(b[0], "async", 5);

	/* The writer goes away: EOF, 0, which fails a link (0 != len). */
	close(a[1]);
	queue_splice(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 100, 0, 5);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, 0), 0);
	t_ring_exit(&r);
	close(a[0]);
	close(b[0]);
	close(b[1]);
}

/* EOF arriving while a splice waits. */
static void test_eof_wakes(void)
{
	struct t_ring r;
	int a[2], b[2];

	T_ASSERT_EQ(pipe(a), 0);
	T_ASSERT_EQ(pipe(b), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_splice(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 100, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	close(a[1]);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 0), 0);
	t_ring_exit(&r);
	close(a[0]);
	close(b[0]);
	close(b[1]);
}

static void test_nonblock(void)
{
	struct t_ring r;
	int a[2], b[2];

	T_ASSERT_EQ(pipe(a), 0);
	T_ASSERT_EQ(pipe(b), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 10,
			    NW_SPLICE_F_NONBLOCK),
		    -EAGAIN);
	/* An O_NONBLOCK end makes do_splice nonblocking too. */
	T_ASSERT_EQ(fcntl(a[0], F_SETFL, O_NONBLOCK), 0);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 10, 0),
		    -EAGAIN);
	T_ASSERT_EQ(fcntl(a[0], F_SETFL, 0), 0);
	T_ASSERT_EQ(fcntl(b[1], F_SETFL, O_NONBLOCK), 0);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 10, 0),
		    -EAGAIN);
	/* ... and with data there, it moves it. */
	T_ASSERT_EQ(write(a[1], "nb", 2), 2);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 10, 0),
		    2);
	expect_read(b[0], "nb", 2);
	T_ASSERT_EQ(fcntl(b[1], F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	T_ASSERT_EQ(fcntl(a[0], F_GETFL) & O_NONBLOCK, 0);
	t_ring_exit(&r);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

/* Into a pipe nobody reads: -EPIPE, and the program gets no SIGPIPE. */
static void test_epipe(void)
{
	struct sigaction sa = {.sa_handler = on_sigpipe}, old;
	struct t_ring r;
	int a[2], b[2];

	T_ASSERT_EQ(sigaction(SIGPIPE, &sa, &old), 0);
	T_ASSERT_EQ(pipe(a), 0);
	T_ASSERT_EQ(pipe(b), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	close(b[0]);
	T_ASSERT_EQ(write(a[1], "lost", 4), 4);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 4, 0),
		    -EPIPE);
	T_ASSERT_EQ(splice1(&r, IORING_OP_TEE, a[0], 0, b[1], 0, 4, 0), -EPIPE);
	usleep(10000);
	T_ASSERT_EQ(sigpipe_count, 0);
	t_ring_exit(&r);
	T_ASSERT_EQ(sigaction(SIGPIPE, &old, NULL), 0);
	close(a[0]);
	close(a[1]);
	close(b[1]);
}

/* A socket input: a worker runs the splice, which waits for data. */
static void test_socket(void)
{
	struct t_ring r;
	int sv[2], p[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_splice(&r, IORING_OP_SPLICE, sv[0], -1, p[1], -1, 100, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	T_ASSERT_EQ(write(sv[1], "sock", 4), 4);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 4), 0);
	expect_read(p[0], "sock", 4);
	/* Pipe to socket. */
	T_ASSERT_EQ(write(p[1], "back", 4), 4);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, p[0], -1, sv[1], -1, 4, 0),
		    4);
	expect_read(sv[0], "back", 4);
	t_ring_exit(&r);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

static void test_bad_input(void)
{
	struct t_ring r;
	int a[2], b[2], ro;

	T_ASSERT_EQ(pipe(a), 0);
	T_ASSERT_EQ(pipe(b), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	/* Unknown splice flags. */
	T_ASSERT_EQ(
		splice1(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 4, 1U << 20),
		-EINVAL);
	T_ASSERT_EQ(splice1(&r, IORING_OP_TEE, a[0], 0, b[1], 0, 4, 0x10),
		    -EINVAL);
	/* Bad fds. */
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, -1, -1, b[1], -1, 4, 0),
		    -EBADF);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], -1, -1, -1, 4, 0),
		    -EBADF);
	T_ASSERT_EQ(splice1(&r, IORING_OP_TEE, 1000, 0, b[1], 0, 4, 0), -EBADF);
	/* The wrong ends: not readable / not writable. */
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[1], -1, b[1], -1, 4, 0),
		    -EBADF);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], -1, b[0], -1, 4, 0),
		    -EBADF);
	/* A pipe into itself. */
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], -1, a[1], -1, 4, 0),
		    -EINVAL);
	/* Offsets on pipes. */
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], 0, b[1], -1, 4, 0),
		    -ESPIPE);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], -1, b[1], 3, 4, 0),
		    -ESPIPE);
	/* A file opened read-only as output. */
	ro = open("/dev/null", O_RDONLY);
	T_ASSERT_GE(ro, 0);
	T_ASSERT_EQ(write(a[1], "ro", 2), 2);
	T_ASSERT_EQ(splice1(&r, IORING_OP_SPLICE, a[0], -1, ro, -1, 2, 0),
		    -EBADF);
	/* ioprio is not for splice. */
	queue_splice(&r, IORING_OP_SPLICE, a[0], -1, b[1], -1, 2, 0, 9)
		->ioprio = 1;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 9, -EINVAL), 0);
	T_ASSERT_EQ(pipe_bytes(a[0]), 2);
	t_ring_exit(&r);
	close(ro);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

/* Many waiting splices on separate pipes all complete. */
static void test_many(void)
{
	enum { N = 16 };
	int a[N][2], b[N][2], i;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 32, NULL), 0);
	for (i = 0; i < N; i++) {
		T_ASSERT_EQ(pipe(a[i]), 0);
		T_ASSERT_EQ(pipe(b[i]), 0);
		queue_splice(&r, IORING_OP_SPLICE, a[i][0], -1, b[i][1], -1, 10,
			     0, (uint64_t)i);
	}
	T_ASSERT_EQ(t_submit(&r), N);
	t_expect_no_cqe(&r, 20);
	for (i = N - 1; i >= 0; i--)
		T_ASSERT_EQ(write(a[i][1], "0123456789", 10), 10);
	for (i = 0; i < N; i++) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_LT(cqe.user_data, N);
		T_ASSERT_EQ(cqe.res, 10);
	}
	for (i = 0; i < N; i++) {
		expect_read(b[i][0], "0123456789", 10);
		close(a[i][0]);
		close(a[i][1]);
		close(b[i][0]);
		close(b[i][1]);
	}
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	snprintf(tmpname, sizeof(tmpname), "/tmp/nw-splice-%d", (int)getpid());
	test_pipe_to_pipe();
	test_file_pipe();
	test_tee();
	test_fixed_in();
	test_waits();
	test_eof_wakes();
	test_nonblock();
	test_epipe();
	test_socket();
	test_bad_input();
	test_many();
	return T_EXIT_PASS;
}
