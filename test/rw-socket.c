/* SPDX-License-Identifier: MIT */
/*
 * READ and WRITE (not RECV/SEND) on sockets: AF_UNIX socketpairs and TCP
 * over 127.0.0.1. A read parks until data arrives, EOF gives 0, a write to a
 * peer that is gone gives -EPIPE. READ/WRITE go through sock_read_iter and
 * sock_write_iter without MSG_NOSIGNAL, so unlike SEND they raise SIGPIPE:
 * the test expects what the kernel does.
 */
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "helpers.h"

static volatile sig_atomic_t sigpipe_count;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipe_count++;
}

static void make_pair(int kind, int s[2])
{
	if (kind == SOCK_STREAM + 100)
		t_tcp_pair(s);
	else
		T_ASSERT_EQ(socketpair(AF_UNIX, kind, 0, s), 0);
}

#define KIND_TCP (SOCK_STREAM + 100)
static const int kinds[] = {SOCK_STREAM, SOCK_SEQPACKET, SOCK_DGRAM, KIND_TCP};

/* A read parks until the peer writes; data present completes inline. */
static void test_read_parks(void)
{
	unsigned int k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct t_writer w;
		struct t_ring r;
		char buf[64];
		int s[2];

		make_pair(kinds[k], s);
		T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
		memset(buf, 0, sizeof(buf));
		t_queue_rw(&r, IORING_OP_READ, s[0], buf, sizeof(buf), 0, 1);
		T_ASSERT_EQ(t_submit(&r), 1);
		t_expect_no_cqe(&r, 30);
		T_ASSERT_EQ(write(s[1], "ping", 4), 4);
		if (t_expect_cqe(&r, 1, 4) != 0)
			T_ASSERT(0);
		T_ASSERT_EQ(memcmp(buf, "ping", 4), 0);

		/* From another thread while this one waits in enter. */
		t_queue_rw(&r, IORING_OP_READ, s[0], buf, sizeof(buf), 0, 2);
		t_writer_start(&w, s[1], "thread", 6, 20000);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 2, 6), 0);
		T_ASSERT_EQ(t_writer_join(&w), 6);
		T_ASSERT_EQ(memcmp(buf, "thread", 6), 0);

		/* Inline: a WRITE, then a READ with the data there. */
		t_queue_rw(&r, IORING_OP_WRITE, s[1], "pong", 4, 0, 3);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 3, 4), 0);
		if (kinds[k] == KIND_TCP)
			usleep(1000);
		t_queue_rw(&r, IORING_OP_READ, s[0], buf, sizeof(buf), 0, 4);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 4, 4), 0);
		T_ASSERT_EQ(memcmp(buf, "pong", 4), 0);
		t_ring_exit(&r);
		close(s[0]);
		close(s[1]);
	}
}

/* Message boundaries: a datagram read with a small buffer is truncated. */
static void test_datagram(void)
{
	struct iovec iov[2];
	struct t_ring r;
	char a[3], b[3];
	int s[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(write(s[1], "0123456789", 10), 10);
	T_ASSERT_EQ(write(s[1], "second", 6), 6);
	t_queue_rw(&r, IORING_OP_READ, s[0], a, sizeof(a), 0, 1);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, 3), 0);
	T_ASSERT_EQ(memcmp(a, "012", 3), 0);
	/* The rest of the first datagram is gone; READV scatters the next. */
	iov[0].iov_base = a;
	iov[0].iov_len = 3;
	iov[1].iov_base = b;
	iov[1].iov_len = 3;
	t_queue_rw(&r, IORING_OP_READV, s[0], iov, 2, 0, 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 6), 0);
	T_ASSERT_EQ(memcmp(a, "sec", 3), 0);
	T_ASSERT_EQ(memcmp(b, "ond", 3), 0);
	/* WRITEV sends one datagram. */
	iov[0].iov_base = (void *)"ab";
	iov[0].iov_len = 2;
	iov[1].iov_base = (void *)"cde";
	iov[1].iov_len = 3;
	t_queue_rw(&r, IORING_OP_WRITEV, s[1], iov, 2, 0, 3);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, 5), 0);
	{
		char buf[16];

		T_ASSERT_EQ(read(s[0], buf, sizeof(buf)), 5);
		T_ASSERT_EQ(memcmp(buf, "abcde", 5), 0);
	}
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

