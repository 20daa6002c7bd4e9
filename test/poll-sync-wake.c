/* SPDX-License-Identifier: MIT */
/*
 * Readiness that comes and goes between a write and a read is not lost:
 * the kernel's poll wake-up runs inside the write(2) that makes an fd
 * ready, and queues task work with the mask it saw; a DEFER_TASKRUN ring
 * runs it in the next wait and reports that mask, though the data was
 * read meanwhile. The engine learns of the write from the preload's
 * write interposers (nowait_hook_wrote, called here by hand when the
 * test is linked with the engine; the preloaded rerun has the real
 * interposer) and keeps what its harvest saw for a POLL_ADD whose fd is
 * no longer ready (liburing 2.15's poll-mshot-overflow, poll-mshot-wake,
 * defer-taskrun test_flag). A DEFER_TASKRUN ring without an eventfd or
 * TASKRUN_FLAG has no reactor thread: only the write's harvest can see it.
 * The same at the end of an enter whose CQE woke a POLL_ADD of the ring's
 * fd on another ring.
 */
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <nowait-hook.h>
#include "helpers.h"

#define CHILD_ENV "NOWAIT_TEST_SYNCWAKE_CHILD"
#define ROUNDS	  3

/* write(2), then what the preload's interposer does after it. */
static void do_write(int fd)
{
	T_ASSERT_EQ(write(fd, "x", 1), 1);
	if (t_engine() == T_ENGINE_USER)
		nowait_hook_wrote();
}

static void expect_now(struct t_ring *r, uint64_t ud, int res, bool more)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_peek_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, res);
	T_ASSERT_EQ(!!(cqe.flags & IORING_CQE_F_MORE), more);
}

/*
 * A POLL_ADD of a ring's fd on another ring: the NOP's CQE wakes it, and
 * its CQE is there when the NOP's submit returns (poll.t's
 * test_disabled_ring_lazy_polling).
 */
static void ring_fd_poll(struct t_ring *r)
{
	struct io_uring_params p = {0};
	struct io_uring_cqe cqe;
	struct t_ring r2;

	T_ASSERT_EQ(t_ring_init(&r2, 8, &p), 0);
	t_prep_poll_add(t_get_sqe(&r2), r->fd, POLLIN, 0, 7);
	T_ASSERT_EQ(t_submit(&r2), 1);
	T_ASSERT_EQ(t_peek_cqe(&r2, &cqe), -EAGAIN);
	t_prep_nop(t_get_sqe(r), 8);
	T_ASSERT_EQ(t_submit(r), 1);
	expect_now(&r2, 7, POLLIN, false);
	t_ring_exit(&r2);
	expect_now(r, 8, 0, false);
}

static void run_checks(void)
{
	struct io_uring_params p = {
		.flags =
			IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	};
	struct io_uring_cqe cqe;
	struct t_ring r;
	int fds[2], ret;
	char c;

	ret = t_ring_init(&r, 8, &p);
	if (ret == -EINVAL)
		return; /* a kernel before 6.1 */
	T_ASSERT_EQ(ret, 0);
	T_ASSERT_EQ(pipe(fds), 0);
	/* Multishot: one CQE per write, each after the data went. */
	t_prep_poll_add(t_get_sqe(&r), fds[0], POLLIN, IORING_POLL_ADD_MULTI,
			1);
	T_ASSERT_EQ(t_submit(&r), 1);
	for (int i = 0; i < ROUNDS; i++) {
		do_write(fds[1]);
		T_ASSERT_EQ(read(fds[0], &c, 1), 1);
		T_ASSERT_EQ(t_peek_cqe(&r, &cqe), -EAGAIN);
		T_ASSERT_EQ(
			t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0),
			0);
		expect_now(&r, 1, POLLIN, true);
	}
	t_prep_poll_remove(t_get_sqe(&r), 1, 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 1);
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.res, cqe.user_data == 2 ? 0 : -ECANCELED);
	}
	/* Oneshot: the same, and it is done. */
	t_prep_poll_add(t_get_sqe(&r), fds[0], POLLIN, 0, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	do_write(fds[1]);
	T_ASSERT_EQ(read(fds[0], &c, 1), 1);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	expect_now(&r, 3, POLLIN, false);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), -EAGAIN);
	ring_fd_poll(&r);
	t_ring_exit(&r);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	t_watchdog(60);
	return t_run_also_preloaded(CHILD_ENV, run_checks);
}
