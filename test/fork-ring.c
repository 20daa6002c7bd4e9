/* SPDX-License-Identifier: MIT */
/*
 * A ring shared with a forked child (liburing's across-fork, io-cancel,
 * timeout's fork+exec). On both engines the child reaps CQEs the parent
 * posts, before and after the fork, times out on an empty CQ, submits a
 * NOP of its own whose CQE the parent reaps, and wakes a request the
 * parent parked (a pipe POLL_ADD) by writing the pipe. The child's
 * register: the kernel serves it; the user engine, whose registered state
 * for the ring lives in the parent, refuses it at once with -EPERM
 * (README, "Limits"; docs/fork.md), never hangs. Every child is bounded
 * by t_waitpid_timeout. fork-submit.c tests the child's submits further.
 */
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

static void child(struct t_ring *r, int wfd)
{
	struct __kernel_timespec ts = {0, 10000000};
	struct io_uring_getevents_arg arg;
	struct io_uring_cqe cqe;
	struct {
		struct io_uring_probe hdr;
		struct io_uring_probe_op ops[4];
	} probe;
	bool kernel = t_engine() == T_ENGINE_KERNEL;

	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 1);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0); /* the parent's, after the fork */
	T_ASSERT_EQ(cqe.user_data, 4);
	memset(&arg, 0, sizeof(arg));
	arg.ts = (uint64_t)(uintptr_t)&ts;
	T_ASSERT_EQ(t_enter(r->fd, 0, 1,
			    IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg,
			    sizeof(arg)),
		    -ETIME);
	/* The parent submitted since the fork: start from the shared tail. */
	r->sqe_tail = *r->sq_tail;
	t_prep_nop(t_get_sqe(r), 3);
	T_ASSERT_EQ(t_submit(r), 1);
	memset(&probe, 0, sizeof(probe));
	T_ASSERT_EQ(t_register(r->fd, IORING_REGISTER_PROBE, &probe, 4),
		    kernel ? 0 : -EPERM);
	T_ASSERT_EQ(write(wfd, "x", 1), 1);
	/*
	 * _exit: under ASan, exit() runs LeakSanitizer's check, which in a
	 * child forked while another thread (the ring's reactor) held the
	 * sanitizer's allocator lock waits on it for ever (seen in CI).
	 */
	fflush(NULL);
	_exit(T_EXIT_PASS);
}

int main(void)
{
	struct io_uring_params p;
	struct io_uring_cqe cqe;
	struct t_ring r;
	unsigned int seen = 0, want;
	int fds[2], status;
	pid_t pid;

	t_require_engine();
	t_watchdog(30);
	memset(&p, 0, sizeof(p));
	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	T_ASSERT_EQ(pipe(fds), 0);
	t_prep_nop(t_get_sqe(&r), 1);
	t_prep_poll_add(t_get_sqe(&r), fds[0], POLLIN, 0, 2);
	T_ASSERT_EQ(t_submit(&r), 2);
	fflush(NULL);
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (!pid)
		child(&r, fds[1]);
	t_prep_nop(t_get_sqe(&r), 4);
	T_ASSERT_EQ(t_submit(&r), 1);
	status = t_waitpid_timeout(pid, 20000);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), T_EXIT_PASS);
	/* The poll the child woke and the child's NOP. */
	want = 1U << 2 | 1U << 3;
	while (seen != want) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT(cqe.user_data == 2 || cqe.user_data == 3);
		T_ASSERT_EQ(seen & (1U << cqe.user_data), 0);
		seen |= 1U << cqe.user_data;
		if (cqe.user_data == 2)
			T_ASSERT_EQ(cqe.res & POLLIN, POLLIN);
	}
	/* The parent's ring still works, after the child's SQE. */
	r.sqe_tail = *r.sq_tail;
	t_prep_nop(t_get_sqe(&r), 5);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.res, 0);
	T_ASSERT_EQ(cqe.user_data, 5);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	close(fds[0]);
	close(fds[1]);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
