/* SPDX-License-Identifier: MIT */
/*
 * Readiness on a DEFER_TASKRUN ring is not lost when the data goes before
 * the program enters: the kernel's poll wake-up queues task work the
 * moment a pipe is written, and the next enter with GETEVENTS (even with
 * min_complete 0, liburing's io_uring_get_events) runs it and posts the
 * CQE, though the program read the data meanwhile. liburing 2.15's
 * multicqes_drain does exactly this (write, get_events, read) with
 * multishot and single POLL_ADDs, then a POLL_REMOVE, and hung on the
 * user engine. Each CQE is checked right after the enter
 * that must have posted it (a peek, no timing).
 */
#include <poll.h>
#include <unistd.h>
#include <nowait.h>
#include "helpers.h"

#define ROUNDS 50

/*
 * The numbers come back in the next round: a program linked directly
 * tells the user engine of a close (the preload's close does it).
 */
static void do_close(int fd)
{
	if (t_engine() == T_ENGINE_USER)
		nowait_fd_closing(fd);
	T_ASSERT_EQ(close(fd), 0);
}

/* Write, let GETEVENTS (min 0) run the task work, then take the data. */
static void trigger(struct t_ring *r, int p[2])
{
	char buf[4];

	T_ASSERT_EQ(write(p[1], "foo", 3), 3);
	T_ASSERT_EQ(t_enter(r->fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(read(p[0], buf, 3), 3);
}

static void expect_now_at(struct t_ring *r, uint64_t ud, int res, bool more,
			  int line)
{
	struct io_uring_cqe cqe;

	if (t_peek_cqe(r, &cqe)) {
		fprintf(stderr, "line %d: no CQE for %llu (tail %u head %u)\n",
			line, (unsigned long long)ud, *r->cq_tail, *r->cq_head);
		abort();
	}
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, res);
	T_ASSERT_EQ(!!(cqe.flags & IORING_CQE_F_MORE), more);
}

#define expect_now(r, ud, res, more) expect_now_at(r, ud, res, more, __LINE__)

static void round_once(struct t_ring *r)
{
	struct io_uring_cqe cqe;
	int p1[2], p2[2];

	T_ASSERT_EQ(pipe(p1), 0);
	T_ASSERT_EQ(pipe(p2), 0);
	t_prep_poll_add(t_get_sqe(r), p1[0], POLLIN, IORING_POLL_ADD_MULTI, 0);
	t_prep_poll_add(t_get_sqe(r), p2[0], POLLIN, 0, 1);
	T_ASSERT_EQ(t_submit(r), 2);
	T_ASSERT_EQ(t_peek_cqe(r, &cqe), -EAGAIN);
	trigger(r, p1);
	expect_now(r, 0, POLLIN, true);
	trigger(r, p1);
	expect_now(r, 0, POLLIN, true);
	trigger(r, p2);
	expect_now(r, 1, POLLIN, false);
	t_prep_poll_remove(t_get_sqe(r), 0, 2);
	T_ASSERT_EQ(t_submit_and_wait(r, 2), 1);
	/* The remove and the multishot's end, in either order. */
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_peek_cqe(r, &cqe), 0);
		if (cqe.user_data == 2)
			T_ASSERT_EQ(cqe.res, 0);
		else
			T_ASSERT_EQ(cqe.user_data * 100 + (unsigned)-cqe.res,
				    0 * 100 + ECANCELED);
	}
	do_close(p1[0]);
	do_close(p1[1]);
	do_close(p2[0]);
	do_close(p2[1]);
}

int main(void)
{
	struct io_uring_params p = {
		.flags =
			IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	};
	struct t_ring r;
	int ret;

	t_watchdog(60);
	t_require_engine();
	ret = t_ring_init(&r, 64, &p);
	if (ret == -EINVAL)
		return T_EXIT_SKIP; /* a kernel before 6.1 */
	T_ASSERT_EQ(ret, 0);
	for (int i = 0; i < ROUNDS; i++)
		round_once(&r);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
