/* SPDX-License-Identifier: MIT */
/*
 * POLL_ADD on a file with no wait queue (a regular file, a directory):
 * the kernel's __io_arm_poll_handler finds no entry queued, completes at
 * once with the mask when one of the events is ready (a multishot poll
 * too, its only CQE, without IORING_CQE_F_MORE) and fails with -EINVAL
 * when none is (POLLPRI, POLLRDHUP on a file: never). nowait, which
 * cannot add such a file to epoll, answered -ENOMEM for both (found by
 * sqe-fuzz). Semantics: io_uring/poll.c.
 */
#include <fcntl.h>
#include <sys/poll.h>
#include <unistd.h>
#include "helpers.h"

static void poll_one(struct t_ring *r, int fd, unsigned int events,
		     unsigned int flags, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_poll_add(sqe, fd, events, flags, ud);
	T_ASSERT_EQ(t_submit(r), 1);
}

int main(void)
{
	char path[] = "/tmp/nowait-poll-file.XXXXXX";
	struct t_ring r;
	int fd, dir;

	t_require_engine();
	t_watchdog(30);
	fd = mkstemp(path);
	T_ASSERT_GE(fd, 0);
	unlink(path);
	dir = open("/tmp", O_RDONLY | O_DIRECTORY);
	T_ASSERT_GE(dir, 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);

	/* Ready: the mask at once; a multishot one ends with it. */
	poll_one(&r, fd, POLLIN, 0, 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, POLLIN), 0);
	poll_one(&r, fd, POLLOUT | POLLPRI, IORING_POLL_ADD_MULTI, 2);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, POLLOUT), 0);
	poll_one(&r, dir, POLLIN, IORING_POLL_ADD_MULTI, 3);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, POLLIN), 0);

	/* Never ready, no wait queue to wait on: -EINVAL. */
	poll_one(&r, fd, POLLPRI, 0, 4);
	T_ASSERT_EQ(t_expect_cqe(&r, 4, -EINVAL), 0);
	poll_one(&r, dir, POLLRDHUP, IORING_POLL_ADD_MULTI, 5);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, -EINVAL), 0);

	/* Nothing more comes (no second CQE of the multishot ones). */
	t_expect_no_cqe(&r, 20);
	t_ring_exit(&r);
	close(fd);
	close(dir);
	return T_EXIT_PASS;
}
