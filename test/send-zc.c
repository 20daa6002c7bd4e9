/* SPDX-License-Identifier: MIT */
/*
 * SEND_ZC and SENDMSG_ZC (io_uring/net.c, notif.c): the two-CQE protocol
 * (the result with IORING_CQE_F_MORE, then IORING_CQE_F_NOTIF with the
 * same user_data), on TCP and UDP over loopback, to an address, from a
 * registered buffer (IORING_RECVSEND_FIXED_BUF, also in a msghdr's
 * iovecs), with POLL_FIRST, IORING_SEND_ZC_REPORT_USAGE, and the errors:
 * bad flags, a pipe (-ENOTSOCK), an AF_UNIX socket (-EOPNOTSUPP), a bad
 * buffer, a bad registered range, CQE_SKIP_SUCCESS and reserved fields
 * (plain -EINVAL, no notification); canceled as a link (-ECANCELED
 * without F_MORE, and still the notification).
 */
#include <arpa/inet.h>
#include <poll.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "helpers.h"

#define POLL_FIRST    (1U << 0)
#define FIXED_BUF     (1U << 2)
#define REPORT	      (1U << 3)
#define VECTORIZED    (1U << 5)
#define F_NOTIF	      (1U << 3)
#define ZC_COPIED     (1U << 31)
#define OP_SEND_ZC    47
#define OP_SENDMSG_ZC 48

static char txbuf[8192], rxbuf[8192];

static struct io_uring_sqe *zc_sqe(struct t_ring *r, int op, int fd,
				   const void *addr, unsigned int len,
				   unsigned int zc_flags, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = (uint8_t)op;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)addr;
	sqe->len = len;
	sqe->ioprio = (uint16_t)zc_flags;
	sqe->user_data = ud;
	return sqe;
}

/* The result (res, F_MORE), then its notification (notif_res). */
#define expect_zc(r, ud, res, nres) expect_zc_at(r, ud, res, nres, __LINE__)
static void expect_zc_at(struct t_ring *r, uint64_t ud, int res, int notif_res,
			 int line)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	if (cqe.res != res)
		fprintf(stderr, "expect_zc at line %d\n", line);
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, res);
	T_ASSERT_EQ(cqe.flags, IORING_CQE_F_MORE);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, notif_res);
	T_ASSERT_EQ(cqe.flags, F_NOTIF);
}

/* A plain failure: no F_MORE, and no notification (a NOP comes next). */
static void expect_plain(struct t_ring *r, uint64_t ud, int res)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, res);
	T_ASSERT_EQ(cqe.flags, 0);
	t_prep_nop(t_get_sqe(r), 999);
	T_ASSERT_EQ(t_submit(r), 1);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 999);
}

static void recv_check(int fd, size_t len, size_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, rxbuf + got, len - got, 0);

		T_ASSERT_GT(n, 0);
		got += (size_t)n;
	}
	T_ASSERT_EQ(memcmp(rxbuf, txbuf + off, len), 0);
}

