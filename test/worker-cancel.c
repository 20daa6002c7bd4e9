/* SPDX-License-Identifier: MIT */
/*
 * Cancelling requests that wait in a worker, against the kernel: a
 * CONNECT on a blocking socket that blocks (the listener's accept queue
 * is full) is cancelled by a LINK_TIMEOUT (-ETIME, the CONNECT
 * -ECANCELED, liburing's test_connect_timeout) and by ASYNC_CANCEL (0 and
 * -ECANCELED); an IOSQE_ASYNC read of an empty blocking pipe is cancelled
 * the same way; and ring exit cancels what is in flight and closes the
 * registered files (liburing's ring-leak test_iowq_request_cancel).
 */
#include <fcntl.h>
#include <poll.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "helpers.h"

static void prep_cancel(struct io_uring_sqe *sqe, uint64_t target,
			unsigned int flags, uint64_t ud)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->fd = -1;
	sqe->addr = target;
	sqe->cancel_flags = flags;
	sqe->user_data = ud;
}

static void prep_link_timeout(struct io_uring_sqe *sqe,
			      struct __kernel_timespec *ts, uint64_t ud)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_LINK_TIMEOUT;
	sqe->fd = -1;
	sqe->addr = (uintptr_t)ts;
	sqe->len = 1;
	sqe->user_data = ud;
}

/* Wait for n CQEs (any order) into res[user_data]. */
static void collect(struct t_ring *r, unsigned int n, int *res)
{
	while (n--) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		T_ASSERT_LT(cqe.user_data, 8);
		res[cqe.user_data] = cqe.res;
	}
}

/*
 * A listener with a full accept queue (backlog 0, one connection queued
 * and not accepted): a further blocking connect to it blocks. *cfd gets
 * the queued client, *addr the listener's address.
 */
static int full_listener(struct sockaddr_in *addr, int *cfd)
{
	socklen_t len = sizeof(*addr);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	T_ASSERT_GE(lfd, 0);
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_ASSERT_EQ(bind(lfd, (struct sockaddr *)addr, sizeof(*addr)), 0);
	T_ASSERT_EQ(listen(lfd, 0), 0);
	T_ASSERT_EQ(getsockname(lfd, (struct sockaddr *)addr, &len), 0);
	*cfd = socket(AF_INET, SOCK_STREAM, 0);
	T_ASSERT_GE(*cfd, 0);
	T_ASSERT_EQ(connect(*cfd, (struct sockaddr *)addr, sizeof(*addr)), 0);
	return lfd;
}

static struct io_uring_sqe *prep_connect(struct t_ring *r, int fd,
					 struct sockaddr_in *addr, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_CONNECT, fd, addr, 0, sizeof(*addr), ud);
	return sqe;
}

/* A LINK_TIMEOUT ends a CONNECT that blocks: -ETIME and -ECANCELED. */
static void test_connect_link_timeout(void)
{
	struct __kernel_timespec ts = {0, 100000000};
	struct sockaddr_in addr;
	int lfd, cfd, fd, res[8] = {0};
	struct t_ring r;
	uint64_t t0;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	lfd = full_listener(&addr, &cfd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	T_ASSERT_GE(fd, 0);
	prep_connect(&r, fd, &addr, 1)->flags |= IOSQE_IO_LINK;
	prep_link_timeout(t_get_sqe(&r), &ts, 2);
	t0 = t_now_us();
	T_ASSERT_EQ(t_submit(&r), 2);
	collect(&r, 2, res);
	T_ASSERT_EQ(res[1], -ECANCELED);
	T_ASSERT_EQ(res[2], -ETIME);
	T_ASSERT_GE(t_now_us() - t0, 90000);
	T_ASSERT_LT(t_now_us() - t0, 3000000);
	close(fd);
	close(cfd);
	close(lfd);
	t_ring_exit(&r);
}

/* ASYNC_CANCEL of a CONNECT that blocks: 0 and -ECANCELED. */
static void test_connect_cancel(void)
{
	struct sockaddr_in addr;
	int lfd, cfd, fd, res[8] = {0};
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	lfd = full_listener(&addr, &cfd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	T_ASSERT_GE(fd, 0);
	prep_connect(&r, fd, &addr, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 50);
	prep_cancel(t_get_sqe(&r), 1, 0, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	collect(&r, 2, res);
	T_ASSERT_EQ(res[2], 0);
	T_ASSERT_EQ(res[1], -ECANCELED);
	close(fd);
	close(cfd);
	close(lfd);
	t_ring_exit(&r);
}

/* IOSQE_ASYNC read of an empty blocking pipe: cancelled by user_data. */
static void test_async_read_cancel(unsigned int cancel_flags)
{
	int p[2], res[8] = {0};
	struct io_uring_sqe *sqe;
	struct t_ring r;
	char buf[16];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 1);
	sqe->flags |= IOSQE_ASYNC;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 50);
	prep_cancel(t_get_sqe(&r), 1, cancel_flags, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	collect(&r, 2, res);
	T_ASSERT_EQ(res[1], -ECANCELED);
	T_ASSERT_EQ(res[2], (cancel_flags & IORING_ASYNC_CANCEL_ALL) ? 1 : 0);
	/* The pipe is untouched: what is written now is still there. */
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	T_ASSERT_EQ(read(p[0], buf, sizeof(buf)), 1);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/*
 * Ring exit with reads in flight on a registered pipe (one inline, one
 * IOSQE_ASYNC) whose write end only the ring still holds: the ring's
 * references go, so the read end sees EOF (bounded: 5 s).
 */
static void test_ring_exit(void)
{
	struct io_uring_sqe *sqe;
	struct pollfd pfd;
	struct t_ring r;
	char buf[16];
	int p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, p, 2), 0);
	close(p[1]);
	for (int i = 0; i < 2; i++) {
		sqe = t_get_sqe(&r);
		t_prep_rw(sqe, IORING_OP_READ, 0, buf, 10, 0, (uint64_t)i);
		sqe->flags |= IOSQE_FIXED_FILE | (i ? IOSQE_ASYNC : 0);
	}
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_no_cqe(&r, 20);
	t_ring_exit(&r);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	T_ASSERT_EQ(poll(&pfd, 1, 5000), 1);
	T_ASSERT(pfd.revents & POLLHUP);
	T_ASSERT_EQ(read(p[0], buf, sizeof(buf)), 0);
	close(p[0]);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_connect_link_timeout();
	test_connect_cancel();
	test_async_read_cancel(0);
	test_async_read_cancel(IORING_ASYNC_CANCEL_ALL);
	test_ring_exit();
	return T_EXIT_PASS;
}
