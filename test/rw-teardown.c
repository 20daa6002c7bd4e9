/* SPDX-License-Identifier: MIT */
/*
 * Tearing a ring down with requests still parked on pipes: closing the ring
 * fd and unmapping, exiting with the ring open, exiting from another thread
 * while one waits in GETEVENTS, and IOSQE_ASYNC reads in flight. Each case
 * runs in a forked child; the child must exit cleanly (no hang, no crash)
 * within a bounded time. After the ring is gone, a cancelled read must not
 * eat data written to its pipe later.
 */
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

#define NPARK 8

/* Pipes shared with the parent, which holds the write ends. */
static int pipes[NPARK][2];
static char bufs[NPARK][16];

/* Park NPARK reads (every other one IOSQE_ASYNC when async is set). */
static void park_reads(struct t_ring *r, bool async)
{
	struct io_uring_sqe *sqe;
	int i;

	for (i = 0; i < NPARK; i++) {
		sqe = t_get_sqe(r);
		T_ASSERT(sqe != NULL);
		t_prep_rw(sqe, IORING_OP_READ, pipes[i][0], bufs[i],
			  sizeof(bufs[i]), 0, i);
		if (async && (i & 1))
			sqe->flags = IOSQE_ASYNC;
	}
	T_ASSERT_EQ(t_submit(r), NPARK);
	t_expect_no_cqe(r, 10);
}

enum mode {
	CLOSE_AND_EXIT,	  /* munmap + close, then exit(0) */
	CLOSE_AND_RETURN, /* munmap + close, keep running, then _exit */
	EXIT_OPEN,	  /* exit(0) with the ring open and mapped */
	UNDERSCORE_EXIT,  /* _exit(0) with the ring open */
	EXIT_WHILE_WAIT,  /* another thread is in GETEVENTS */
	ASYNC_IN_FLIGHT,  /* IOSQE_ASYNC reads parked as well */
	MODE_NR,
};

static const char *const mode_names[] = {
	"close-and-exit", "close-and-return",	"exit-open",
	"_exit",	  "exit-while-waiting", "async-in-flight"};

static void *waiter_fn(void *arg)
{
	struct io_uring_cqe cqe;

	t_wait_cqe(arg, &cqe);
	return NULL;
}

static void child(enum mode mode)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	pthread_t th;
	int i;

	t_watchdog(10);
	for (i = 0; i < NPARK; i++)
		close(pipes[i][1]);
	T_ASSERT_EQ(t_ring_init(&r, 32, NULL), 0);
	park_reads(&r, mode == ASYNC_IN_FLIGHT);
	switch (mode) {
	case CLOSE_AND_EXIT:
	case ASYNC_IN_FLIGHT:
		t_ring_exit(&r);
		exit(0);
	case CLOSE_AND_RETURN:
		t_ring_exit(&r);
		/* Keep living a little with the ring gone; use a new one. */
		usleep(20000);
		T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
		sqe = t_get_sqe(&r);
		T_ASSERT(sqe != NULL);
		t_prep_nop(sqe, 5);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 5, 0), 0);
		t_ring_exit(&r);
		_exit(0);
	case EXIT_OPEN:
		exit(0);
	case UNDERSCORE_EXIT:
		_exit(0);
	case EXIT_WHILE_WAIT:
		T_ASSERT_EQ(pthread_create(&th, NULL, waiter_fn, &r), 0);
		usleep(10000);
		exit(0);
	default:
		abort();
	}
}

static int pipe_bytes(int fd)
{
	int n = -1;

	T_ASSERT_EQ(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

static void run_mode(enum mode mode)
{
	int i, status;
	pid_t pid;

	for (i = 0; i < NPARK; i++)
		T_ASSERT_EQ(pipe(pipes[i]), 0);
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (pid == 0)
		child(mode);
	status = t_waitpid_timeout(pid, 8000);
	if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "[%s] %s: child status %d (0x%x)\n",
			t_engine_name(), mode_names[mode], status,
			status < 0 ? 0 : status);
	T_ASSERT_GE(status, 0);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), 0);

	/* The child is gone: its reads must not take data written now. */
	for (i = 0; i < NPARK; i++)
		T_ASSERT_EQ(write(pipes[i][1], "after", 5), 5);
	usleep(20000);
	for (i = 0; i < NPARK; i++) {
		T_ASSERT_EQ(pipe_bytes(pipes[i][0]), 5);
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
}

/*
 * In-process: after munmap + close of the ring, data written to the pipes
 * stays there (the parked reads were cancelled, not left to run).
 */
static void test_close_in_process(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int i;

	for (i = 0; i < NPARK; i++)
		T_ASSERT_EQ(pipe(pipes[i]), 0);
	T_ASSERT_EQ(t_ring_init(&r, 32, NULL), 0);
	park_reads(&r, false);
	t_ring_exit(&r);
	for (i = 0; i < NPARK; i++)
		T_ASSERT_EQ(write(pipes[i][1], "after", 5), 5);
	usleep(20000);
	for (i = 0; i < NPARK; i++) {
		T_ASSERT_EQ(pipe_bytes(pipes[i][0]), 5);
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	/* And the process can set up and use a ring again. */
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, 9);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 9, 0), 0);
	t_ring_exit(&r);
}

/* Many rings with parked requests created and torn down in a loop. */
static void test_churn(void)
{
	int round, i;

	for (i = 0; i < NPARK; i++)
		T_ASSERT_EQ(pipe(pipes[i]), 0);
	for (round = 0; round < 50; round++) {
		struct t_ring r;

		T_ASSERT_EQ(t_ring_init(&r, 32, NULL), 0);
		park_reads(&r, round & 1);
		t_ring_exit(&r);
	}
	for (i = 0; i < NPARK; i++) {
		T_ASSERT_EQ(write(pipes[i][1], "x", 1), 1);
		usleep(1000);
		T_ASSERT_EQ(pipe_bytes(pipes[i][0]), 1);
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
}

int main(void)
{
	int m;

	t_require_engine();
	t_watchdog(60);
	for (m = 0; m < MODE_NR; m++)
		run_mode(m);
	test_close_in_process();
	test_churn();
	return T_EXIT_PASS;
}
