/* SPDX-License-Identifier: MIT */
/*
 * Fields the kernel checks that nowait let through, against the kernel
 * (found by test/fuzz/diff-fuzz): TIMEOUT, LINK_TIMEOUT and TIMEOUT_REMOVE
 * refuse a nonzero addr3 or __pad2 (-EINVAL) before their other checks,
 * TIMEOUT_REMOVE a fixed file too; RECV and RECVMSG with MSG_CMSG_COMPAT
 * among msg_flags (which recvmsg(2) refuses) receive as without it;
 * SEND, RECV, SENDMSG, RECVMSG with a len past INT_MAX are -EINVAL (the
 * kernel's int); a SPLICE with an offset on a pipe checks the files' modes
 * first (-EBADF), then the offset (-ESPIPE), as do_splice does (splice(2)
 * checks the offset first); FSETXATTR and FGETXATTR take a fixed file
 * (their flags checked first, the slot looked up at issue), the path
 * forms refuse one (-EBADF).
 * Semantics: io_uring/timeout.c __io_timeout_prep, io_timeout_remove_prep
 * (6.18 stable); io_uring/net.c io_recv.
 */
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "helpers.h"

#define CMSG_COMPAT 0x80000000u

static struct __kernel_timespec ts = {0, 1000};

static int timeout(struct t_ring *r, int op, uint64_t addr3, uint64_t pad2)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	sqe->opcode = (uint8_t)op;
	sqe->fd = -1;
	if (op == IORING_OP_TIMEOUT) {
		sqe->addr = (uintptr_t)&ts;
		sqe->len = 1;
	} else {
		sqe->addr = 0x1234; /* no such timeout */
	}
	sqe->addr3 = addr3;
	sqe->__pad2[0] = pad2;
	sqe->user_data = 3;
	return t_run(r, 3);
}

static int recv_one(struct t_ring *r, int op, int fd, void *buf,
		    unsigned int msg_flags)
{
	static struct iovec iov;
	static struct msghdr mh;
	struct io_uring_sqe *sqe = t_get_sqe(r);

	iov.iov_base = buf;
	iov.iov_len = 4;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	sqe->opcode = (uint8_t)op;
	sqe->fd = fd;
	sqe->addr = op == IORING_OP_RECV ? (uintptr_t)buf : (uintptr_t)&mh;
	sqe->len = op == IORING_OP_RECV ? 4 : 1;
	sqe->msg_flags = msg_flags;
	sqe->user_data = 4;
	return t_run(r, 4);
}

/* sqe->len past INT_MAX: -EINVAL; up to it, a send or receive as any. */
static void len_checks(struct t_ring *r, int s[2])
{
	static const int ops[] = {IORING_OP_SEND, IORING_OP_RECV,
				  IORING_OP_SENDMSG, IORING_OP_RECVMSG};
	static struct iovec iov;
	static struct msghdr mh;
	static char buf[8] = "lengths";

	iov.iov_base = buf;
	iov.iov_len = 4;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	for (unsigned int i = 0; i < 8; i++) {
		struct io_uring_sqe *sqe = t_get_sqe(r);
		int op = ops[i % 4];
		bool msg = op == IORING_OP_SENDMSG || op == IORING_OP_RECVMSG;
		bool send = op == IORING_OP_SEND || op == IORING_OP_SENDMSG;

		sqe->opcode = (uint8_t)op;
		sqe->fd = send ? s[0] : s[1];
		sqe->addr = msg ? (uintptr_t)&mh : (uintptr_t)buf;
		/* SEND/RECV: the buffer's length; a msghdr's len is unused. */
		sqe->len = i < 4 ? 0x80000000u : (msg ? 0x7fffffffu : 4);
		sqe->msg_flags = MSG_DONTWAIT;
		sqe->user_data = 6;
		T_ASSERT_EQ(t_run(r, 6), i < 4 ? -EINVAL : 4);
	}
}

static int splice_one(struct t_ring *r, int in, int out, uint64_t off_in)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	sqe->opcode = IORING_OP_SPLICE;
	sqe->splice_fd_in = in;
	sqe->fd = out;
	sqe->splice_off_in = off_in;
	sqe->off = (uint64_t)-1;
	sqe->len = 16;
	sqe->user_data = 8;
	return t_run(r, 8);
}

static void splice_checks(struct t_ring *r)
{
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(splice_one(r, p[0], p[0], 5), -EBADF);
	T_ASSERT_EQ(splice_one(r, p[1], p[1], 5), -EBADF);
	T_ASSERT_EQ(splice_one(r, p[0], p[1], 5), -ESPIPE);
	close(p[0]);
	close(p[1]);
}

