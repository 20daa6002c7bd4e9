/* SPDX-License-Identifier: MIT */
/*
 * IOSQE_IO_DRAIN against the kernel: a drained request (and what comes
 * after it) waits for every request submitted before it, here a read
 * parked on an empty pipe; links with a DRAIN inside; the CQE order once
 * the pipe has data; DRAIN after CQE_SKIP_SUCCESS (-EOPNOTSUPP); cancels
 * while requests are deferred.
 */
#include <unistd.h>
#include "helpers.h"

static void prep_read(struct t_ring *r, int fd, char *buf, uint64_t ud,
		      unsigned int flags)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	t_prep_rw(sqe, IORING_OP_READ, fd, buf, 4, 0, ud);
	sqe->flags |= flags;
}

static void prep_nop(struct t_ring *r, uint64_t ud, unsigned int flags)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	t_prep_nop(sqe, ud);
	sqe->flags |= flags;
}

static void prep_cancel(struct t_ring *r, uint64_t target, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->fd = -1;
	sqe->addr = target;
	sqe->user_data = ud;
}

static int sync_cancel(struct t_ring *r, uint64_t ud)
{
	struct io_uring_sync_cancel_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.addr = ud;
	reg.timeout.tv_sec = -1;
	reg.timeout.tv_nsec = -1;
	return t_register(r->fd, IORING_REGISTER_SYNC_CANCEL, &reg, 1);
}

/* A drained NOP and a NOP after it wait for a parked read. */
static void test_behind_read(unsigned int setup_flags)
{
	struct io_uring_params prm;
	struct t_ring r;
	char buf[4];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	memset(&prm, 0, sizeof(prm));
	prm.flags = setup_flags;
	T_ASSERT_EQ(t_ring_init(&r, 16, &prm), 0);
	prep_read(&r, p[0], buf, 1, 0);
	prep_nop(&r, 2, IOSQE_IO_DRAIN);
	prep_nop(&r, 3, 0);
	T_ASSERT_EQ(t_submit(&r), 3);
	t_expect_no_cqe(&r, 50);
	/* Submitted while draining: it waits too. */
	prep_nop(&r, 4, 0);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(p[1], "abcd", 4), 4);
	t_expect_cqe(&r, 1, 4);
	t_expect_cqe(&r, 2, 0);
	t_expect_cqe(&r, 3, 0);
	t_expect_cqe(&r, 4, 0);
	/* Draining is over: a NOP completes at once behind a parked read. */
	prep_read(&r, p[0], buf, 5, 0);
	prep_nop(&r, 6, 0);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 6, 0);
	T_ASSERT_EQ(write(p[1], "efgh", 4), 4);
	t_expect_cqe(&r, 5, 4);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/* Requests after a parked drained read wait for it, in order. */
