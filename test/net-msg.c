/* SPDX-License-Identifier: MIT */
/*
 * SENDMSG and RECVMSG (io_uring/net.c): two iovecs, msg_flags (MSG_TRUNC,
 * MSG_CTRUNC), msg_namelen and msg_controllen written back, SCM_RIGHTS,
 * the msghdr and its iovecs copied at submit (SUBMIT_STABLE), MSG_WAITALL
 * across iovecs, a closed peer, and the errors.
 */
#include <signal.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
#include "helpers.h"

static struct io_uring_sqe *prep_msg(struct t_ring *r, int op, int fd,
				     struct msghdr *msg, int flags, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, op, fd, msg, 1, 0, ud);
	sqe->msg_flags = (unsigned int)flags;
	return sqe;
}

static void run1(struct t_ring *r, struct io_uring_sqe *sqe, int res)
{
	uint64_t ud = sqe->user_data;

	T_ASSERT_EQ(t_submit_and_wait(r, 1), 1);
	t_expect_cqe(r, ud, res);
}

static void set_iov2(struct iovec iov[2], void *a, size_t alen, void *b,
		     size_t blen)
{
	iov[0].iov_base = a;
	iov[0].iov_len = alen;
	iov[1].iov_base = b;
	iov[1].iov_len = blen;
}

/* Two iovecs each way on a stream; a truncated datagram sets MSG_TRUNC. */
static void test_iovecs(void)
{
	struct iovec iov[2];
	struct msghdr msg;
	struct t_ring r;
	char a[4], b[8];
	int s[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	memset(&msg, 0, sizeof(msg));
	set_iov2(iov, "abcd", 4, "efghij", 6);
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	run1(&r, prep_msg(&r, IORING_OP_SENDMSG, s[0], &msg, 0, 1), 10);
	memset(&msg, 0, sizeof(msg));
	set_iov2(iov, a, sizeof(a), b, sizeof(b));
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	msg.msg_flags = 0x7777; /* overwritten */
	run1(&r, prep_msg(&r, IORING_OP_RECVMSG, s[1], &msg, 0, 2), 10);
	T_ASSERT_EQ(memcmp(a, "abcd", 4), 0);
	T_ASSERT_EQ(memcmp(b, "efghij", 6), 0);
	T_ASSERT_EQ(msg.msg_flags, 0);
	T_ASSERT_EQ(msg.msg_controllen, 0);
	close(s[0]);
	close(s[1]);

	/* A 20-byte datagram into 12 bytes of iovecs. */
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, s), 0);
	T_ASSERT_EQ(write(s[0], "0123456789abcdefghij", 20), 20);
	memset(&msg, 0, sizeof(msg));
	set_iov2(iov, a, sizeof(a), b, sizeof(b));
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	run1(&r, prep_msg(&r, IORING_OP_RECVMSG, s[1], &msg, 0, 3), 12);
	T_ASSERT_EQ(msg.msg_flags & MSG_TRUNC, MSG_TRUNC);
	T_ASSERT_EQ(memcmp(a, "0123", 4), 0);
	T_ASSERT_EQ(memcmp(b, "456789ab", 8), 0);
	/* With MSG_WAITALL, a truncated datagram fails a link. */
	T_ASSERT_EQ(write(s[0], "0123456789abcdefghij", 20), 20);
	prep_msg(&r, IORING_OP_RECVMSG, s[1], &msg, MSG_WAITALL, 4)->flags =
		IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&r), 5);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	t_expect_cqe(&r, 4, 12);
	t_expect_cqe(&r, 5, -ECANCELED);
	close(s[0]);
	close(s[1]);
	t_ring_exit(&r);
}