static void test_tcp(struct t_ring *r)
{
	int s[2];

	t_tcp_pair(s);
	zc_sqe(r, OP_SEND_ZC, s[0], txbuf, 1000, 0, 1);
	T_ASSERT_EQ(t_submit(r), 1);
	expect_zc(r, 1, 1000, 0);
	recv_check(s[1], 1000, 0);

	/* REPORT_USAGE: loopback always copies. */
	zc_sqe(r, OP_SEND_ZC, s[0], txbuf + 5, 100, REPORT, 2);
	T_ASSERT_EQ(t_submit(r), 1);
	expect_zc(r, 2, 100, (int)ZC_COPIED);
	recv_check(s[1], 100, 5);

	/*
	 * POLL_FIRST: waits for writability, then sends; twice, the second
	 * on a socket already watched and writable (no new edge comes).
	 */
	for (int i = 0; i < 2; i++) {
		zc_sqe(r, OP_SEND_ZC, s[0], txbuf, 300, POLL_FIRST, 3);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 3, 300, 0);
		recv_check(s[1], 300, 0);
	}

	/* A bad buffer: the send faults; still the notification. */
	zc_sqe(r, OP_SEND_ZC, s[0], (void *)1UL, 100, 0, 4);
	T_ASSERT_EQ(t_submit(r), 1);
	expect_zc(r, 4, -EFAULT, 0);

	/* Bad flags: -EINVAL, F_MORE, a notification with res 0. */
	zc_sqe(r, OP_SEND_ZC, s[0], txbuf, 100, ~0U, 5);
	T_ASSERT_EQ(t_submit(r), 1);
	expect_zc(r, 5, -EINVAL, 0);

	/* Checked before the notification is armed: plain -EINVAL. */
	zc_sqe(r, OP_SEND_ZC, s[0], txbuf, 100, 0, 6)->addr3 = 1;
	T_ASSERT_EQ(t_submit(r), 1);
	expect_plain(r, 6, -EINVAL);
	zc_sqe(r, OP_SEND_ZC, s[0], txbuf, 100, 0, 7)->flags =
		IOSQE_CQE_SKIP_SUCCESS;
	T_ASSERT_EQ(t_submit(r), 1);
	expect_plain(r, 7, -EINVAL);

	/* VECTORIZED: sqe->addr is an iovec array, len its count. */
	{
		struct iovec iov[2] = {{txbuf, 40}, {txbuf + 40, 60}};

		zc_sqe(r, OP_SEND_ZC, s[0], iov, 2, VECTORIZED, 10);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 10, 100, 0);
		recv_check(s[1], 100, 0);
	}
	/* A bad fd. */
	zc_sqe(r, OP_SEND_ZC, 9999, txbuf, 100, 0, 11);
	T_ASSERT_EQ(t_submit(r), 1);
	expect_zc(r, 11, -EBADF, 0);

	/* SENDMSG_ZC: two iovecs; addr2 is reserved. */
	{
		struct iovec iov[2] = {{txbuf, 10}, {txbuf + 10, 20}};
		struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};

		zc_sqe(r, OP_SENDMSG_ZC, s[0], &mh, 1, 0, 8);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 8, 30, 0);
		recv_check(s[1], 30, 0);
		zc_sqe(r, OP_SENDMSG_ZC, s[0], &mh, 1, 0, 9)->addr2 = 1;
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 9, -EINVAL, 0);
	}
	close(s[0]);
	close(s[1]);
}

/* UDP to an address: SEND_ZC's addr2/addr_len, SENDMSG_ZC's msg_name. */
static void test_udp(struct t_ring *r)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	struct io_uring_sqe *sqe;
	int rx = socket(AF_INET, SOCK_DGRAM, 0);
	int tx = socket(AF_INET, SOCK_DGRAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_ASSERT_EQ(bind(rx, (struct sockaddr *)&a, sizeof(a)), 0);
	T_ASSERT_EQ(getsockname(rx, (struct sockaddr *)&a, &alen), 0);

	sqe = zc_sqe(r, OP_SEND_ZC, tx, txbuf, 77, 0, 1);
	sqe->addr2 = (uintptr_t)&a;
	sqe->addr_len = sizeof(a);
	T_ASSERT_EQ(t_submit(r), 1);
	expect_zc(r, 1, 77, 0);
	T_ASSERT_EQ(recv(rx, rxbuf, sizeof(rxbuf), 0), 77);

	/* A bad address pointer: -EFAULT at prep, after the arming. */
	sqe = zc_sqe(r, OP_SEND_ZC, tx, txbuf, 77, 0, 2);
	sqe->addr2 = 1;
	sqe->addr_len = sizeof(a);
	T_ASSERT_EQ(t_submit(r), 1);
	expect_zc(r, 2, -EFAULT, 0);
	{
		struct iovec iov = {txbuf, 33};
		struct msghdr mh = {.msg_name = &a,
				    .msg_namelen = sizeof(a),
				    .msg_iov = &iov,
				    .msg_iovlen = 1};

		zc_sqe(r, OP_SENDMSG_ZC, tx, &mh, 1, 0, 3);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 3, 33, 0);
		T_ASSERT_EQ(recv(rx, rxbuf, sizeof(rxbuf), 0), 33);
	}
	close(rx);
	close(tx);
}

