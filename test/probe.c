/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_PROBE and register opcode validation: argument checks, the
 * reply layout (last_op, ops_len, ops[i].op == i) and what is left alone.
 * Semantics: io_uring/register.c io_probe (kernel-semantics.md 8).
 */
#include <unistd.h>
#include <nowait.h>
#include "helpers.h"

#define PROBE_OPS 256

struct probe_buf {
	struct io_uring_probe hdr;
	struct io_uring_probe_op ops[PROBE_OPS + 4];
};

static void test_full(void)
{
	struct probe_buf *pb = calloc(1, sizeof(*pb));
	struct t_ring r;
	unsigned int i, len;

	T_ASSERT(pb != NULL);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, pb, PROBE_OPS), 0);
	T_ASSERT_GT(pb->hdr.last_op, 0);
	T_ASSERT_GE(pb->hdr.last_op, IORING_OP_SENDMSG_ZC);
	len = pb->hdr.last_op + 1U;
	if (len > PROBE_OPS)
		len = PROBE_OPS;
	T_ASSERT_EQ(pb->hdr.ops_len, len);
	T_ASSERT_EQ(pb->hdr.resv, 0);
	for (i = 0; i < 3; i++)
		T_ASSERT_EQ(pb->hdr.resv2[i], 0);
	for (i = 0; i < len; i++) {
		T_ASSERT_EQ(pb->ops[i].op, i);
		T_ASSERT_EQ(pb->ops[i].flags & ~IO_URING_OP_SUPPORTED, 0);
		T_ASSERT_EQ(pb->ops[i].resv, 0);
		T_ASSERT_EQ(pb->ops[i].resv2, 0);
	}
	for (; i < PROBE_OPS + 4; i++) {
		T_ASSERT_EQ(pb->ops[i].op, 0);
		T_ASSERT_EQ(pb->ops[i].flags, 0);
	}
	T_ASSERT(pb->ops[IORING_OP_NOP].flags & IO_URING_OP_SUPPORTED);

	/* A probe can be repeated (with a zeroed buffer again). */
	memset(pb, 0, sizeof(*pb));
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, pb, PROBE_OPS), 0);
	T_ASSERT_EQ(pb->hdr.ops_len, len);
	t_ring_exit(&r);
	free(pb);
}

/* nr_args below last_op + 1: only that many entries are written. */
static void test_short(void)
{
	struct probe_buf *pb = calloc(1, sizeof(*pb));
	struct t_ring r;

	T_ASSERT(pb != NULL);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	/* Beyond the 2 entries passed: not read, not written. */
	pb->ops[2].op = 0xaa;
	pb->ops[2].flags = 0xbbbb;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, pb, 2), 0);
	T_ASSERT_GT(pb->hdr.last_op, 1);
	T_ASSERT_EQ(pb->hdr.ops_len, 2);
	T_ASSERT_EQ(pb->ops[0].op, 0);
	T_ASSERT(pb->ops[0].flags & IO_URING_OP_SUPPORTED);
	T_ASSERT_EQ(pb->ops[1].op, 1);
	T_ASSERT_EQ(pb->ops[2].op, 0xaa);
	T_ASSERT_EQ(pb->ops[2].flags, 0xbbbb);

	/* nr_args 0: the header only. */
	memset(pb, 0, sizeof(*pb));
	pb->ops[0].op = 0xcc;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, pb, 0), 0);
	T_ASSERT_GT(pb->hdr.last_op, 0);
	T_ASSERT_EQ(pb->hdr.ops_len, 0);
	T_ASSERT_EQ(pb->ops[0].op, 0xcc);
	t_ring_exit(&r);
	free(pb);
}

static void test_bad_args(void)
{
	struct probe_buf *pb = calloc(1, sizeof(*pb));
	struct t_ring r;

	T_ASSERT(pb != NULL);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, pb, PROBE_OPS + 1),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, pb, 100000),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, NULL, PROBE_OPS),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, (void *)8, 4),
		    -EFAULT);

	/* Any non-zero byte in the input -> -EINVAL, buffer untouched. */
	pb->hdr.resv = 1;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, pb, PROBE_OPS),
		    -EINVAL);
	T_ASSERT_EQ(pb->hdr.last_op, 0);
	T_ASSERT_EQ(pb->hdr.ops_len, 0);
	memset(pb, 0, sizeof(*pb));
	/*
	 * (nr_args is clamped to last_op + 1 before the zero check, so only
	 * entries below that are input.)
	 */
	pb->ops[1].resv2 = 7;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, pb, PROBE_OPS),
		    -EINVAL);
	T_ASSERT_EQ(pb->hdr.last_op, 0);
	memset(pb, 0, sizeof(*pb));
	pb->hdr.last_op = 3;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, pb, 4), -EINVAL);

	/* A byte beyond nr_args entries is not part of the input. */
	memset(pb, 0, sizeof(*pb));
	pb->ops[4].resv2 = 7;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, pb, 4), 0);
	T_ASSERT_EQ(pb->hdr.ops_len, 4);
	t_ring_exit(&r);
	free(pb);
}

static void test_bad_opcode(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	T_ASSERT_EQ(t_register(r.fd, 9999, NULL, 0), -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, 255, NULL, 0), -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, 0x7fffffff, NULL, 0), -EINVAL);
	/* The ring is still fine. */
	t_prep_nop(t_get_sqe(&r), 5);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	test_full();
	test_short();
	test_bad_args();
	test_bad_opcode();
	return T_EXIT_PASS;
}