static void test_drained_read(void)
{
	struct t_ring r;
	char buf[4];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	prep_nop(&r, 1, 0);
	prep_read(&r, p[0], buf, 2, IOSQE_IO_DRAIN);
	prep_nop(&r, 3, 0);
	prep_nop(&r, 4, IOSQE_IO_DRAIN);
	T_ASSERT_EQ(t_submit(&r), 4);
	t_expect_cqe(&r, 1, 0);
	t_expect_no_cqe(&r, 50);
	T_ASSERT_EQ(write(p[1], "abcd", 4), 4);
	t_expect_cqe(&r, 2, 4);
	t_expect_cqe(&r, 3, 0);
	t_expect_cqe(&r, 4, 0);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/* A DRAIN inside a link drains the link and the request after it. */
static void test_links(void)
{
	struct t_ring r;
	char buf[4];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	prep_read(&r, p[0], buf, 1, 0);
	prep_nop(&r, 2, IOSQE_IO_LINK);
	prep_nop(&r, 3, IOSQE_IO_LINK | IOSQE_IO_DRAIN);
	prep_nop(&r, 4, 0);
	prep_nop(&r, 5, 0);
	T_ASSERT_EQ(t_submit(&r), 5);
	t_expect_no_cqe(&r, 50);
	T_ASSERT_EQ(write(p[1], "abcd", 4), 4);
	for (uint64_t ud = 1; ud <= 5; ud++)
		t_expect_cqe(&r, ud, ud == 1 ? 4 : 0);

	/* A failed link ahead of the drain: its CQEs, then the drained. */
	prep_read(&r, p[0], buf, 6, IOSQE_IO_LINK);
	prep_nop(&r, 7, 0);
	prep_nop(&r, 8, IOSQE_IO_DRAIN);
	T_ASSERT_EQ(t_submit(&r), 3);
	t_expect_no_cqe(&r, 30);
	close(p[1]);
	t_expect_cqe(&r, 6, 0); /* EOF: a short read breaks the link */
	t_expect_cqe(&r, 7, -ECANCELED);
	t_expect_cqe(&r, 8, 0);
	close(p[0]);
	t_ring_exit(&r);
}

/* Nothing in flight: a drained request runs at once. */
static void test_idle(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_nop(&r, 1, IOSQE_IO_DRAIN);
	prep_nop(&r, 2, IOSQE_IO_DRAIN);
	prep_nop(&r, 3, 0);
	T_ASSERT_EQ(t_submit(&r), 3);
	t_expect_cqe(&r, 1, 0);
	t_expect_cqe(&r, 2, 0);
	t_expect_cqe(&r, 3, 0);
	/* Drained and IOSQE_ASYNC: run by a worker once released. */
	prep_nop(&r, 4, IOSQE_IO_DRAIN | IOSQE_ASYNC);
	prep_nop(&r, 5, 0);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 4, 0);
	t_expect_cqe(&r, 5, 0);
	t_ring_exit(&r);
}

/* Once the ring saw CQE_SKIP_SUCCESS, every DRAIN is -EOPNOTSUPP. */
static void test_skip(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_nop(&r, 1, IOSQE_CQE_SKIP_SUCCESS);
	prep_nop(&r, 2, IOSQE_IO_DRAIN);
	prep_nop(&r, 3, 0);
	/* The failing SQE ends the batch (it is counted). */
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 2, -EOPNOTSUPP);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 3, 0);
	prep_nop(&r, 4, IOSQE_IO_DRAIN | IOSQE_IO_LINK);
	prep_nop(&r, 5, 0);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 4, -EOPNOTSUPP);
	t_expect_cqe(&r, 5, -ECANCELED);
	t_expect_no_cqe(&r, 10);
	t_ring_exit(&r);
}

/*
 * Deferred requests are not found by a cancel; a cancel submitted while
 * draining is deferred itself. The parked read is found.
 */
static void test_cancel(void)
{
	struct t_ring r;
	char buf[4];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	prep_read(&r, p[0], buf, 1, 0);
	prep_nop(&r, 2, IOSQE_IO_DRAIN);
	T_ASSERT_EQ(t_submit(&r), 2);
	T_ASSERT_EQ(sync_cancel(&r, 2), -ENOENT);
	prep_cancel(&r, 1, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	T_ASSERT_EQ(sync_cancel(&r, 1), 0);
	t_expect_cqe(&r, 1, -ECANCELED);
	t_expect_cqe(&r, 2, 0);
	t_expect_cqe(&r, 3, -ENOENT);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/* Many drained requests in one batch, behind a parked read. */
static void test_many(void)
{
	struct t_ring r;
	char buf[4];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 64, NULL), 0);
	prep_read(&r, p[0], buf, 100, 0);
	for (uint64_t i = 0; i < 40; i++)
		prep_nop(&r, i, (i % 3) ? 0 : IOSQE_IO_DRAIN);
	T_ASSERT_EQ(t_submit(&r), 41);
	t_expect_no_cqe(&r, 30);
	T_ASSERT_EQ(write(p[1], "abcd", 4), 4);
	t_expect_cqe(&r, 100, 4);
	for (uint64_t i = 0; i < 40; i++)
		t_expect_cqe(&r, i, 0);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_behind_read(0);
	test_behind_read(IORING_SETUP_SINGLE_ISSUER |
			 IORING_SETUP_DEFER_TASKRUN);
	test_drained_read();
	test_links();
	test_idle();
	test_skip();
	test_cancel();
	test_many();
	return T_EXIT_PASS;
}
