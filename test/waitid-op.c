/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_WAITID against the kernel: the argument errors, a child that
 * exits later (P_PID, P_ALL, P_PIDFD), one that exited already, WNOHANG,
 * the siginfo fields written (and only those), a bad siginfo pointer,
 * ASYNC_CANCEL (count 1, the child left to reap), a LINK_TIMEOUT, and
 * waits that the SIGCHLD of other children (ignored) does not end.
 */
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "helpers.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

struct kid {
	pid_t pid;
	int go; /* write a byte: the child exits */
};

/* A child that exits with code once told to. */
static struct kid kid_start(int code)
{
	struct kid k;
	int p[2];
	char c;

	T_ASSERT_EQ(pipe(p), 0);
	k.pid = fork();
	T_ASSERT_GE(k.pid, 0);
	if (!k.pid) {
		close(p[1]);
		if (read(p[0], &c, 1) < 0)
			_exit(100);
		_exit(code);
	}
	close(p[0]);
	k.go = p[1];
	return k;
}

static void kid_go(struct kid *k)
{
	T_ASSERT_EQ(write(k->go, "x", 1), 1);
	close(k->go);
}

static void prep_waitid(struct io_uring_sqe *sqe, int which, int id,
			siginfo_t *si, int options, uint64_t ud)
{
	sqe->opcode = NW_OP_WAITID;
	sqe->len = (uint32_t)which;
	sqe->fd = id;
	sqe->file_index = (uint32_t)options;
	sqe->addr2 = (uintptr_t)si;
	sqe->user_data = ud;
}

static int waitid_run(struct t_ring *r, int which, int id, siginfo_t *si,
		      int options)
{
	prep_waitid(t_get_sqe(r), which, id, si, options, 1);
	return t_run(r, 1);
}

static void test_errors(struct t_ring *r)
{
	struct io_uring_sqe *sqe;
	siginfo_t si;

	T_ASSERT_EQ(waitid_run(r, P_ALL, 0, &si, 0), -EINVAL);
	T_ASSERT_EQ(waitid_run(r, P_ALL, 0, &si, WEXITED | 0x40000), -EINVAL);
	T_ASSERT_EQ(waitid_run(r, 99, 0, &si, WEXITED), -EINVAL);
	T_ASSERT_EQ(waitid_run(r, P_PID, 0, &si, WEXITED), -EINVAL);
	T_ASSERT_EQ(waitid_run(r, P_ALL, 0, &si, WEXITED), -ECHILD);
	T_ASSERT_EQ(waitid_run(r, P_PID, 1, &si, WEXITED), -ECHILD);
	T_ASSERT_EQ(waitid_run(r, P_PIDFD, 1000000, &si, WEXITED), -EBADF);
	sqe = t_get_sqe(r);
	prep_waitid(sqe, P_ALL, 0, &si, WEXITED, 1);
	sqe->addr = 1;
	T_ASSERT_EQ(t_run(r, 1), -EINVAL);
}

/* The kernel writes six fields; the rest of the user's siginfo stays. */
static void check_si(const siginfo_t *si, pid_t pid, int code)
{
	const unsigned char *b = (const unsigned char *)si;

	T_ASSERT_EQ(si->si_signo, SIGCHLD);
	T_ASSERT_EQ(si->si_errno, 0);
	T_ASSERT_EQ(si->si_code, CLD_EXITED);
	T_ASSERT_EQ(si->si_pid, pid);
	T_ASSERT_EQ(si->si_uid, getuid());
	T_ASSERT_EQ(si->si_status, code);
	for (size_t i = 32; i < sizeof(*si); i++)
		T_ASSERT_EQ(b[i], 0xa5);
}

static void test_later(struct t_ring *r, int which)
{
	struct kid k = kid_start(3);
	int id = which == P_ALL ? 0 : k.pid, pidfd = -1;
	siginfo_t si;

	if (which == P_PIDFD) {
		pidfd = (int)syscall(SYS_pidfd_open, k.pid, 0);
		T_ASSERT_GE(pidfd, 0);
		id = pidfd;
	}
	memset(&si, 0xa5, sizeof(si));
	prep_waitid(t_get_sqe(r), which, id, &si, WEXITED, 2);
	T_ASSERT_EQ(t_submit(r), 1);
	t_expect_no_cqe(r, 20);
	kid_go(&k);
	t_expect_cqe(r, 2, 0);
	check_si(&si, k.pid, 3);
	T_ASSERT_EQ(waitpid(k.pid, NULL, WNOHANG), -1);
	if (pidfd >= 0)
		close(pidfd);
}

