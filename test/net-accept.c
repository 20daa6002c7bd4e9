/* SPDX-License-Identifier: MIT */
/*
 * SOCKET, ACCEPT, CONNECT and SHUTDOWN (io_uring/net.c) on 127.0.0.1 and
 * AF_UNIX: a SOCKET result is a usable fd; an ACCEPT parks until a CONNECT
 * (from another thread or an SQE) and fills addr/addrlen; the listener's
 * O_NONBLOCK is left alone; CONNECT on blocking and O_NONBLOCK sockets,
 * refused connections; SHUTDOWN then RECV gives 0; and the errors.
 */
#include <fcntl.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "helpers.h"

#define ACCEPT_DONTWAIT	  (1U << 1)
#define ACCEPT_POLL_FIRST (1U << 2)

static struct io_uring_sqe *prep(struct t_ring *r, int op, int fd,
				 const void *addr, unsigned int len,
				 uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, op, fd, addr, len, 0, ud);
	return sqe;
}

static unsigned int run1(struct t_ring *r, struct io_uring_sqe *sqe, int res)
{
	uint64_t ud = sqe->user_data;

	T_ASSERT_EQ(t_submit_and_wait(r, 1), 1);
	return t_expect_cqe(r, ud, res);
}

/* Wait for n CQEs (any order) into res[user_data]. */
static void collect(struct t_ring *r, unsigned int n, int *res,
		    unsigned int *flags)
{
	while (n--) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		T_ASSERT_LT(cqe.user_data, 16);
		res[cqe.user_data] = cqe.res;
		if (flags)
			flags[cqe.user_data] = cqe.flags;
	}
}

/* SOCKET through the ring: AF_INET stream, flags in the type. */
static int ring_socket(struct t_ring *r, int type)
{
	struct io_uring_sqe *sqe =
		prep(r, IORING_OP_SOCKET, AF_INET, NULL, 0, 100);
	struct io_uring_cqe cqe;

	sqe->off = (uint64_t)type;
	T_ASSERT_EQ(t_submit_and_wait(r, 1), 1);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 100);
	T_ASSERT_GE(cqe.res, 0);
	return cqe.res;
}

/* A listener on 127.0.0.1, port from the kernel; *addr gets its address. */
static void listen_on(int lfd, struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);

	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_ASSERT_EQ(bind(lfd, (struct sockaddr *)addr, sizeof(*addr)), 0);
	T_ASSERT_EQ(listen(lfd, 8), 0);
	T_ASSERT_EQ(getsockname(lfd, (struct sockaddr *)addr, &len), 0);
}

struct connector {
	pthread_t thread;
	struct sockaddr_in addr;
	int fd;
};

static void *connect_fn(void *arg)
{
	struct connector *c = arg;

	usleep(30000);
	T_ASSERT_EQ(
		connect(c->fd, (struct sockaddr *)&c->addr, sizeof(c->addr)),
		0);
	return NULL;
}

