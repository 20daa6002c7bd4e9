/* SPDX-License-Identifier: MIT */
/*
 * Registered files and buffers against the kernel: sparse tables, a slot
 * outliving the program's fd, FILES_UPDATE, the register errors, and
 * READ_FIXED/WRITE_FIXED range checks.
 */
#include <sys/uio.h>
#include <unistd.h>
#include "helpers.h"

static void test_files(void)
{
	struct io_uring_files_update up;
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int p[2], fds[3], newfd;
	char buf[8] = {0};

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, fds, 0), -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_FILES, NULL, 0), -ENXIO);
	fds[0] = -1;
	fds[1] = p[0];
	fds[2] = 1000000;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, fds, 3), -EBADF);
	fds[2] = r.fd;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, fds, 3), -EBADF);
	fds[2] = -1;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, fds, 3), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, fds, 3), -EBUSY);

	/* Slot 1 is the pipe's read end, even after we close our fd. */
	newfd = dup(p[0]);
	close(p[0]);
	T_ASSERT_EQ(write(p[1], "fixed", 5), 5);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_READ, 1, buf, 5, 0, 1);
	sqe->flags |= IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 1, 5);
	T_ASSERT_EQ(memcmp(buf, "fixed", 5), 0);
	/* An empty slot, and one past the end: -EBADF. */
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_READ, 0, buf, 5, 0, 2);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_READ, 7, buf, 5, 0, 3);
	sqe->flags |= IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 2, -EBADF);
	t_expect_cqe(&r, 3, -EBADF);

	/* FILES_UPDATE: slot 0 gets the write end, slot 1 is skipped. */
	fds[0] = p[1];
	fds[1] = IORING_REGISTER_FILES_SKIP;
	memset(&up, 0, sizeof(up));
	up.offset = 0;
	up.fds = (uintptr_t)fds;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES_UPDATE, &up, 2), 2);
	up.offset = 2;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES_UPDATE, &up, 2),
		    -EINVAL);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_WRITE, 0, "w", 1, 0, 4);
	sqe->flags |= IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 4, 1);
	T_ASSERT_EQ(read(newfd, buf, 1), 1);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_FILES, NULL, 0), 0);
	close(newfd);
	close(p[1]);
	t_ring_exit(&r);
}

static void test_buffers(void)
{
	static char mem[4096];
	struct iovec iov = {mem, sizeof(mem)};
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_BUFFERS, NULL, 0),
		    -ENXIO);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_BUFFERS, &iov, 1), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_BUFFERS, &iov, 1), -EBUSY);
	T_ASSERT_EQ(write(p[1], "buffer", 6), 6);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_READ_FIXED, p[0], mem + 100, 6, 0, 1);
	sqe->buf_index = 0;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 1, 6);
	T_ASSERT_EQ(memcmp(mem + 100, "buffer", 6), 0);
	/* Past the buffer's end, and a missing index: -EFAULT. */
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_READ_FIXED, p[0], mem + 4090, 16, 0, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 2, -EFAULT);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_WRITE_FIXED, p[1], mem, 4, 0, 3);
	sqe->buf_index = 1;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 3, -EFAULT);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_WRITE_FIXED, p[1], mem + 100, 6, 0, 4);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 4, 6);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_BUFFERS, NULL, 0), 0);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_files();
	test_buffers();
	return T_EXIT_PASS;
}
