/* SPDX-License-Identifier: MIT */
/*
 * CONNECT on a blocking socket (loopback only), against the kernel: its
 * io_connect passes O_NONBLOCK for the call and polls for POLLOUT, so it
 * needs no thread, and nowait must not either (tools/faults.sh's thread
 * mode runs this test with pthread_create failing). Checked: a connect to
 * a listener (0, the socket still blocking afterwards, data through it),
 * to a closed port (-ECONNREFUSED), on a connected socket (-EISCONN); a
 * connect that cannot finish (the listener's queue is full: its SYN is
 * dropped) stays pending, a second one on its socket is -EALREADY, and
 * ASYNC_CANCEL or a LINK_TIMEOUT ends it with -ECANCELED. -EINPROGRESS
 * never reaches a CQE.
 */
#include <fcntl.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "helpers.h"

static void prep_connect(struct io_uring_sqe *sqe, int fd,
			 const struct sockaddr_in *a, uint64_t user_data)
{
	t_prep_rw(sqe, IORING_OP_CONNECT, fd, a, 0, sizeof(*a), user_data);
}

static int do_connect(struct t_ring *r, int fd, const struct sockaddr_in *a)
{
	prep_connect(t_get_sqe(r), fd, a, 1);
	return t_run(r, 1);
}

/* To a listener: 0; the socket is still blocking and carries data. */
static void connect_ok(struct t_ring *r)
{
	struct sockaddr_in a;
	int l = t_tcp_listener(&a, 8), c = socket(AF_INET, SOCK_STREAM, 0), s;
	char buf[4];

	T_ASSERT_GE(c, 0);
	T_ASSERT_EQ(do_connect(r, c, &a), 0);
	T_ASSERT_EQ(fcntl(c, F_GETFL) & O_NONBLOCK, 0);
	s = accept(l, NULL, NULL);
	T_ASSERT_GE(s, 0);
	T_ASSERT_EQ(write(c, "ping", 4), 4);
	T_ASSERT_EQ(read(s, buf, 4), 4);
	T_ASSERT_EQ(memcmp(buf, "ping", 4), 0);
	/* Connected: a second CONNECT is -EISCONN. */
	T_ASSERT_EQ(do_connect(r, c, &a), -EISCONN);
	close(s);
	close(c);
	close(l);
}

/* A port nobody listens on: -ECONNREFUSED. */
static void connect_refused(struct t_ring *r)
{
	struct sockaddr_in a;
	int l = t_tcp_listener(&a, 1), c = socket(AF_INET, SOCK_STREAM, 0);

	T_ASSERT_GE(c, 0);
	close(l); /* the port is free again: nothing listens there */
	T_ASSERT_EQ(do_connect(r, c, &a), -ECONNREFUSED);
	T_ASSERT_EQ(fcntl(c, F_GETFL) & O_NONBLOCK, 0);
	close(c);
}

/*
 * A listener with backlog 0 and one connection queued, not accepted: its
 * accept queue is full and it drops further SYNs, so a connect to it
 * stays in SYN_SENT (a retransmit is dropped the same way).
 */
static int full_listener(struct sockaddr_in *a, int *queued)
{
	int l = t_tcp_listener(a, 0);

	*queued = t_tcp_connect(a);
	return l;
}

static void connect_pending(struct t_ring *r)
{
	struct io_uring_cqe cqe;
	struct io_uring_sqe *sqe;
	struct sockaddr_in a;
	int q, l = full_listener(&a, &q), c = socket(AF_INET, SOCK_STREAM, 0);

	T_ASSERT_GE(c, 0);
	prep_connect(t_get_sqe(r), c, &a, 2);
	T_ASSERT_EQ(t_submit(r), 1);
	t_expect_no_cqe(r, 100);
	/* Another CONNECT on the connecting socket: -EALREADY. */
	T_ASSERT_EQ(do_connect(r, c, &a), -EALREADY);
	sqe = t_get_sqe(r);
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->addr = 2;
	sqe->user_data = 3;
	T_ASSERT_EQ(t_submit_and_wait(r, 2), 1);
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		if (cqe.user_data == 2)
			T_ASSERT_EQ(cqe.res, -ECANCELED);
		else
			T_ASSERT_EQ(cqe.res, 0);
	}
	T_ASSERT_EQ(fcntl(c, F_GETFL) & O_NONBLOCK, 0);
	close(c);
	close(q);
	close(l);
}

/* A LINK_TIMEOUT on a connect that cannot finish cancels it. */
static void connect_link_timeout(struct t_ring *r)
{
	static struct __kernel_timespec ts = {.tv_nsec = 50000000};
	struct io_uring_cqe cqe;
	struct io_uring_sqe *sqe;
	struct sockaddr_in a;
	int q, l = full_listener(&a, &q), c = socket(AF_INET, SOCK_STREAM, 0);

	T_ASSERT_GE(c, 0);
	sqe = t_get_sqe(r);
	prep_connect(sqe, c, &a, 4);
	sqe->flags = IOSQE_IO_LINK;
	sqe = t_get_sqe(r);
	t_prep_rw(sqe, IORING_OP_LINK_TIMEOUT, -1, &ts, 1, 0, 5);
	T_ASSERT_EQ(t_submit_and_wait(r, 2), 2);
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		if (cqe.user_data == 4)
			T_ASSERT_EQ(cqe.res, -ECANCELED);
		else
			T_ASSERT_EQ(cqe.res, -ETIME);
	}
	close(c);
	close(q);
	close(l);
}

int main(void)
{
	struct t_ring r;

	t_require_engine();
	t_watchdog(30);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	connect_ok(&r);
	connect_refused(&r);
	connect_pending(&r);
	t_ring_exit(&r);
	/*
	 * A ring of its own: on the first one the socket's fd number was
	 * another socket's, and the engine's re-check of that watch
	 * (pollverify.c) can reissue the connect just as the timeout fires.
	 */
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	connect_link_timeout(&r);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
