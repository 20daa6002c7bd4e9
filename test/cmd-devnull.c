/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_URING_CMD on /dev/null: the one file besides sockets whose
 * ->uring_cmd can be had without hardware (drivers/char/mem.c
 * uring_cmd_null, added to test the LSM hooks): any command returns 0,
 * IORING_URING_CMD_FIXED too; prep's checks still come first (bad
 * uring_cmd_flags, __pad1, BUFFER_SELECT without MULTISHOT: -EINVAL);
 * /dev/zero has none (-EOPNOTSUPP), nor has an IOPOLL ring (no
 * uring_cmd_iopoll: -EOPNOTSUPP). Found by diff-fuzz (fd 215 of its
 * environment is /dev/null).
 */
#include <fcntl.h>
#include <unistd.h>
#include "helpers.h"

static struct io_uring_sqe *cmd_sqe(struct t_ring *r, int fd, uint32_t op)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	sqe->user_data = 1;
	return sqe;
}

static void test_null(struct t_ring *r, int null, int zero)
{
	static const uint32_t ops[] = {0, 1, 2, 3, 4, 77, 0xdeadbeef};
	struct io_uring_sqe *sqe;

	for (unsigned int i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		sqe = cmd_sqe(r, null, ops[i]);
		sqe->len = 16;
		sqe->addr = 0x1234; /* the command's bytes: not looked at */
		T_ASSERT_EQ(t_run(r, 1), 0);
	}
	/* FIXED: the buffer is the driver's to import; this one does not. */
	sqe = cmd_sqe(r, null, 0);
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->buf_index = 3;
	T_ASSERT_EQ(t_run(r, 1), 0);
	/* prep's checks are before the file's. */
	cmd_sqe(r, null, 0)->uring_cmd_flags = 1U << 7;
	T_ASSERT_EQ(t_run(r, 1), -EINVAL);
	sqe = cmd_sqe(r, null, 0);
	sqe->off |= 1ULL << 32; /* __pad1 */
	T_ASSERT_EQ(t_run(r, 1), -EINVAL);
	cmd_sqe(r, null, 0)->flags = IOSQE_BUFFER_SELECT;
	T_ASSERT_EQ(t_run(r, 1), -EINVAL);
	/* Other character devices have no ->uring_cmd. */
	cmd_sqe(r, zero, 0);
	T_ASSERT_EQ(t_run(r, 1), -EOPNOTSUPP);
	cmd_sqe(r, 9999, 0);
	T_ASSERT_EQ(t_run(r, 1), -EBADF);
}

int main(void)
{
	struct io_uring_params p = {.flags = IORING_SETUP_IOPOLL};
	struct t_ring r;
	int null, zero;

	t_require_engine();
	t_watchdog(30);
	null = open("/dev/null", O_RDWR);
	zero = open("/dev/zero", O_RDONLY);
	if (null < 0 || zero < 0)
		return T_EXIT_SKIP;
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	test_null(&r, null, zero);
	t_ring_exit(&r);
	/* An IOPOLL ring: /dev/null has no uring_cmd_iopoll. */
	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	cmd_sqe(&r, null, 0);
	T_ASSERT_EQ(t_run(&r, 1), -EOPNOTSUPP);
	t_ring_exit(&r);
	close(null);
	close(zero);
	return T_EXIT_PASS;
}