static void test_ready_nohang(struct t_ring *r)
{
	struct kid k = kid_start(5);
	siginfo_t si;

	memset(&si, 0xa5, sizeof(si));
	T_ASSERT_EQ(waitid_run(r, P_PID, k.pid, &si, WEXITED | WNOHANG), 0);
	T_ASSERT_EQ(si.si_signo, 0);
	T_ASSERT_EQ(si.si_pid, 0);
	kid_go(&k);
	/* Waitable without reaping (WNOWAIT), then reaped. */
	T_ASSERT_EQ(waitid(P_PID, (id_t)k.pid, &si, WEXITED | WNOWAIT), 0);
	memset(&si, 0xa5, sizeof(si));
	T_ASSERT_EQ(waitid_run(r, P_PID, k.pid, &si, WEXITED | WNOWAIT), 0);
	check_si(&si, k.pid, 5);
	T_ASSERT_EQ(waitid_run(r, P_PID, k.pid, NULL, WEXITED), 0);
	T_ASSERT_EQ(waitpid(k.pid, NULL, WNOHANG), -1);
}

/* A bad siginfo pointer: -EFAULT, and the child is reaped all the same. */
static void test_fault(struct t_ring *r)
{
	struct kid k = kid_start(0);

	prep_waitid(t_get_sqe(r), P_PID, k.pid, (siginfo_t *)(uintptr_t)0x1234,
		    WEXITED, 3);
	T_ASSERT_EQ(t_submit(r), 1);
	kid_go(&k);
	t_expect_cqe(r, 3, -EFAULT);
	T_ASSERT_EQ(waitpid(k.pid, NULL, WNOHANG), -1);
}

static void test_cancel(struct t_ring *r)
{
	struct kid k = kid_start(7);
	struct io_uring_sqe *sqe;
	int st = 0;

	prep_waitid(t_get_sqe(r), P_PID, k.pid, NULL, WEXITED, 4);
	T_ASSERT_EQ(t_submit(r), 1);
	t_expect_no_cqe(r, 20);
	sqe = t_get_sqe(r);
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->addr = 4;
	sqe->user_data = 50;
	T_ASSERT_EQ(t_submit(r), 1);
	for (int i = 0; i < 2; i++) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe_timeout(r, &cqe, 2000), 0);
		T_ASSERT_EQ(cqe.res, cqe.user_data == 50 ? 1 : -ECANCELED);
	}
	kid_go(&k);
	T_ASSERT_EQ(waitpid(k.pid, &st, 0), k.pid);
	T_ASSERT_EQ(WEXITSTATUS(st), 7);
}

/* A LINK_TIMEOUT ends the wait: its own result is the cancel's count. */
static void test_link_timeout(struct t_ring *r)
{
	struct __kernel_timespec ts = {0, 30000000};
	struct kid k = kid_start(0);
	struct io_uring_sqe *sqe = t_get_sqe(r);

	prep_waitid(sqe, P_PID, k.pid, NULL, WEXITED, 5);
	sqe->flags |= IOSQE_IO_LINK;
	sqe = t_get_sqe(r);
	sqe->opcode = IORING_OP_LINK_TIMEOUT;
	sqe->addr = (uintptr_t)&ts;
	sqe->len = 1;
	sqe->user_data = 6;
	T_ASSERT_EQ(t_submit(r), 2);
	for (int i = 0; i < 2; i++) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe_timeout(r, &cqe, 5000), 0);
		T_ASSERT_EQ(cqe.res, cqe.user_data == 6 ? 1 : -ECANCELED);
	}
	kid_go(&k);
	T_ASSERT_EQ(waitpid(k.pid, NULL, 0), k.pid);
}

/*
 * Children exit while enter waits for a WAITID that stays: their SIGCHLD
 * is ignored, so each wait ends by its timeout, never -EINTR.
 */
static void test_sigchld(struct t_ring *r)
{
	struct kid k = kid_start(0);
	struct io_uring_cqe cqe;

	prep_waitid(t_get_sqe(r), P_PID, k.pid, NULL, WEXITED, 8);
	T_ASSERT_EQ(t_submit(r), 1);
	for (int i = 0; i < 20; i++) {
		pid_t p = fork();

		T_ASSERT_GE(p, 0);
		if (!p)
			_exit(0);
		T_ASSERT_EQ(t_wait_cqe_timeout(r, &cqe, 5), -ETIME);
		T_ASSERT_EQ(waitpid(p, NULL, 0), p);
	}
	kid_go(&k);
	t_expect_cqe(r, 8, 0);
}

int main(void)
{
	struct t_ring r;

	t_require_engine();
	t_watchdog(60);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	test_errors(&r);
	test_later(&r, P_PID);
	test_later(&r, P_ALL);
	test_later(&r, P_PIDFD);
	test_ready_nohang(&r);
	test_fault(&r);
	test_cancel(&r);
	test_link_timeout(&r);
	test_sigchld(&r);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
