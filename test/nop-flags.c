/* SPDX-License-Identifier: MIT */
/*
 * NOP's nop_flags against registered resources, as liburing 2.15's
 * nop-flags test found them missing:
 * - IORING_NOP_FILE | IORING_NOP_FIXED_FILE looks sqe->fd up in the fixed
 *   table: a filled slot is 0, an empty, out-of-range or missing table
 *   -EBADF; so does IOSQE_FIXED_FILE; without either, sqe->fd is a
 *   normal fd;
 * - IORING_NOP_FIXED_BUFFER needs sqe->buf_index to name a registered
 *   buffer: 0, else -EFAULT.
 * Semantics: io_uring/nop.c (6.18).
 */
#include <sys/uio.h>
#include <unistd.h>
#include "helpers.h"

static int nop_run(struct t_ring *r, unsigned int nop_flags, int fd,
		   unsigned int buf_index, unsigned int sqe_flags)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, 7);
	sqe->rw_flags = (int)nop_flags;
	sqe->fd = fd;
	sqe->buf_index = (uint16_t)buf_index;
	sqe->flags = (uint8_t)sqe_flags;
	return t_run(r, 7);
}

static void fixed_file(void)
{
	const unsigned int ff = IORING_NOP_FILE | IORING_NOP_FIXED_FILE;
	struct t_ring r;
	int p[2], fds[3];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	/* No table yet. */
	T_ASSERT_EQ(nop_run(&r, ff, 0, 0, 0), -EBADF);
	fds[0] = p[0];
	fds[1] = -1;
	fds[2] = p[1];
	T_ASSERT_EQ(t_reg_files2(&r, 3, fds, NULL, 0), 0);
	T_ASSERT_EQ(nop_run(&r, ff, 0, 0, 0), 0);
	T_ASSERT_EQ(nop_run(&r, ff, 2, 0, 0), 0);
	T_ASSERT_EQ(nop_run(&r, ff, 1, 0, 0), -EBADF);	/* empty slot */
	T_ASSERT_EQ(nop_run(&r, ff, 3, 0, 0), -EBADF);	/* past the end */
	T_ASSERT_EQ(nop_run(&r, ff, -1, 0, 0), -EBADF); /* negative */
	/* A normal lookup: slot numbers mean nothing. */
	T_ASSERT_EQ(nop_run(&r, IORING_NOP_FILE, p[0], 0, 0), 0);
	T_ASSERT_EQ(nop_run(&r, IORING_NOP_FILE, 1000, 0, 0), -EBADF);
	T_ASSERT_EQ(nop_run(&r, IORING_NOP_FILE, 2, 0, IOSQE_FIXED_FILE), 0);
	T_ASSERT_EQ(nop_run(&r, IORING_NOP_FILE, 1, 0, IOSQE_FIXED_FILE),
		    -EBADF);
	/* FIXED_FILE alone names no file: nothing is looked up. */
	T_ASSERT_EQ(nop_run(&r, IORING_NOP_FIXED_FILE, 1, 0, 0), 0);
	/* An error result fails a link as any failed request does. */
	T_ASSERT_EQ(nop_run(&r, ff | IORING_NOP_INJECT_RESULT, 1, 0, 0),
		    -EBADF);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

static void fixed_buffer(void)
{
	static char buf[4096] __attribute__((aligned(4096)));
	struct iovec iov[2] = {{buf, sizeof(buf)}, {NULL, 0}};
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(nop_run(&r, IORING_NOP_FIXED_BUFFER, -1, 0, 0), -EFAULT);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_BUFFERS, iov, 2), 0);
	T_ASSERT_EQ(nop_run(&r, IORING_NOP_FIXED_BUFFER, -1, 0, 0), 0);
	T_ASSERT_EQ(nop_run(&r, IORING_NOP_FIXED_BUFFER, -1, 1, 0), -EFAULT);
	T_ASSERT_EQ(nop_run(&r, IORING_NOP_FIXED_BUFFER, -1, 2, 0), -EFAULT);
	/* buf_index is read only with FIXED_BUFFER. */
	T_ASSERT_EQ(nop_run(&r, 0, -1, 5, 0), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_BUFFERS, NULL, 0), 0);
	T_ASSERT_EQ(nop_run(&r, IORING_NOP_FIXED_BUFFER, -1, 0, 0), -EFAULT);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	fixed_file();
	fixed_buffer();
	return T_EXIT_PASS;
}
