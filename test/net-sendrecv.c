/* SPDX-License-Identifier: MIT */
/*
 * SEND and RECV (io_uring/net.c): both ways over TCP on 127.0.0.1 and
 * AF_UNIX socketpairs, a RECV parked until data arrives, MSG_WAITALL with
 * data arriving in pieces (and a short result failing a link), SEND to a
 * closed peer (-EPIPE, no SIGPIPE: sends add MSG_NOSIGNAL), MSG_DONTWAIT,
 * IORING_RECVSEND_POLL_FIRST, SEND to an address, and the errors: not a
 * socket, bad buffers, bad flags.
 */
#include <fcntl.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "helpers.h"

#define POLL_FIRST (1U << 0) /* IORING_RECVSEND_POLL_FIRST */
#define MULTISHOT  (1U << 1) /* IORING_RECV_MULTISHOT */
#define KIND_TCP   (SOCK_STREAM + 100)

static volatile sig_atomic_t sigpipe_count;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipe_count++;
}

static struct io_uring_sqe *prep(struct t_ring *r, int op, int fd,
				 const void *addr, unsigned int len,
				 uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, op, fd, addr, len, 0, ud);
	return sqe;
}

/* The SQE prepared last. */
static struct io_uring_sqe *last(struct t_ring *r)
{
	return &r->sqes[(r->sqe_tail - 1) & (r->p.sq_entries - 1)];
}

/* One SQE, submitted and waited for: its CQE must be (ud, res). */
static unsigned int run1(struct t_ring *r, struct io_uring_sqe *sqe, int res)
{
	uint64_t ud = sqe->user_data;

	T_ASSERT_EQ(t_submit_and_wait(r, 1), 1);
	return t_expect_cqe(r, ud, res);
}

static void make_pair(int kind, int s[2])
{
	if (kind == KIND_TCP)
		t_tcp_pair(s);
	else
		T_ASSERT_EQ(socketpair(AF_UNIX, kind, 0, s), 0);
}

static const int kinds[] = {SOCK_STREAM, SOCK_SEQPACKET, SOCK_DGRAM, KIND_TCP};

/* SEND/RECV both ways; a RECV parks until the peer sends. */
static void test_basic(void)
{
	for (unsigned int k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct t_writer w;
		struct t_ring r;
		char buf[64];
		int s[2];

		make_pair(kinds[k], s);
		T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
		run1(&r, prep(&r, IORING_OP_SEND, s[0], "hello", 5, 1), 5);
		memset(buf, 0, sizeof(buf));
		run1(&r, prep(&r, IORING_OP_RECV, s[1], buf, sizeof(buf), 2),
		     5);
		T_ASSERT_EQ(memcmp(buf, "hello", 5), 0);
		run1(&r, prep(&r, IORING_OP_SEND, s[1], "back", 4, 3), 4);
		run1(&r, prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 4),
		     4);
		T_ASSERT_EQ(memcmp(buf, "back", 4), 0);

		/* Parked: nothing there yet. */
		prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 5);
		T_ASSERT_EQ(t_submit(&r), 1);
		t_expect_no_cqe(&r, 30);
		T_ASSERT_EQ(write(s[1], "late", 4), 4);
		t_expect_cqe(&r, 5, 4);
		T_ASSERT_EQ(memcmp(buf, "late", 4), 0);

		/* From another thread while we wait in enter. */
		prep(&r, IORING_OP_RECV, s[1], buf, sizeof(buf), 6);
		t_writer_start(&w, s[0], "thread", 6, 20000);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		t_expect_cqe(&r, 6, 6);
		T_ASSERT_EQ(t_writer_join(&w), 6);
		T_ASSERT_EQ(memcmp(buf, "thread", 6), 0);

		/* RECV and SEND in one batch: the RECV parks, the SEND wakes it. */
		prep(&r, IORING_OP_RECV, s[1], buf, sizeof(buf), 7);
		prep(&r, IORING_OP_SEND, s[0], "batch", 5, 8);
		T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
		for (int i = 0; i < 2; i++) {
			struct io_uring_cqe cqe;

			T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
			T_ASSERT(cqe.user_data == 7 || cqe.user_data == 8);
			T_ASSERT_EQ(cqe.res, 5);
		}
		T_ASSERT_EQ(memcmp(buf, "batch", 5), 0);

		/* EOF: the peer closes while a RECV is parked. */
		if (kinds[k] != SOCK_DGRAM) {
			prep(&r, IORING_OP_RECV, s[1], buf, sizeof(buf), 9);
			T_ASSERT_EQ(t_submit(&r), 1);
			t_expect_no_cqe(&r, 10);
			close(s[0]);
			t_expect_cqe(&r, 9, 0);
		} else {
			close(s[0]);
		}
		t_ring_exit(&r);
		close(s[1]);
	}
}

