/* SPDX-License-Identifier: MIT */
/*
 * fork() after the engine has started its threads (workers, reactor): the
 * child has none of them, so a ring it sets up must still complete a pipe
 * READ that parks and an IOSQE_ASYNC NOP; the parent's ring keeps working
 * too, including a read that was parked across the fork. Grandchildren as
 * well. Every child is bounded by t_waitpid_timeout.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

/* A parked pipe READ plus an IOSQE_ASYNC NOP on ring r; both complete. */
static void exercise(struct t_ring *r, uint64_t base)
{
	struct io_uring_cqe cqe;
	struct io_uring_sqe *sqe;
	unsigned int seen = 0;
	char buf[8];
	int p[2], i;

	T_ASSERT_EQ(pipe(p), 0);
	sqe = t_get_sqe(r);
	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 0, base);
	sqe = t_get_sqe(r);
	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, base + 1);
	sqe->flags = IOSQE_ASYNC;
	T_ASSERT_EQ(t_submit(r), 2);
	/* The NOP completes on its own; the read waits for data. */
	T_ASSERT_EQ(t_expect_cqe(r, base + 1, 0), 0);
	t_expect_no_cqe(r, 10);
	T_ASSERT_EQ(write(p[1], "forked", 6), 6);
	T_ASSERT_EQ(t_expect_cqe(r, base, 6), 0);
	T_ASSERT_EQ(memcmp(buf, "forked", 6), 0);

	/* A few more async NOPs at once (more than one worker). */
	for (i = 0; i < 4; i++) {
		sqe = t_get_sqe(r);
		T_ASSERT(sqe != NULL);
		t_prep_nop(sqe, base + 10 + i);
		sqe->flags = IOSQE_ASYNC;
	}
	T_ASSERT_EQ(t_submit_and_wait(r, 4), 4);
	for (i = 0; i < 4; i++) {
		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		T_ASSERT_GE(cqe.user_data, base + 10);
		T_ASSERT_LT(cqe.user_data, base + 14);
		seen |= 1U << (cqe.user_data - base - 10);
		T_ASSERT_EQ(cqe.res, 0);
	}
	T_ASSERT_EQ(seen, 0xf);
	close(p[0]);
	close(p[1]);
}

/* In a fresh child: a new ring, exercised; exit 0 on success. */
static void child_body(int depth)
{
	struct t_ring r;

	t_watchdog(10);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	exercise(&r, 1000 * (depth + 1));
	if (depth > 0) {
		pid_t pid = fork();

		T_ASSERT_GE(pid, 0);
		if (pid == 0) {
			child_body(depth - 1);
			_exit(T_EXIT_PASS);
		}
		T_ASSERT_EQ(t_waitpid_timeout(pid, 10000), 0);
		/* This ring still works after its own fork. */
		exercise(&r, 1000 * (depth + 1) + 500);
	}
	t_ring_exit(&r);
}

static void run_child(int depth)
{
	pid_t pid = fork();
	int status;

	T_ASSERT_GE(pid, 0);
	if (pid == 0) {
		child_body(depth);
		_exit(T_EXIT_PASS);
	}
	status = t_waitpid_timeout(pid, 15000);
	if (status != 0)
		fprintf(stderr, "[%s] child status 0x%x\n", t_engine_name(),
			status);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* The parent warms its threads up, forks, the child uses a new ring. */
static void test_child_after_threads(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	exercise(&r, 1);
	run_child(0);
	/* The parent is unaffected. */
	exercise(&r, 100);
	t_ring_exit(&r);
}

/* A read parked in the parent at fork time completes in the parent. */
static void test_parked_across_fork(void)
{
	struct t_ring r;
	struct io_uring_sqe *sqe;
	char buf[8];
	int p[2];

	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	exercise(&r, 1);
	T_ASSERT_EQ(pipe(p), 0);
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 77);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 10);
	run_child(0);
	T_ASSERT_EQ(write(p[1], "parent", 6), 6);
	T_ASSERT_EQ(t_expect_cqe(&r, 77, 6), 0);
	T_ASSERT_EQ(memcmp(buf, "parent", 6), 0);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/* Three generations, each forking after its engine threads started. */
static void test_generations(void)
{
	run_child(2);
}

/* Fork while another thread of the parent sits in GETEVENTS. */
struct waiter {
	struct t_ring *r;
	struct io_uring_cqe cqe;
	int ret;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	w->ret = t_wait_cqe(w->r, &w->cqe);
	return NULL;
}

static void test_fork_while_waiting(void)
{
	struct io_uring_sqe *sqe;
	struct waiter w;
	struct t_ring r;
	pthread_t th;
	char buf[8];
	int p[2];

	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	exercise(&r, 1);
	T_ASSERT_EQ(pipe(p), 0);
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_READ, p[0], buf, sizeof(buf), 0, 88);
	T_ASSERT_EQ(t_submit(&r), 1);
	w.r = &r;
	w.ret = -1;
	T_ASSERT_EQ(pthread_create(&th, NULL, waiter_fn, &w), 0);
	usleep(10000);
	run_child(0);
	T_ASSERT_EQ(write(p[1], "w", 1), 1);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	T_ASSERT_EQ(w.ret, 0);
	T_ASSERT_EQ(w.cqe.user_data, 88);
	T_ASSERT_EQ(w.cqe.res, 1);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

int main(void)
{
#if defined(__SANITIZE_THREAD__)
	/* TSan cannot start threads in a child of a threaded process. */
	printf("skip: ThreadSanitizer does not support threads after fork\n");
	return T_EXIT_SKIP;
#endif
	t_require_engine();
	t_watchdog(60);
	test_child_after_threads();
	test_parked_across_fork();
	test_generations();
	test_fork_while_waiting();
	return T_EXIT_PASS;
}