/* ACCEPT parks until another thread connects; addr/addrlen are filled. */
static void test_accept_thread(void)
{
	struct sockaddr_in addr, peer, local;
	socklen_t plen = sizeof(peer), llen = sizeof(local);
	struct io_uring_sqe *sqe;
	struct connector c;
	struct t_ring r;
	int lfd, afd, fl;
	char buf[8];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	lfd = ring_socket(&r, SOCK_STREAM);
	listen_on(lfd, &addr);
	sqe = prep(&r, IORING_OP_ACCEPT, lfd, &peer, 0, 1);
	sqe->addr2 = (uint64_t)(uintptr_t)&plen;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 10);
	c.addr = addr;
	c.fd = socket(AF_INET, SOCK_STREAM, 0);
	T_ASSERT_GE(c.fd, 0);
	T_ASSERT_EQ(pthread_create(&c.thread, NULL, connect_fn, &c), 0);
	{
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, 1);
		T_ASSERT_GE(cqe.res, 0);
		afd = cqe.res;
	}
	pthread_join(c.thread, NULL);
	T_ASSERT_EQ(plen, sizeof(peer));
	T_ASSERT_EQ(peer.sin_family, AF_INET);
	T_ASSERT_EQ(peer.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	T_ASSERT_EQ(getsockname(c.fd, (struct sockaddr *)&local, &llen), 0);
	T_ASSERT_EQ(peer.sin_port, local.sin_port);
	/* The listener stays blocking; the accepted fd has no flags. */
	fl = fcntl(lfd, F_GETFL);
	T_ASSERT_EQ(fl & O_NONBLOCK, 0);
	T_ASSERT_EQ(fcntl(afd, F_GETFL) & O_NONBLOCK, 0);
	T_ASSERT_EQ(fcntl(afd, F_GETFD) & FD_CLOEXEC, 0);
	/* Both ways over the accepted connection. */
	run1(&r, prep(&r, IORING_OP_SEND, afd, "srv", 3, 2), 3);
	run1(&r, prep(&r, IORING_OP_RECV, c.fd, buf, sizeof(buf), 3), 3);
	T_ASSERT_EQ(memcmp(buf, "srv", 3), 0);
	run1(&r, prep(&r, IORING_OP_SEND, c.fd, "cli", 3, 4), 3);
	run1(&r, prep(&r, IORING_OP_RECV, afd, buf, sizeof(buf), 5), 3);
	T_ASSERT_EQ(memcmp(buf, "cli", 3), 0);
	close(afd);
	close(c.fd);
	close(lfd);
	t_ring_exit(&r);
}