/* EOF: the peer closes (or shuts down writing) while a read is parked. */
static void test_eof(void)
{
	unsigned int k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct t_ring r;
		char buf[16];
		int s[2];

		if (kinds[k] == SOCK_DGRAM)
			continue;
		T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
		make_pair(kinds[k], s);
		t_queue_rw(&r, IORING_OP_READ, s[0], buf, sizeof(buf), 0, 1);
		T_ASSERT_EQ(t_submit(&r), 1);
		t_expect_no_cqe(&r, 20);
		close(s[1]);
		T_ASSERT_EQ(t_expect_cqe(&r, 1, 0), 0);
		/* Again, now inline. */
		t_queue_rw(&r, IORING_OP_READ, s[0], buf, sizeof(buf), 0, 2);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 2, 0), 0);
		close(s[0]);

		/* shutdown(SHUT_WR) of the peer: data, then EOF. */
		make_pair(kinds[k], s);
		t_queue_rw(&r, IORING_OP_READ, s[0], buf, sizeof(buf), 0, 3);
		T_ASSERT_EQ(t_submit(&r), 1);
		t_expect_no_cqe(&r, 10);
		T_ASSERT_EQ(write(s[1], "last", 4), 4);
		T_ASSERT_EQ(shutdown(s[1], SHUT_WR), 0);
		T_ASSERT_EQ(t_expect_cqe(&r, 3, 4), 0);
		t_queue_rw(&r, IORING_OP_READ, s[0], buf, sizeof(buf), 0, 4);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 4, 0), 0);
		close(s[0]);
		close(s[1]);
		t_ring_exit(&r);
	}
}

/*
 * WRITE to a socket that cannot send: -EPIPE. sock_write_iter has no
 * MSG_NOSIGNAL, so the kernel raises SIGPIPE on the submitter, as write(2).
 */
static void test_epipe(void)
{
	struct sigaction sa, old;
	struct t_ring r;
	int s[2];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigpipe;
	T_ASSERT_EQ(sigaction(SIGPIPE, &sa, &old), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);

	/* AF_UNIX stream, peer closed. */
	sigpipe_count = 0;
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	close(s[1]);
	t_queue_rw(&r, IORING_OP_WRITE, s[0], "gone", 4, 0, 1);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -EPIPE), 0);
	T_ASSERT_EQ(sigpipe_count, 1);
	close(s[0]);

	/*
	 * AF_UNIX seqpacket, peer closed: -EPIPE, but unix_dgram_sendmsg
	 * raises no SIGPIPE (write(2) does not either).
	 */
	sigpipe_count = 0;
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, s), 0);
	close(s[1]);
	t_queue_rw(&r, IORING_OP_WRITE, s[0], "gone", 4, 0, 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, -EPIPE), 0);
	T_ASSERT_EQ(sigpipe_count, 0);
	close(s[0]);

	/* TCP after our own shutdown(SHUT_WR): deterministic -EPIPE. */
	sigpipe_count = 0;
	t_tcp_pair(s);
	T_ASSERT_EQ(shutdown(s[0], SHUT_WR), 0);
	t_queue_rw(&r, IORING_OP_WRITE, s[0], "shut", 4, 0, 3);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, -EPIPE), 0);
	T_ASSERT_EQ(sigpipe_count, 1);
	/* WRITEV likewise. */
	{
		struct iovec iov = {(void *)"v", 1};

		t_queue_rw(&r, IORING_OP_WRITEV, s[0], &iov, 1, 0, 4);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 4, -EPIPE), 0);
		T_ASSERT_EQ(sigpipe_count, 2);
	}
	close(s[0]);
	close(s[1]);

	/* With SIGPIPE ignored: still -EPIPE, and the process survives. */
	signal(SIGPIPE, SIG_IGN);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	close(s[1]);
	t_queue_rw(&r, IORING_OP_WRITE, s[0], "gone", 4, 0, 5);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, -EPIPE), 0);
	close(s[0]);

	t_ring_exit(&r);
	T_ASSERT_EQ(sigaction(SIGPIPE, &old, NULL), 0);
}

/* A write parked on a full socket completes once the peer reads. */
static void test_write_parks(void)
{
	static char big[1 << 16], sink[1 << 16];
	struct io_uring_cqe cqe;
	struct t_ring r;
	int s[2], sndbuf = 4096, fill = 0, n;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(setsockopt(s[0], SOL_SOCKET, SO_SNDBUF, &sndbuf,
			       sizeof(sndbuf)),
		    0);
	/* Fill the socket (MSG_DONTWAIT: the fd itself stays blocking). */
	while ((n = send(s[0], big, 512, MSG_DONTWAIT)) > 0)
		fill += n;
	T_ASSERT_EQ(errno, EAGAIN);
	T_ASSERT_GT(fill, 0);
	t_queue_rw(&r, IORING_OP_WRITE, s[0], "after", 5, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	/* Drain everything: the write can go. */
	while (fill > 0) {
		n = read(s[1], sink,
			 sizeof(sink) < (size_t)fill ? sizeof(sink)
						     : (size_t)fill);
		T_ASSERT_GT(n, 0);
		fill -= n;
	}
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 1);
	T_ASSERT_EQ(cqe.res, 5);
	T_ASSERT_EQ(read(s[1], sink, 16), 5);
	T_ASSERT_EQ(memcmp(sink, "after", 5), 0);
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

/* A TCP stream of 200 request/response rounds, reads always parked. */
static void test_tcp_pingpong(void)
{
	struct io_uring_cqe cqe;
	struct t_ring r;
	uint32_t i, v, got;
	int s[2];

	t_tcp_pair(s);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	for (i = 0; i < 200; i++) {
		/* Read on one end (parks), write on the other: same batch. */
		t_queue_rw(&r, IORING_OP_READ, s[1], &got, sizeof(got), 0,
			   2 * i);
		v = i;
		t_queue_rw(&r, IORING_OP_WRITE, s[0], &v, sizeof(v), 0,
			   2 * i + 1);
		T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.res, sizeof(v));
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.res, sizeof(v));
		T_ASSERT_EQ(got, i);
	}
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