/* Sockets without zerocopy support, and files that are no sockets. */
static void test_not_zc(struct t_ring *r)
{
	int s[2], p[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(pipe(p), 0);
	zc_sqe(r, OP_SEND_ZC, s[0], txbuf, 10, 0, 1);
	T_ASSERT_EQ(t_submit(r), 1);
	expect_zc(r, 1, -EOPNOTSUPP, 0);
	zc_sqe(r, OP_SEND_ZC, p[1], txbuf, 10, 0, 2);
	T_ASSERT_EQ(t_submit(r), 1);
	expect_zc(r, 2, -ENOTSOCK, 0);
	{
		struct iovec iov = {txbuf, 10};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

		zc_sqe(r, OP_SENDMSG_ZC, p[1], &mh, 1, REPORT, 3);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 3, -ENOTSOCK, (int)ZC_COPIED);
		/* A msghdr that faults: at prep, before the socket. */
		zc_sqe(r, OP_SENDMSG_ZC, p[1], (void *)8, 1, 0, 4);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 4, -EFAULT, 0);
	}
	close(s[0]);
	close(s[1]);
	close(p[0]);
	close(p[1]);
}

/* IORING_RECVSEND_FIXED_BUF: the range must lie in buffer buf_index. */
static void test_fixed(struct t_ring *r)
{
	struct iovec reg = {txbuf + 4096, 4096};
	struct io_uring_sqe *sqe;
	int s[2];

	t_tcp_pair(s);
	T_ASSERT_EQ(t_register(r->fd, IORING_REGISTER_BUFFERS, &reg, 1), 0);
	sqe = zc_sqe(r, OP_SEND_ZC, s[0], txbuf + 4096 + 17, 500, FIXED_BUF, 1);
	sqe->buf_index = 0;
	T_ASSERT_EQ(t_submit(r), 1);
	expect_zc(r, 1, 500, 0);
	recv_check(s[1], 500, 4096 + 17);

	sqe = zc_sqe(r, OP_SEND_ZC, s[0], txbuf, 500, FIXED_BUF, 2);
	T_ASSERT_EQ(t_submit(r), 1);
	expect_zc(r, 2, -EFAULT, 0);
	sqe = zc_sqe(r, OP_SEND_ZC, s[0], txbuf + 4096, 10, FIXED_BUF, 3);
	sqe->buf_index = 5;
	T_ASSERT_EQ(t_submit(r), 1);
	expect_zc(r, 3, -EFAULT, 0);
	{
		struct iovec iov[2] = {{txbuf + 4096, 8}, {txbuf + 5000, 9}};
		struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};

		zc_sqe(r, OP_SENDMSG_ZC, s[0], &mh, 1, FIXED_BUF, 4);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 4, 17, 0);
		recv_check(s[1], 8, 4096);
		recv_check(s[1], 9, 5000);
		iov[1].iov_base = txbuf;
		zc_sqe(r, OP_SENDMSG_ZC, s[0], &mh, 1, FIXED_BUF, 5);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 5, -EFAULT, 0);
	}
	T_ASSERT_EQ(t_register(r->fd, IORING_UNREGISTER_BUFFERS, NULL, 0), 0);
	close(s[0]);
	close(s[1]);
}

/*
 * A registered buffer is imported at issue, after the file's lookup
 * (io_assign_file: -EBADF, a fixed slot with no table too): for SEND_ZC
 * after the socket's checks too (-ENOTSOCK, -EOPNOTSUPP), for SENDMSG_ZC
 * before them (io_sendmsg_zc imports first). No buffer is registered
 * here: each import fails -EFAULT. diff-fuzz found nowait's -EFAULT at
 * prep, before the fixed slot's -EBADF.
 */
