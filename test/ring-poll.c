/* SPDX-License-Identifier: MIT */
/*
 * POLL_ADD on a ring's own fd (the kernel's io_uring_poll), against the
 * kernel: POLLOUT while the SQ has room, POLLIN once CQEs wait; a poll of
 * ring A's fd from ring B, or from A itself, completes (POLLIN) when a
 * CQE is posted to A; a multishot one ends (no F_MORE) at that post; POLL_REMOVE
 * finds one; and a DEFER_TASKRUN ring reads POLLIN while task work is
 * queued for it (for a poll armed then: queueing wakes no one) (liburing: poll-ring, io_uring_register's poll case).
 */
#include <poll.h>
#include <unistd.h>
#include <nowait.h>
#include "helpers.h"

static void submit_nop(struct t_ring *r, uint64_t ud)
{
	t_prep_nop(t_get_sqe(r), ud);
	T_ASSERT_EQ(t_submit(r), 1);
}

static void poll_ring(struct t_ring *r, int fd, unsigned int events,
		      unsigned int flags, uint64_t ud)
{
	t_prep_poll_add(t_get_sqe(r), fd, events, flags, ud);
	T_ASSERT_EQ(t_submit(r), 1);
}

/* A ring polls itself for IN|OUT: only OUT (the SQ has room). */
static void test_self_out(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	poll_ring(&r, r.fd, POLLIN | POLLOUT, 0, 1);
	t_expect_cqe(&r, 1, POLLOUT);
	t_ring_exit(&r);
}

/*
 * A 1-entry ring that polls itself in the submit that consumes the poll's
 * SQE sees a full SQ (io_sqring_full reads the published head): nothing,
 * until a CQE is posted to it.
 */
static void test_self_full(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 1, NULL), 0);
	poll_ring(&r, r.fd, POLLIN | POLLOUT, 0, 1);
	t_expect_no_cqe(&r, 50);
	submit_nop(&r, 7);
	t_expect_cqe(&r, 7, 0);
	t_expect_cqe(&r, 1, POLLIN);
	t_ring_exit(&r);
}

/* CQEs already waiting: POLLIN at once. */
static void test_in_ready(void)
{
	struct t_ring a, b;

	T_ASSERT_EQ(t_ring_init(&a, 4, NULL), 0);
	T_ASSERT_EQ(t_ring_init(&b, 4, NULL), 0);
	submit_nop(&a, 7);
	poll_ring(&b, a.fd, POLLIN, 0, 1);
	t_expect_cqe(&b, 1, POLLIN);
	t_expect_cqe(&a, 7, 0);
	t_ring_exit(&a);
	t_ring_exit(&b);
}

/* B waits on A's fd until a CQE is posted to A. */
static void test_cross(unsigned int flags)
{
	struct t_ring a, b;
	unsigned int cf;

	T_ASSERT_EQ(t_ring_init(&a, 4, NULL), 0);
	T_ASSERT_EQ(t_ring_init(&b, 4, NULL), 0);
	poll_ring(&b, a.fd, POLLIN, flags, 1);
	t_expect_no_cqe(&b, 50);
	submit_nop(&a, 7);
	cf = t_expect_cqe(&b, 1, POLLIN);
	T_ASSERT_EQ(cf & IORING_CQE_F_MORE, 0);
	t_expect_no_cqe(&b, 20);
	t_expect_cqe(&a, 7, 0);
	t_ring_exit(&a);
	t_ring_exit(&b);
}

/* A ring polls its own fd: the NOP's CQE completes the poll after it. */
static void test_self_in(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	poll_ring(&r, r.fd, POLLIN, 0, 1);
	t_expect_no_cqe(&r, 50);
	submit_nop(&r, 7);
	t_expect_cqe(&r, 7, 0);
	t_expect_cqe(&r, 1, POLLIN);
	t_ring_exit(&r);
}

/* POLL_REMOVE of a poll parked on a ring fd. */
static void test_remove(void)
{
	struct t_ring a, b;

	T_ASSERT_EQ(t_ring_init(&a, 4, NULL), 0);
	T_ASSERT_EQ(t_ring_init(&b, 4, NULL), 0);
	poll_ring(&b, a.fd, POLLIN, 0, 1);
	t_expect_no_cqe(&b, 20);
	t_prep_poll_remove(t_get_sqe(&b), 1, 2);
	T_ASSERT_EQ(t_submit(&b), 1);
	for (int i = 0; i < 2; i++) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(&b, &cqe), 0);
		T_ASSERT_EQ(cqe.res, cqe.user_data == 1 ? -ECANCELED : 0);
	}
	/* A CQE on A now wakes nothing on B. */
	submit_nop(&a, 7);
	t_expect_no_cqe(&b, 20);
	t_ring_exit(&a);
	t_ring_exit(&b);
}

/*
 * The kernel queues a DEFER_TASKRUN ring's task work inside the write(2)
 * that makes its parked read ready. The user engine learns of a write
 * of a program linked with it only in its reactor thread, which on a
 * loaded machine may come after a POLL_ADD armed 50 ms later: wait for
 * its work (the ring fd reads POLLIN), bounded by the clock.
 */
static void wait_work_queued(struct t_ring *r)
{
	uint64_t end = t_now_us() + 10000000;

	if (t_engine() != T_ENGINE_USER)
		return;
	while (!(nowait_ring_poll_mask(r->fd) & POLLIN) && t_now_us() < end)
		usleep(1000);
}

/*
 * A DEFER_TASKRUN ring with a read parked on a pipe: the write queues
 * task work, which makes its fd read POLLIN for a poll armed then, but
 * wakes no poll already waiting (only a CQ post does).
 */
static void test_defer_target(void)
{
	struct io_uring_params p;
	struct t_ring a, b;
	char buf[8];
	int fds[2];

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	if (t_ring_init(&a, 4, &p)) {
		printf("DEFER_TASKRUN not supported: case skipped\n");
		return;
	}
	T_ASSERT_EQ(t_ring_init(&b, 4, NULL), 0);
	T_ASSERT_EQ(pipe(fds), 0);
	t_prep_rw(t_get_sqe(&a), IORING_OP_READ, fds[0], buf, sizeof(buf), 0,
		  7);
	T_ASSERT_EQ(t_submit(&a), 1);
	poll_ring(&b, a.fd, POLLIN, 0, 1);
	t_expect_no_cqe(&b, 50);
	T_ASSERT_EQ(write(fds[1], "abc", 3), 3);
	t_expect_no_cqe(&b, 50);
	wait_work_queued(&a);
	poll_ring(&b, a.fd, POLLIN, 0, 2);
	t_expect_cqe(&b, 2, POLLIN);
	T_ASSERT_EQ(t_cq_ready(&a), 0);
	t_expect_cqe(&a, 7, 3);
	t_expect_cqe(&b, 1, POLLIN);
	close(fds[0]);
	close(fds[1]);
	t_ring_exit(&a);
	t_ring_exit(&b);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_self_out();
	test_self_full();
	test_in_ready();
	test_cross(0);
	test_cross(IORING_POLL_ADD_MULTI);
	test_self_in();
	test_remove();
	test_defer_target();
	return T_EXIT_PASS;
}