/* msg_name and msg_namelen: a bound AF_UNIX datagram sender. */
static void test_name(void)
{
	struct sockaddr_un me, from;
	struct iovec iov[2];
	struct msghdr msg;
	struct t_ring r;
	char a[4], b[4];
	socklen_t len;
	int s[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, s), 0);
	memset(&me, 0, sizeof(me));
	me.sun_family = AF_UNIX;
	snprintf(me.sun_path + 1, sizeof(me.sun_path) - 1, "nw-msg-%d",
		 (int)getpid());
	len = offsetof(struct sockaddr_un, sun_path) + 1 +
	      strlen(me.sun_path + 1);
	T_ASSERT_EQ(bind(s[0], (struct sockaddr *)&me, len), 0);
	memset(&msg, 0, sizeof(msg));
	memset(&from, 0, sizeof(from));
	set_iov2(iov, a, sizeof(a), b, sizeof(b));
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	msg.msg_name = &from;
	msg.msg_namelen = sizeof(from);
	prep_msg(&r, IORING_OP_RECVMSG, s[1], &msg, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(s[0], "named", 5), 5);
	t_expect_cqe(&r, 1, 5);
	T_ASSERT_EQ(msg.msg_namelen, len);
	T_ASSERT_EQ(memcmp(&from, &me, len), 0);
	/* A name buffer too small: cut, namelen says the real length. */
	T_ASSERT_EQ(write(s[0], "again", 5), 5);
	msg.msg_namelen = 4;
	memset(&from, 0, sizeof(from));
	run1(&r, prep_msg(&r, IORING_OP_RECVMSG, s[1], &msg, 0, 2), 5);
	T_ASSERT_EQ(msg.msg_namelen, len);
	T_ASSERT_EQ(from.sun_path[2], 0);
	close(s[0]);
	close(s[1]);
	t_ring_exit(&r);
}

/* SCM_RIGHTS through SENDMSG; RECVMSG writes msg_controllen back. */
static void test_control(void)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cs, cr;
	struct cmsghdr *cm;
	struct iovec iov;
	struct msghdr msg;
	struct t_ring r;
	int s[2], p[2], fd;
	char c;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(pipe(p), 0);
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = (void *)"F";
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cs.buf;
	msg.msg_controllen = sizeof(cs.buf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &p[1], sizeof(int));
	run1(&r, prep_msg(&r, IORING_OP_SENDMSG, s[0], &msg, 0, 1), 1);

	memset(&msg, 0, sizeof(msg));
	memset(&cr, 0, sizeof(cr));
	iov.iov_base = &c;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cr.buf;
	msg.msg_controllen = sizeof(cr.buf) + 16;
	run1(&r, prep_msg(&r, IORING_OP_RECVMSG, s[1], &msg, 0, 2), 1);
	T_ASSERT_EQ(msg.msg_controllen, CMSG_SPACE(sizeof(int)));
	T_ASSERT_EQ(msg.msg_flags & MSG_CTRUNC, 0);
	cm = CMSG_FIRSTHDR(&msg);
	T_ASSERT(cm != NULL);
	T_ASSERT_EQ(cm->cmsg_type, SCM_RIGHTS);
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	T_ASSERT_EQ(write(fd, "z", 1), 1);
	T_ASSERT_EQ(read(p[0], &c, 1), 1);
	T_ASSERT_EQ(c, 'z');
	close(fd);

	/* No room for the control data: MSG_CTRUNC, controllen 0. */
	msg.msg_control = cs.buf;
	msg.msg_controllen = sizeof(cs.buf);
	iov.iov_base = (void *)"G";
	cm = CMSG_FIRSTHDR(&msg);
	memcpy(CMSG_DATA(cm), &p[1], sizeof(int));
	run1(&r, prep_msg(&r, IORING_OP_SENDMSG, s[0], &msg, 0, 3), 1);
	iov.iov_base = &c;
	msg.msg_control = NULL;
	msg.msg_controllen = 0;
	run1(&r, prep_msg(&r, IORING_OP_RECVMSG, s[1], &msg, 0, 4), 1);
	T_ASSERT_EQ(msg.msg_flags & MSG_CTRUNC, MSG_CTRUNC);
	T_ASSERT_EQ(c, 'G');
	close(p[0]);
	close(p[1]);
	close(s[0]);
	close(s[1]);
	t_ring_exit(&r);
}