/* ACCEPT and CONNECT SQEs in one batch, blocking and O_NONBLOCK clients. */
static void test_accept_connect_sqe(void)
{
	static const int types[] = {SOCK_STREAM, SOCK_STREAM | SOCK_NONBLOCK};
	struct sockaddr_in addr;
	struct t_ring r;
	int lfd, res[16];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	listen_on(lfd, &addr);
	for (unsigned int i = 0; i < 2; i++) {
		struct io_uring_sqe *sqe;
		int cfd = ring_socket(&r, types[i]), err = -1;
		socklen_t len = sizeof(err);

		sqe = prep(&r, IORING_OP_ACCEPT, lfd, NULL, 0, 1);
		sqe->accept_flags = SOCK_NONBLOCK | SOCK_CLOEXEC;
		sqe = prep(&r, IORING_OP_CONNECT, cfd, &addr, 0, 2);
		sqe->addr2 = sizeof(addr);
		T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
		collect(&r, 2, res, NULL);
		T_ASSERT_GE(res[1], 0);
		T_ASSERT_EQ(res[2], 0);
		T_ASSERT_EQ(fcntl(res[1], F_GETFL) & O_NONBLOCK, O_NONBLOCK);
		T_ASSERT_EQ(fcntl(res[1], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
		T_ASSERT_EQ(getsockopt(cfd, SOL_SOCKET, SO_ERROR, &err, &len),
			    0);
		T_ASSERT_EQ(err, 0);
		/* Connected again: -EISCONN. */
		sqe = prep(&r, IORING_OP_CONNECT, cfd, &addr, 0, 3);
		sqe->addr2 = sizeof(addr);
		run1(&r, sqe, -EISCONN);
		close(res[1]);
		close(cfd);
	}
	T_ASSERT_EQ(fcntl(lfd, F_GETFL) & O_NONBLOCK, 0);
	close(lfd);
	t_ring_exit(&r);
}

/* CONNECT to a port nobody listens on: -ECONNREFUSED either way. */
static void test_connect_refused(void)
{
	static const int types[] = {SOCK_STREAM, SOCK_STREAM | SOCK_NONBLOCK};
	struct sockaddr_in addr;
	socklen_t len = sizeof(addr);
	struct t_ring r;
	int fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_ASSERT_EQ(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	T_ASSERT_EQ(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
	close(fd); /* the port is now closed */
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	for (unsigned int i = 0; i < 2; i++) {
		struct io_uring_sqe *sqe;

		fd = socket(AF_INET, types[i], 0);
		sqe = prep(&r, IORING_OP_CONNECT, fd, &addr, 0, 1);
		sqe->addr2 = sizeof(addr);
		run1(&r, sqe, -ECONNREFUSED);
		close(fd);
	}
	/* Bad address length, bad address pointer. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	run1(&r, prep(&r, IORING_OP_CONNECT, fd, &addr, 0, 2), -EINVAL);
	prep(&r, IORING_OP_CONNECT, fd, &addr, 0, 3)->addr2 = 129;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	t_expect_cqe(&r, 3, -EINVAL);
	prep(&r, IORING_OP_CONNECT, fd, (void *)8, 0, 4)->addr2 = 16;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	t_expect_cqe(&r, 4, -EFAULT);
	close(fd);
	t_ring_exit(&r);
}

/* AF_UNIX: ACCEPT parked, then a CONNECT SQE to the abstract address. */
static void test_unix(void)
{
	struct sockaddr_un addr, peer;
	socklen_t alen, plen = sizeof(peer);
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int lfd, cfd, res[16];
	char buf[8];

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "nowait-net-%d",
		 (int)getpid());
	alen = offsetof(struct sockaddr_un, sun_path) + 1 +
	       strlen(addr.sun_path + 1);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	T_ASSERT_EQ(bind(lfd, (struct sockaddr *)&addr, alen), 0);
	T_ASSERT_EQ(listen(lfd, 4), 0);
	cfd = socket(AF_UNIX, SOCK_STREAM, 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	sqe = prep(&r, IORING_OP_ACCEPT, lfd, &peer, 0, 1);
	sqe->addr2 = (uint64_t)(uintptr_t)&plen;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	sqe = prep(&r, IORING_OP_CONNECT, cfd, &addr, 0, 2);
	sqe->addr2 = alen;
	T_ASSERT_EQ(t_submit(&r), 1);
	collect(&r, 2, res, NULL);
	T_ASSERT_GE(res[1], 0);
	T_ASSERT_EQ(res[2], 0);
	T_ASSERT_EQ(plen, sizeof(sa_family_t)); /* unbound peer */
	run1(&r, prep(&r, IORING_OP_SEND, cfd, "unix", 4, 3), 4);
	run1(&r, prep(&r, IORING_OP_RECV, res[1], buf, sizeof(buf), 4), 4);
	close(res[1]);
	close(cfd);
	close(lfd);
	t_ring_exit(&r);
}

/* ACCEPT_DONTWAIT, POLL_FIRST, SOCK_NONEMPTY, not a listener, not a socket. */
static void test_accept_flags(void)
{
	struct sockaddr_in addr;
	struct t_ring r;
	int lfd, c[2], p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	listen_on(lfd, &addr);
	prep(&r, IORING_OP_ACCEPT, lfd, NULL, 0, 1)->ioprio = ACCEPT_DONTWAIT;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	t_expect_cqe(&r, 1, -EAGAIN);
	/* Two connections queued: the first ACCEPT says more are there. */
	for (int i = 0; i < 2; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		T_ASSERT_EQ(
			connect(c[i], (struct sockaddr *)&addr, sizeof(addr)),
			0);
	}
	usleep(2000);
	prep(&r, IORING_OP_ACCEPT, lfd, NULL, 0, 2)->ioprio = ACCEPT_POLL_FIRST;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	{
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_GE(cqe.res, 0);
		T_ASSERT_EQ(cqe.flags & IORING_CQE_F_SOCK_NONEMPTY,
			    IORING_CQE_F_SOCK_NONEMPTY);
		close(cqe.res);
		prep(&r, IORING_OP_ACCEPT, lfd, NULL, 0, 3);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_GE(cqe.res, 0);
		T_ASSERT_EQ(cqe.flags & IORING_CQE_F_SOCK_NONEMPTY, 0);
		close(cqe.res);
	}
	/*
	 * POLL_FIRST on a listener already watched, a connection queued and
	 * its edge seen (the TIMEOUT's wait harvests it): accepted at once.
	 */
	{
		struct __kernel_timespec ts = {0, 20 * 1000 * 1000};
		struct io_uring_sqe *sqe;
		struct io_uring_cqe cqe;
		int c3 = socket(AF_INET, SOCK_STREAM, 0);

		T_ASSERT_EQ(connect(c3, (struct sockaddr *)&addr, sizeof(addr)),
			    0);
		sqe = t_get_sqe(&r);
		sqe->opcode = IORING_OP_TIMEOUT;
		sqe->addr = (uintptr_t)&ts;
		sqe->len = 1;
		sqe->user_data = 40;
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		t_expect_cqe(&r, 40, -ETIME);
		prep(&r, IORING_OP_ACCEPT, lfd, NULL, 0, 41)->ioprio =
			ACCEPT_POLL_FIRST;
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, 41);
		T_ASSERT_GE(cqe.res, 0);
		close(cqe.res);
		close(c3);
	}
	/* Not listening: -EINVAL; a pipe: -ENOTSOCK; bad flags: -EINVAL. */
	run1(&r, prep(&r, IORING_OP_ACCEPT, c[0], NULL, 0, 4), -EINVAL);
	T_ASSERT_EQ(pipe(p), 0);
	run1(&r, prep(&r, IORING_OP_ACCEPT, p[0], NULL, 0, 5), -ENOTSOCK);
	prep(&r, IORING_OP_ACCEPT, lfd, NULL, 0, 6)->accept_flags = O_APPEND;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	t_expect_cqe(&r, 6, -EINVAL);
	prep(&r, IORING_OP_ACCEPT, lfd, NULL, 0, 7)->ioprio = 1U << 5;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	t_expect_cqe(&r, 7, -EINVAL);
	run1(&r, prep(&r, IORING_OP_ACCEPT, lfd, NULL, 1, 8), -EINVAL);
	close(p[0]);
	close(p[1]);
	close(c[0]);
	close(c[1]);
	close(lfd);
	t_ring_exit(&r);
}

/* SHUTDOWN(SHUT_WR) then RECV on the peer: 0. Errors. */
static void test_shutdown(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	char buf[8];
	int s[2], p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 10);
	run1(&r, prep(&r, IORING_OP_SHUTDOWN, s[1], NULL, SHUT_WR, 2), 0);
	t_expect_cqe(&r, 1, 0);
	run1(&r, prep(&r, IORING_OP_RECV, s[0], buf, sizeof(buf), 3), 0);
	/* Writing after SHUT_WR: -EPIPE. */
	run1(&r, prep(&r, IORING_OP_SEND, s[1], "x", 1, 4), -EPIPE);
	run1(&r, prep(&r, IORING_OP_SHUTDOWN, s[1], NULL, 7, 5), -EINVAL);
	T_ASSERT_EQ(pipe(p), 0);
	run1(&r, prep(&r, IORING_OP_SHUTDOWN, p[0], NULL, SHUT_RD, 6),
	     -ENOTSOCK);
	run1(&r, prep(&r, IORING_OP_SHUTDOWN, 999, NULL, SHUT_RD, 7), -EBADF);
	sqe = prep(&r, IORING_OP_SHUTDOWN, s[0], NULL, SHUT_RD, 8);
	sqe->off = 1;
	run1(&r, sqe, -EINVAL);
	close(p[0]);
	close(p[1]);
	close(s[0]);
	close(s[1]);
	t_ring_exit(&r);
}

/* SOCKET: usable fds, flags in the type, errors. */
static void test_socket(void)
{
	struct sockaddr_in addr;
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int fd;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	fd = ring_socket(&r, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC);
	T_ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	T_ASSERT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	listen_on(fd, &addr);
	close(fd);
	fd = ring_socket(&r, SOCK_DGRAM);
	T_ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	sqe = prep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, 1);
	sqe->off = SOCK_STREAM | O_APPEND;
	run1(&r, sqe, -EINVAL);
	sqe = prep(&r, IORING_OP_SOCKET, 12345, NULL, 0, 2);
	sqe->off = SOCK_STREAM;
	run1(&r, sqe, -EAFNOSUPPORT);
	sqe = prep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, 3);
	sqe->off = SOCK_STREAM;
	sqe->addr = 1;
	run1(&r, sqe, -EINVAL);
	sqe = prep(&r, IORING_OP_SOCKET, AF_INET, NULL, 0, 4);
	sqe->off = SOCK_STREAM | SOCK_CLOEXEC;
	sqe->file_index = 1;
	run1(&r, sqe, -EINVAL);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_accept_thread();
	test_accept_connect_sqe();
	test_connect_refused();
	test_unix();
	test_accept_flags();
	test_shutdown();
	test_socket();
	return T_EXIT_PASS;
}