static void test_fixed_order(struct t_ring *r)
{
	struct iovec iov = {txbuf, 10};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct io_uring_sqe *sqe;
	int t[2], u[2], p[2], closed;

	t_tcp_pair(t);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, u), 0);
	T_ASSERT_EQ(pipe(p), 0);
	closed = dup(p[0]);
	close(closed);
	for (int op = OP_SEND_ZC; op <= OP_SENDMSG_ZC; op++) {
		const void *a = op == OP_SEND_ZC ? (void *)txbuf : (void *)&mh;
		unsigned int len = op == OP_SEND_ZC ? 10 : 1;
		bool msg = op == OP_SENDMSG_ZC;

		sqe = zc_sqe(r, op, 7, a, len, FIXED_BUF, 1);
		sqe->flags |= IOSQE_FIXED_FILE;
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 1, -EBADF, 0);
		zc_sqe(r, op, closed, a, len, FIXED_BUF, 2);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 2, -EBADF, 0);
		zc_sqe(r, op, p[1], a, len, FIXED_BUF, 3);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 3, msg ? -EFAULT : -ENOTSOCK, 0);
		zc_sqe(r, op, u[0], a, len, FIXED_BUF, 4);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 4, msg ? -EFAULT : -EOPNOTSUPP, 0);
		zc_sqe(r, op, t[0], a, len, FIXED_BUF, 5);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 5, -EFAULT, 0);
		zc_sqe(r, op, t[0], a, len, FIXED_BUF | POLL_FIRST, 6);
		T_ASSERT_EQ(t_submit(r), 1);
		expect_zc(r, 6, -EFAULT, 0);
	}
	close(t[0]);
	close(t[1]);
	close(u[0]);
	close(u[1]);
	close(p[0]);
	close(p[1]);
}

/* A result without F_MORE that a notification still follows. */
static void expect_then_notif(struct t_ring *r, uint64_t ud, int res)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, res);
	T_ASSERT_EQ(cqe.flags, 0);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, 0);
	T_ASSERT_EQ(cqe.flags, F_NOTIF);
}

/*
 * Canceled as a link (io_fail_links): -ECANCELED with no flags, not
 * F_MORE, yet prep armed the notification and it follows; once behind a
 * head that fails at prep (a POLL_ADD with addr set: -EINVAL), once
 * behind a pending POLL_ADD that POLL_REMOVE cancels. The order of the
 * remove's CQE against the chain's is not asserted.
 */
static void test_link_cancel(struct t_ring *r)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	int s[2], p[2], seen[4] = {0};

	t_tcp_pair(s);
	T_ASSERT_EQ(pipe(p), 0);
	sqe = t_get_sqe(r);
	t_prep_poll_add(sqe, p[0], POLLIN, 0, 1);
	sqe->addr = 1;
	sqe->flags |= IOSQE_IO_LINK;
	zc_sqe(r, OP_SEND_ZC, s[0], txbuf, 10, 0, 2);
	T_ASSERT_EQ(t_submit(r), 2);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 1);
	T_ASSERT_EQ(cqe.res, -EINVAL);
	expect_then_notif(r, 2, -ECANCELED);

	sqe = t_get_sqe(r);
	t_prep_poll_add(sqe, p[0], POLLIN, 0, 1);
	sqe->flags |= IOSQE_IO_LINK;
	zc_sqe(r, OP_SEND_ZC, s[0], txbuf, 10, 0, 2);
	T_ASSERT_EQ(t_submit(r), 2);
	t_prep_poll_remove(t_get_sqe(r), 1, 3);
	T_ASSERT_EQ(t_submit(r), 1);
	for (int i = 0; i < 4; i++) {
		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		T_ASSERT(cqe.user_data >= 1 && cqe.user_data <= 3);
		if (cqe.user_data == 2) {
			/* The result, then the notification. */
			T_ASSERT(seen[2] < 2);
			T_ASSERT_EQ(cqe.res, seen[2] ? 0 : -ECANCELED);
			T_ASSERT_EQ(cqe.flags, seen[2] ? F_NOTIF : 0);
		} else {
			T_ASSERT_EQ(seen[cqe.user_data], 0);
			T_ASSERT_EQ(cqe.res,
				    cqe.user_data == 1 ? -ECANCELED : 0);
			T_ASSERT_EQ(cqe.flags, 0);
		}
		seen[cqe.user_data]++;
	}
	T_ASSERT_EQ(t_peek_cqe(r, &cqe), -EAGAIN);
	close(p[0]);
	close(p[1]);
	close(s[0]);
	close(s[1]);
}

static void run(unsigned int flags)
{
	struct io_uring_params p = {.flags = flags};
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	test_tcp(&r);
	test_udp(&r);
	test_not_zc(&r);
	test_fixed(&r);
	test_fixed_order(&r);
	test_link_cancel(&r);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	for (unsigned int i = 0; i < sizeof(txbuf); i++)
		txbuf[i] = (char)(i * 7 + 3);
	run(0);
	run(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	return T_EXIT_PASS;
}