struct pieces {
	pthread_t thread;
	int fd;
	bool shut; /* shutdown(SHUT_WR) after the pieces */
};

/* Three pieces of four bytes, 15 ms apart. */
static void *pieces_fn(void *arg)
{
	struct pieces *p = arg;

	for (int i = 0; i < 3; i++) {
		usleep(15000);
		T_ASSERT_EQ(write(p->fd, &"abcdefghijkl"[4 * i], 4), 4);
	}
	if (p->shut)
		T_ASSERT_EQ(shutdown(p->fd, SHUT_WR), 0);
	return NULL;
}

/* MSG_WAITALL: the pieces accumulate; a short result fails a link. */
static void test_waitall(void)
{
	int kinds2[] = {SOCK_STREAM, KIND_TCP};

	for (unsigned int k = 0; k < 2; k++) {
		struct pieces p;
		struct t_ring r;
		char buf[32];
		int s[2];

		make_pair(kinds2[k], s);
		T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
		memset(buf, 0, sizeof(buf));
		prep(&r, IORING_OP_RECV, s[0], buf, 12, 1)->msg_flags =
			MSG_WAITALL;
		p.fd = s[1];
		p.shut = false;
		T_ASSERT_EQ(pthread_create(&p.thread, NULL, pieces_fn, &p), 0);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		t_expect_cqe(&r, 1, 12);
		T_ASSERT_EQ(memcmp(buf, "abcdefghijkl", 12), 0);
		pthread_join(p.thread, NULL);

		/* Asking for 16, the peer sends 12 and shuts down: 12, and
		 * the linked NOP is cancelled. */
		prep(&r, IORING_OP_RECV, s[0], buf, 16, 2)->msg_flags =
			MSG_WAITALL;
		last(&r)->flags = IOSQE_IO_LINK;
		t_prep_nop(t_get_sqe(&r), 3);
		p.shut = true;
		T_ASSERT_EQ(pthread_create(&p.thread, NULL, pieces_fn, &p), 0);
		T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
		t_expect_cqe(&r, 2, 12);
		t_expect_cqe(&r, 3, -ECANCELED);
		pthread_join(p.thread, NULL);
		t_ring_exit(&r);
		close(s[0]);
		close(s[1]);
	}
}

/* Without MSG_WAITALL a short RECV is a success: the link goes on. */
static void test_short_no_waitall(void)
{
	struct t_ring r;
	char buf[32];
	int s[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(write(s[1], "abc", 3), 3);
	prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 1)->flags =
		IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&r), 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	t_expect_cqe(&r, 1, 3);
	t_expect_cqe(&r, 2, 0);

	/* A datagram shorter than a MSG_WAITALL buffer: short, link fails. */
	close(s[0]);
	close(s[1]);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, s), 0);
	T_ASSERT_EQ(write(s[1], "dgram", 5), 5);
	prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 3)->msg_flags =
		MSG_WAITALL;
	last(&r)->flags = IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&r), 4);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	t_expect_cqe(&r, 3, 5);
	t_expect_cqe(&r, 4, -ECANCELED);
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