/*
 * Sockets are not FMODE_STREAM files (pipes are): the SQE offset is not
 * simply ignored. Offsets 0 and -1 work; others fail before any I/O.
 */
static void test_offsets(void)
{
	static const struct {
		uint64_t off;
		int res;
	} cases[] = {{0, 4},
		     {(uint64_t)-1, 4},
		     {99, -ESPIPE},
		     {(uint64_t)-5, -EINVAL}};
	unsigned int k, i;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct t_ring r;
		char buf[8];
		int s[2];

		make_pair(kinds[k], s);
		T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct io_uring_cqe cqe;

			T_ASSERT_EQ(write(s[1], "data", 4), 4);
			if (kinds[k] == KIND_TCP)
				usleep(1000);
			t_queue_rw(&r, IORING_OP_READ, s[0], buf, sizeof(buf),
				   cases[i].off, i);
			T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
			T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
			T_ASSERT_EQ(cqe.res, cases[i].res);
			if (cqe.res < 0)
				T_ASSERT_EQ(read(s[0], buf, sizeof(buf)), 4);

			t_queue_rw(&r, IORING_OP_WRITE, s[1], "wxyz", 4,
				   cases[i].off, 100 + i);
			T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
			T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
			T_ASSERT_EQ(cqe.res, cases[i].res);
			if (cqe.res > 0)
				T_ASSERT_EQ(read(s[0], buf, sizeof(buf)), 4);
		}
		t_ring_exit(&r);
		close(s[0]);
		close(s[1]);
	}
}

/* RWF_NOWAIT on an empty socket: -EAGAIN in the CQE. */
static void test_rwf_nowait(void)
{
	struct t_ring r;
	char buf[8];
	int s[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	t_queue_rw(&r, IORING_OP_READ, s[0], buf, sizeof(buf), 0, 1)->rw_flags =
		RWF_NOWAIT;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -EAGAIN), 0);
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

/*
 * A WRITE of no bytes reaches the socket's protocol (sock_write_iter), as
 * it does in the kernel: a TCP listener says -EPIPE and raises SIGPIPE,
 * a datagram or seqpacket socket sends an empty message, a stream socket
 * says 0 and sends nothing. With and without RWF_NOWAIT, and WRITEV of
 * no iovecs the same.
 */
static void test_write_nothing(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	static const int types[] = {SOCK_DGRAM, SOCK_SEQPACKET};
	struct sigaction sa, old;
	struct io_uring_sqe *sqe;
	struct t_ring r;
	unsigned int i;
	char buf[8];
	int s[2], l;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigpipe;
	T_ASSERT_EQ(sigaction(SIGPIPE, &sa, &old), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	T_ASSERT(l >= 0);
	T_ASSERT_EQ(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	T_ASSERT_EQ(listen(l, 1), 0);
	for (i = 0; i < 2; i++) {
		sigpipe_count = 0;
		sqe = t_queue_rw(&r, IORING_OP_WRITE, l, buf, 0, 0, 1);
		sqe->rw_flags = i ? RWF_NOWAIT : 0;
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 1, -EPIPE), 0);
		T_ASSERT_EQ(sigpipe_count, 1);
	}
	close(l);

	for (i = 0; i < 4; i++) {
		T_ASSERT_EQ(socketpair(AF_UNIX, types[i % 2], 0, s), 0);
		t_queue_rw(&r, i < 2 ? IORING_OP_WRITE : IORING_OP_WRITEV, s[0],
			   buf, 0, 0, 2);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 2, 0), 0);
		T_ASSERT_EQ(recv(s[1], buf, sizeof(buf), MSG_DONTWAIT), 0);
		T_ASSERT_EQ(recv(s[1], buf, sizeof(buf), MSG_DONTWAIT), -1);
		T_ASSERT_EQ(errno, EAGAIN);
		close(s[0]);
		close(s[1]);
	}

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	t_queue_rw(&r, IORING_OP_WRITE, s[0], buf, 0, 0, 3);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, 0), 0);
	T_ASSERT_EQ(recv(s[1], buf, sizeof(buf), MSG_DONTWAIT), -1);
	T_ASSERT_EQ(errno, EAGAIN);
	close(s[0]);
	close(s[1]);
	t_ring_exit(&r);
	T_ASSERT_EQ(sigaction(SIGPIPE, &old, NULL), 0);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_read_parks();
	test_datagram();
	test_eof();
	test_epipe();
	test_write_parks();
	test_tcp_pingpong();
	test_rwf_nowait();
	test_offsets();
	test_write_nothing();
	return T_EXIT_PASS;
}