static int xattr_one(struct t_ring *r, int op, int fd, uint8_t flags,
		     unsigned int xflags, void *val, unsigned int len)
{
	static const char path[] = "/tmp";
	struct io_uring_sqe *sqe = t_get_sqe(r);

	sqe->opcode = (uint8_t)op;
	sqe->fd = fd;
	sqe->flags = flags;
	sqe->addr = (uintptr_t) "user.nowait-order";
	sqe->addr2 = (uintptr_t)val;
	sqe->len = len;
	sqe->xattr_flags = xflags;
	if (op == IORING_OP_SETXATTR || op == IORING_OP_GETXATTR)
		sqe->addr3 = (uintptr_t)path;
	sqe->user_data = 9;
	return t_run(r, 9);
}

static void xattr_checks(struct t_ring *r)
{
	char path[] = "/tmp/nowait-xorder.XXXXXX", val[8] = "v1";
	int fd = mkstemp(path), ret;

	T_ASSERT_GE(fd, 0);
	/* No files registered: the flags first, then the slot. */
	T_ASSERT_EQ(xattr_one(r, IORING_OP_FSETXATTR, 0, IOSQE_FIXED_FILE,
			      0x35343831, val, 2),
		    -EINVAL);
	T_ASSERT_EQ(xattr_one(r, IORING_OP_FSETXATTR, 0, IOSQE_FIXED_FILE, 0,
			      val, 2),
		    -EBADF);
	T_ASSERT_EQ(xattr_one(r, IORING_OP_SETXATTR, 0, IOSQE_FIXED_FILE, 0,
			      val, 2),
		    -EBADF);
	T_ASSERT_EQ(xattr_one(r, IORING_OP_GETXATTR, 0, IOSQE_FIXED_FILE, 0,
			      val, 2),
		    -EBADF);
	/* A registered file: set and get through its slot. */
	T_ASSERT_EQ(t_reg_files2(r, 1, &fd, NULL, 0), 0);
	ret = xattr_one(r, IORING_OP_FSETXATTR, 0, IOSQE_FIXED_FILE, 0, val, 2);
	if (ret != -EOPNOTSUPP) { /* a filesystem without user xattrs */
		T_ASSERT_EQ(ret, 0);
		memset(val, 0, sizeof(val));
		T_ASSERT_EQ(xattr_one(r, IORING_OP_FGETXATTR, 0,
				      IOSQE_FIXED_FILE, 0, val, sizeof(val)),
			    2);
		T_ASSERT_EQ(memcmp(val, "v1", 2), 0);
	}
	T_ASSERT_EQ(t_register(r->fd, IORING_UNREGISTER_FILES, NULL, 0), 0);
	unlink(path);
	close(fd);
}

int main(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	char buf[8];
	int s[2];

	t_require_engine();
	t_watchdog(30);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(timeout(&r, IORING_OP_TIMEOUT, 0, 0), -ETIME);
	T_ASSERT_EQ(timeout(&r, IORING_OP_TIMEOUT, 1, 0), -EINVAL);
	T_ASSERT_EQ(timeout(&r, IORING_OP_TIMEOUT, 0, 1ULL << 57), -EINVAL);
	T_ASSERT_EQ(timeout(&r, IORING_OP_TIMEOUT_REMOVE, 0, 0), -ENOENT);
	T_ASSERT_EQ(
		timeout(&r, IORING_OP_TIMEOUT_REMOVE, 0xfc000000000000ULL, 0),
		-EINVAL);
	T_ASSERT_EQ(timeout(&r, IORING_OP_TIMEOUT_REMOVE, 0, 1), -EINVAL);
	sqe = t_get_sqe(&r);
	sqe->opcode = IORING_OP_TIMEOUT_REMOVE;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->addr = 0x1234;
	sqe->user_data = 5;
	T_ASSERT_EQ(t_run(&r, 5), -EINVAL);

	/* MSG_CMSG_COMPAT with MSG_WAITALL: a receive as any other. */
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(recv_one(&r, IORING_OP_RECV, s[1], buf,
			     CMSG_COMPAT | MSG_WAITALL | MSG_DONTWAIT),
		    -EAGAIN);
	T_ASSERT_EQ(write(s[0], "abcdefgh", 8), 8);
	T_ASSERT_EQ(recv_one(&r, IORING_OP_RECV, s[1], buf,
			     CMSG_COMPAT | MSG_WAITALL),
		    4);
	T_ASSERT_EQ(recv_one(&r, IORING_OP_RECVMSG, s[1], buf,
			     CMSG_COMPAT | MSG_DONTWAIT),
		    4);
	T_ASSERT_EQ(memcmp(buf, "efgh", 4), 0);
	len_checks(&r, s);
	splice_checks(&r);
	xattr_checks(&r);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