/* A big MSG_WAITALL SEND through a small socket buffer, a reader draining. */
static void *drain_fn(void *arg)
{
	static char sink[4096];
	int fd = *(int *)arg;
	size_t got = 0;
	ssize_t n;

	while (got < (1 << 18) && (n = read(fd, sink, sizeof(sink))) > 0)
		got += (size_t)n;
	*(int *)arg = (int)got;
	return NULL;
}

static void test_send_waitall(void)
{
	static char big[1 << 18];
	struct t_ring r;
	pthread_t th;
	int s[2], sndbuf = 4096, arg;

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(setsockopt(s[0], SOL_SOCKET, SO_SNDBUF, &sndbuf,
			       sizeof(sndbuf)),
		    0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	memset(big, 'x', sizeof(big));
	arg = s[1];
	T_ASSERT_EQ(pthread_create(&th, NULL, drain_fn, &arg), 0);
	prep(&r, IORING_OP_SEND, s[0], big, sizeof(big), 1)->msg_flags =
		MSG_WAITALL;
	run1(&r, last(&r), sizeof(big));
	pthread_join(th, NULL);
	T_ASSERT_EQ(arg, sizeof(big));
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

/* SEND to a peer that is gone: -EPIPE and no SIGPIPE (MSG_NOSIGNAL). */
static void test_epipe(void)
{
	struct sigaction sa, old;
	struct t_ring r;
	int s[2];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigpipe;
	T_ASSERT_EQ(sigaction(SIGPIPE, &sa, &old), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	sigpipe_count = 0;
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	close(s[1]);
	run1(&r, prep(&r, IORING_OP_SEND, s[0], "gone", 4, 1), -EPIPE);
	close(s[0]);

	t_tcp_pair(s);
	T_ASSERT_EQ(shutdown(s[0], SHUT_WR), 0);
	run1(&r, prep(&r, IORING_OP_SEND, s[0], "shut", 4, 2), -EPIPE);
	/* Also from a worker (IOSQE_ASYNC). */
	prep(&r, IORING_OP_SEND, s[0], "shut", 4, 3)->flags = IOSQE_ASYNC;
	run1(&r, last(&r), -EPIPE);
	usleep(10000);
	T_ASSERT_EQ(sigpipe_count, 0);
	close(s[0]);
	close(s[1]);
	t_ring_exit(&r);
	T_ASSERT_EQ(sigaction(SIGPIPE, &old, NULL), 0);
}

/* MSG_DONTWAIT: -EAGAIN is final. POLL_FIRST: waits, then receives. */
static void test_dontwait_pollfirst(void)
{
	struct t_ring r;
	char buf[16];
	int s[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 1)->msg_flags =
		MSG_DONTWAIT;
	run1(&r, last(&r), -EAGAIN);

	/* POLL_FIRST with data already there: completes. */
	T_ASSERT_EQ(write(s[1], "pf", 2), 2);
	prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 2)->ioprio =
		POLL_FIRST;
	run1(&r, last(&r), 2);
	/* POLL_FIRST without data: parks until the peer sends. */
	prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 3)->ioprio =
		POLL_FIRST;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(s[1], "abc", 3), 3);
	t_expect_cqe(&r, 3, 3);
	/* SEND with POLL_FIRST on a writable socket. */
	prep(&r, IORING_OP_SEND, s[1], "q", 1, 4)->ioprio = POLL_FIRST;
	run1(&r, last(&r), 1);
	T_ASSERT_EQ(read(s[0], buf, sizeof(buf)), 1);
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

/*
 * POLL_FIRST on files that are no socket and have no ->poll: io_recv
 * answers -EAGAIN before it looks for a socket, and io-wq, unable to poll
 * the file, keeps that answer; without POLL_FIRST, or on SEND (the socket
 * first), -ENOTSOCK.
 */
static void test_pollfirst_nonsock(void)
{
	char path[] = "/tmp/nowait-pf.XXXXXX", buf[8];
	int fds[2], f;
	struct t_ring r;

	fds[0] = open("/dev/null", O_RDWR);
	fds[1] = f = mkstemp(path);
	T_ASSERT_GE(fds[0], 0);
	T_ASSERT_GE(f, 0);
	unlink(path);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	for (int i = 0; i < 2; i++) {
		prep(&r, IORING_OP_RECV, fds[i], buf, sizeof(buf), 1)->ioprio =
			POLL_FIRST;
		run1(&r, last(&r), -EAGAIN);
		run1(&r, prep(&r, IORING_OP_RECV, fds[i], buf, 0, 2),
		     -ENOTSOCK);
		prep(&r, IORING_OP_SEND, fds[i], "x", 1, 3)->ioprio =
			POLL_FIRST;
		run1(&r, last(&r), -ENOTSOCK);
	}
	t_ring_exit(&r);
	close(fds[0]);
	close(f);
}

/* SEND with a destination (addr2, addr_len) on an unconnected UDP socket. */
static void test_sendto(void)
{
	struct sockaddr_in addr;
	socklen_t len = sizeof(addr);
	struct io_uring_sqe *sqe;
	struct t_ring r;
	char buf[16];
	int a, b;

	a = socket(AF_INET, SOCK_DGRAM, 0);
	b = socket(AF_INET, SOCK_DGRAM, 0);
	T_ASSERT_GE(a, 0);
	T_ASSERT_GE(b, 0);
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_ASSERT_EQ(bind(b, (struct sockaddr *)&addr, sizeof(addr)), 0);
	T_ASSERT_EQ(getsockname(b, (struct sockaddr *)&addr, &len), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep(&r, IORING_OP_RECV, b, buf, sizeof(buf), 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	sqe = prep(&r, IORING_OP_SEND, a, "udp!", 4, 2);
	sqe->addr2 = (uint64_t)(uintptr_t)&addr;
	sqe->addr_len = sizeof(addr);
	T_ASSERT_EQ(t_submit(&r), 1);
	for (int i = 0; i < 2; i++) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.res, 4);
	}
	T_ASSERT_EQ(memcmp(buf, "udp!", 4), 0);
	/* Without an address: not connected. */
	run1(&r, prep(&r, IORING_OP_SEND, a, "x", 1, 3), -EDESTADDRREQ);
	/* addr_len larger than a sockaddr_storage. */
	sqe = prep(&r, IORING_OP_SEND, a, "x", 1, 4);
	sqe->addr2 = (uint64_t)(uintptr_t)&addr;
	sqe->addr_len = 200;
	run1(&r, sqe, -EINVAL);
	t_ring_exit(&r);
	close(a);
	close(b);
}

/* IORING_CQE_F_SOCK_NONEMPTY: data left behind a RECV on a stream only. */
static void test_nonempty(void)
{
	int kinds2[] = {SOCK_STREAM, KIND_TCP};

	for (unsigned int k = 0; k < 2; k++) {
		struct t_ring r;
		unsigned int fl;
		char buf[16];
		int s[2];

		make_pair(kinds2[k], s);
		T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
		T_ASSERT_EQ(write(s[1], "12345678", 8), 8);
		usleep(2000);
		fl = run1(&r, prep(&r, IORING_OP_RECV, s[0], buf, 4, 1), 4);
		T_ASSERT_EQ(fl & IORING_CQE_F_SOCK_NONEMPTY,
			    IORING_CQE_F_SOCK_NONEMPTY);
		fl = run1(&r, prep(&r, IORING_OP_RECV, s[0], buf, 4, 2), 4);
		T_ASSERT_EQ(fl & IORING_CQE_F_SOCK_NONEMPTY, 0);
		t_ring_exit(&r);
		close(s[0]);
		close(s[1]);
	}
	/* Datagrams: none, even with another queued behind a full buffer. */
	for (unsigned int k = 0; k < 2; k++) {
		struct t_ring r;
		unsigned int fl;
		char buf[16];
		int s[2];

		make_pair(k ? SOCK_SEQPACKET : SOCK_DGRAM, s);
		T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
		T_ASSERT_EQ(write(s[1], "1234", 4), 4);
		T_ASSERT_EQ(write(s[1], "5678", 4), 4);
		fl = run1(&r, prep(&r, IORING_OP_RECV, s[0], buf, 4, 1), 4);
		T_ASSERT_EQ(fl & IORING_CQE_F_SOCK_NONEMPTY, 0);
		fl = run1(&r, prep(&r, IORING_OP_RECV, s[0], buf, 4, 2), 4);
		T_ASSERT_EQ(memcmp(buf, "5678", 4), 0);
		T_ASSERT_EQ(fl & IORING_CQE_F_SOCK_NONEMPTY, 0);
		t_ring_exit(&r);
		close(s[0]);
		close(s[1]);
	}
}

/* Not a socket, bad buffers, bad flags, bad fd. */
static void test_errors(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	char buf[16], *bad;
	int p[2], s[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	run1(&r, prep(&r, IORING_OP_RECV, p[0], buf, sizeof(buf), 1),
	     -ENOTSOCK);
	run1(&r, prep(&r, IORING_OP_SEND, p[1], "x", 1, 2), -ENOTSOCK);
	run1(&r, prep(&r, IORING_OP_RECV, 999, buf, sizeof(buf), 3), -EBADF);

	/* A buffer that is not mapped. */
	bad = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(bad != MAP_FAILED);
	T_ASSERT_EQ(munmap(bad, 4096), 0);
	run1(&r, prep(&r, IORING_OP_SEND, s[0], bad, 8, 4), -EFAULT);
	T_ASSERT_EQ(write(s[1], "data", 4), 4);
	run1(&r, prep(&r, IORING_OP_RECV, s[0], bad, 8, 5), -EFAULT);
	/* A kernel address: refused (at prep in the kernel). */
	run1(&r,
	     prep(&r, IORING_OP_RECV, s[0], (void *)0xffff800000000000ULL, 8,
		  6),
	     -EFAULT);
	run1(&r, prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 7), 4);

	/* Unknown ioprio bits, addr2 on RECV, multishot without buffers. */
	prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 8)->ioprio = 1U << 7;
	run1(&r, last(&r), -EINVAL);
	prep(&r, IORING_OP_SEND, s[0], "x", 1, 9)->ioprio = 1U << 7;
	run1(&r, last(&r), -EINVAL);
	sqe = prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 10);
	sqe->addr2 = 1;
	run1(&r, sqe, -EINVAL);
	prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 11)->ioprio =
		MULTISHOT;
	run1(&r, last(&r), -EINVAL);
	sqe = prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 12);
	sqe->file_index = 1;
	run1(&r, sqe, -EINVAL);
	sqe = prep(&r, IORING_OP_SEND, s[0], "x", 1, 13);
	sqe->__pad3[0] = 1;
	run1(&r, sqe, -EINVAL);
	/* The socket still works. */
	run1(&r, prep(&r, IORING_OP_SEND, s[1], "ok", 2, 14), 2);
	run1(&r, prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 15), 2);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
	close(s[0]);
	close(s[1]);
}

/* A TCP stream of 200 request/response rounds through SEND and RECV. */
static void test_pingpong(void)
{
	struct io_uring_cqe cqe;
	struct t_ring r;
	uint32_t i, v, got;
	int s[2];

	t_tcp_pair(s);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	for (i = 0; i < 200; i++) {
		prep(&r, IORING_OP_RECV, s[1], &got, sizeof(got), 2 * i);
		v = i;
		prep(&r, IORING_OP_SEND, s[0], &v, sizeof(v), 2 * i + 1);
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

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_basic();
	test_waitall();
	test_short_no_waitall();
	test_send_waitall();
	test_epipe();
	test_dontwait_pollfirst();
	test_pollfirst_nonsock();
	test_sendto();
	test_nonempty();
	test_errors();
	test_pingpong();
	return T_EXIT_PASS;
}
