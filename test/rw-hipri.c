/* SPDX-License-Identifier: MIT */
/*
 * READ, WRITE, READV, WRITEV with RWF_HIPRI on a ring without IOPOLL,
 * against the kernel: -EINVAL on a pipe, a regular file and a socket
 * (io_rw_init_file: polled completion is an IOPOLL ring's). A bad fd is
 * -EBADF first; an unknown RWF_ bit is kiocb_set_rw_flags' -EOPNOTSUPP
 * first. Without the flag the same requests succeed. An attr_type_mask
 * (6.14+, where 6.1 had __pad2) with a bit other than PI is io_prep_rw's
 * -EINVAL (found by test/fuzz/diff-fuzz).
 * Semantics: io_uring/rw.c io_rw_init_file (6.18).
 */
#include <fcntl.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "helpers.h"

#ifndef RWF_HIPRI
#define RWF_HIPRI 0x00000001
#endif

static int rw_one(struct t_ring *r, int op, int fd, void *buf, unsigned int len,
		  uint64_t off, int rw_flags)
{
	static struct iovec iov;
	struct io_uring_sqe *sqe = t_get_sqe(r);

	if (op == IORING_OP_READV || op == IORING_OP_WRITEV) {
		iov.iov_base = buf;
		iov.iov_len = len;
		t_prep_rw(sqe, op, fd, &iov, 1, off, 9);
	} else {
		t_prep_rw(sqe, op, fd, buf, len, off, 9);
	}
	sqe->rw_flags = rw_flags;
	return t_run(r, 9);
}

static void check_fd(struct t_ring *r, int rfd, int wfd, uint64_t off)
{
	static const int ops[] = {IORING_OP_WRITE, IORING_OP_WRITEV,
				  IORING_OP_READ, IORING_OP_READV};
	char buf[8] = "hipri!!";

	for (unsigned int i = 0; i < 4; i++) {
		int fd = i < 2 ? wfd : rfd;

		T_ASSERT_EQ(rw_one(r, ops[i], fd, buf, 4, off, RWF_HIPRI),
			    -EINVAL);
		T_ASSERT_EQ(rw_one(r, ops[i], 1000, buf, 4, off, RWF_HIPRI),
			    -EBADF);
		T_ASSERT_EQ(rw_one(r, ops[i], fd, buf, 4, off,
				   RWF_HIPRI | 0x40000000),
			    -EOPNOTSUPP);
	}
	/* An attr_type_mask bit other than PI (sqe->__pad2): -EINVAL. */
	for (unsigned int i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe = t_get_sqe(r);
		int fd = i < 2 ? wfd : rfd;

		t_prep_rw(sqe, ops[i], fd, buf, 4, off, 9);
		if (ops[i] == IORING_OP_READV || ops[i] == IORING_OP_WRITEV)
			sqe->opcode = (uint8_t)(ops[i] == IORING_OP_READV
							? IORING_OP_READ
							: IORING_OP_WRITE);
		sqe->__pad2[0] = 1ULL << (1 + i);
		T_ASSERT_EQ(t_run(r, 9), -EINVAL);
	}
	/* The same without the flag: the data goes through. */
	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITE, wfd, buf, 4, off, 0), 4);
	T_ASSERT_EQ(rw_one(r, IORING_OP_READ, rfd, buf, 4, off, 0), 4);
}

int main(void)
{
	char path[] = "/tmp/nowait-hipri.XXXXXX";
	struct t_ring r;
	int p[2], s[2], fd;

	t_require_engine();
	t_watchdog(30);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	check_fd(&r, p[0], p[1], (uint64_t)-1);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	check_fd(&r, s[1], s[0], 0);
	fd = mkstemp(path);
	T_ASSERT_GE(fd, 0);
	unlink(path);
	check_fd(&r, fd, fd, 0);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