/* The msghdr and iovecs may change after submit: copied at prep. */
static void test_stable(void)
{
	struct iovec iov[2], junk[2];
	struct msghdr msg;
	struct t_ring r;
	char a[3], b[3], x[8];
	int s[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	memset(&msg, 0, sizeof(msg));
	set_iov2(iov, a, sizeof(a), b, sizeof(b));
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	prep_msg(&r, IORING_OP_RECVMSG, s[1], &msg, MSG_WAITALL, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 10);
	set_iov2(junk, x, sizeof(x), x, sizeof(x));
	memcpy(iov, junk, sizeof(iov));
	msg.msg_iov = junk;
	msg.msg_iovlen = 1;
	/* In two pieces: MSG_WAITALL accumulates across the iovecs. */
	T_ASSERT_EQ(write(s[0], "1234", 4), 4);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(s[0], "56", 2), 2);
	t_expect_cqe(&r, 1, 6);
	T_ASSERT_EQ(memcmp(a, "123", 3), 0);
	T_ASSERT_EQ(memcmp(b, "456", 3), 0);
	close(s[0]);
	close(s[1]);
	t_ring_exit(&r);
}

static volatile sig_atomic_t sigpipe_count;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipe_count++;
}

/* SENDMSG to a UDP address; to a closed peer; and the errors. */
static void test_errors(void)
{
	struct sigaction sa, old;
	struct sockaddr_in addr;
	socklen_t alen = sizeof(addr);
	struct iovec iov[2];
	struct msghdr msg;
	struct t_ring r;
	char buf[8];
	int s[2], p[2], u;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	u = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_ASSERT_EQ(bind(u, (struct sockaddr *)&addr, sizeof(addr)), 0);
	T_ASSERT_EQ(getsockname(u, (struct sockaddr *)&addr, &alen), 0);
	memset(&msg, 0, sizeof(msg));
	set_iov2(iov, "ud", 2, "p", 1);
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	msg.msg_name = &addr;
	msg.msg_namelen = sizeof(addr);
	run1(&r, prep_msg(&r, IORING_OP_SENDMSG, u, &msg, 0, 1), 3);
	T_ASSERT_EQ(recv(u, buf, sizeof(buf), 0), 3);
	T_ASSERT_EQ(memcmp(buf, "udp", 3), 0);
	close(u);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigpipe;
	T_ASSERT_EQ(sigaction(SIGPIPE, &sa, &old), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	close(s[1]);
	msg.msg_name = NULL;
	msg.msg_namelen = 0;
	run1(&r, prep_msg(&r, IORING_OP_SENDMSG, s[0], &msg, 0, 2), -EPIPE);
	T_ASSERT_EQ(sigpipe_count, 0);
	T_ASSERT_EQ(sigaction(SIGPIPE, &old, NULL), 0);

	T_ASSERT_EQ(pipe(p), 0);
	run1(&r, prep_msg(&r, IORING_OP_RECVMSG, p[0], &msg, 0, 3), -ENOTSOCK);
	run1(&r, prep_msg(&r, IORING_OP_RECVMSG, s[0], (void *)8, 0, 4),
	     -EFAULT);
	msg.msg_iovlen = 1025;
	run1(&r, prep_msg(&r, IORING_OP_SENDMSG, s[0], &msg, 0, 5), -EMSGSIZE);
	msg.msg_iovlen = 2;
	msg.msg_iov = (void *)8;
	run1(&r, prep_msg(&r, IORING_OP_RECVMSG, s[0], &msg, 0, 6), -EFAULT);
	msg.msg_iov = iov;
	msg.msg_name = buf;
	msg.msg_namelen = 0x80000000U;
	run1(&r, prep_msg(&r, IORING_OP_RECVMSG, s[0], &msg, 0, 7), -EINVAL);
	msg.msg_name = NULL;
	prep_msg(&r, IORING_OP_SENDMSG, s[0], &msg, 0, 8)->addr2 = 1;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	t_expect_cqe(&r, 8, -EINVAL);
	prep_msg(&r, IORING_OP_RECVMSG, s[0], &msg, 0, 9)->ioprio = 1U << 4;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	t_expect_cqe(&r, 9, -EINVAL);
	close(p[0]);
	close(p[1]);
	close(s[0]);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_iovecs();
	test_name();
	test_control();
	test_stable();
	test_errors();
	return T_EXIT_PASS;
}
