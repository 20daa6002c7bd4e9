/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_SYNC_CANCEL against the kernel: by user_data, ALL, FD,
 * OP and ANY on reads parked on a pipe, a timeout, the argument checks,
 * and that the cancelled requests' CQEs are there when it returns.
 */
#include <unistd.h>
#include "helpers.h"

static int sync_cancel(struct t_ring *r, uint64_t ud, unsigned int flags,
		       int fd, long long sec)
{
	struct io_uring_sync_cancel_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.addr = ud;
	reg.flags = flags;
	reg.fd = fd;
	reg.timeout.tv_sec = sec;
	reg.timeout.tv_nsec = sec < 0 ? -1 : 0;
	return t_register(r->fd, IORING_REGISTER_SYNC_CANCEL, &reg, 1);
}

static void prep_read(struct t_ring *r, int fd, char *buf, uint64_t ud,
		      unsigned int flags)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	t_prep_rw(sqe, IORING_OP_READ, fd, buf, 4, 0, ud);
	sqe->flags |= flags;
}

/* The CQEs are all there, without waiting for more. */
static void expect_cancelled(struct t_ring *r, unsigned int n)
{
	struct io_uring_cqe cqe;

	for (unsigned int i = 0; i < n; i++) {
		T_ASSERT_EQ(t_wait_cqe_timeout(r, &cqe, 1000), 0);
		T_ASSERT_EQ(cqe.res, -ECANCELED);
	}
	t_expect_no_cqe(r, 10);
}

static void test_modes(void)
{
	struct __kernel_timespec ts = {10, 0};
	struct io_uring_sqe *sqe;
	struct t_ring r;
	char buf[4];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	prep_read(&r, p[0], buf, 1, 0);
	prep_read(&r, p[0], buf, 1, IOSQE_ASYNC);
	T_ASSERT_EQ(t_submit(&r), 2);
	usleep(10000);
	T_ASSERT_EQ(sync_cancel(&r, 1, 0, 0, -1), 0);
	T_ASSERT_EQ(sync_cancel(&r, 1, 0, 0, 1), 0);
	expect_cancelled(&r, 2);
	T_ASSERT_EQ(sync_cancel(&r, 1, 0, 0, 1), -ENOENT);

	/* ALL gives the count; FD and OP match. */
	for (int i = 0; i < 3; i++)
		prep_read(&r, p[0], buf, 2, 0);
	T_ASSERT_EQ(t_submit(&r), 3);
	T_ASSERT_EQ(sync_cancel(&r, 2, IORING_ASYNC_CANCEL_ALL, 0, -1), 3);
	expect_cancelled(&r, 3);
	T_ASSERT_EQ(sync_cancel(&r, 2, IORING_ASYNC_CANCEL_ALL, 0, -1), 0);
	prep_read(&r, p[0], buf, 3, 0);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(sync_cancel(&r, 0, IORING_ASYNC_CANCEL_FD, p[1], -1),
		    -ENOENT);
	T_ASSERT_EQ(sync_cancel(&r, 0, IORING_ASYNC_CANCEL_FD, p[0], -1), 0);
	expect_cancelled(&r, 1);

	/* A timeout, and ANY over a read and a timeout. */
	sqe = t_get_sqe(&r);
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_TIMEOUT;
	sqe->addr = (uintptr_t)&ts;
	sqe->len = 1;
	sqe->user_data = 4;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(sync_cancel(&r, 4, 0, 0, -1), 0);
	expect_cancelled(&r, 1);
	prep_read(&r, p[0], buf, 5, 0);
	sqe = t_get_sqe(&r);
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_TIMEOUT;
	sqe->addr = (uintptr_t)&ts;
	sqe->len = 1;
	sqe->user_data = 6;
	T_ASSERT_EQ(t_submit(&r), 2);
	T_ASSERT_EQ(sync_cancel(&r, 0, IORING_ASYNC_CANCEL_ANY, 0, -1), 2);
	expect_cancelled(&r, 2);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/* OP: the opcode sits in the first pad byte (6.6's layout). */
static void test_op(void)
{
	struct io_uring_sync_cancel_reg reg;
	struct t_ring r;
	char buf[4];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_read(&r, p[0], buf, 7, 0);
	T_ASSERT_EQ(t_submit(&r), 1);
	memset(&reg, 0, sizeof(reg));
	reg.flags = IORING_ASYNC_CANCEL_OP;
	reg.timeout.tv_sec = reg.timeout.tv_nsec = -1;
	memset(reg.pad, IORING_OP_TIMEOUT, 1);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_SYNC_CANCEL, &reg, 1),
		    -ENOENT);
	memset(reg.pad, IORING_OP_READ, 1);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_SYNC_CANCEL, &reg, 1), 0);
	expect_cancelled(&r, 1);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

static void test_args(void)
{
	struct io_uring_sync_cancel_reg reg;
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	memset(&reg, 0, sizeof(reg));
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_SYNC_CANCEL, NULL, 1),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_SYNC_CANCEL, &reg, 2),
		    -EINVAL);
	reg.flags = 1U << 20;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_SYNC_CANCEL, &reg, 1),
		    -EINVAL);
	reg.flags = 0;
	reg.pad[3] = 1;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_SYNC_CANCEL, &reg, 1),
		    -EINVAL);
	reg.pad[3] = 0;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_SYNC_CANCEL, &reg, 1),
		    -ENOENT);
	T_ASSERT_EQ(sync_cancel(&r, 0, IORING_ASYNC_CANCEL_FD, 1000, -1),
		    -EBADF);
	T_ASSERT_EQ(sync_cancel(&r, 0,
				IORING_ASYNC_CANCEL_FD |
					IORING_ASYNC_CANCEL_FD_FIXED,
				0, -1),
		    -EBADF);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_SYNC_CANCEL,
			       (void *)(uintptr_t)8, 1),
		    -EFAULT);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_modes();
	test_op();
	test_args();
	return T_EXIT_PASS;
}
