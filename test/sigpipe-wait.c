/* SPDX-License-Identifier: MIT */
/*
 * A WRITE into a pipe without readers (-EPIPE) and the SIGPIPE it raises,
 * in each disposition, against the kernel. The kernel's pipe_write sends
 * SIGPIPE to the task that issues the write: the submitter, inline or in
 * the task work of a retry once the parked write's pipe changes; an io-wq
 * worker (IOSQE_ASYNC) gets it itself, blocked, and the program never
 * sees it. In the same batch a READ parks on another pipe that a thread
 * writes DELAY_US later, and enter waits for both CQEs:
 * - SIG_IGN (as servers have it): the kernel discards the signal as it is
 *   sent, so the wait goes on to both CQEs. The engine holds every signal
 *   while it issues, so the signal was queued there, and a sleep that let
 *   it in ended the wait early with one CQE;
 * - SIG_DFL: the process dies of SIGPIPE;
 * - a handler: it runs once and the signal ends the wait (-EINTR, which
 *   enter reports as the count submitted) with the write's CQE only;
 * - SIGPIPE blocked by the program: the wait is not ended, the signal is
 *   pending afterwards, no handler ran;
 * - IOSQE_ASYNC: no signal, whatever the disposition.
 * Each case runs in a child of its own (dispositions are the process's).
 * Semantics: fs/pipe.c pipe_write, kernel/signal.c sig_ignored,
 * io_uring/wait.c io_cqring_wait (kernel-semantics.md 4).
 */
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>
#include "helpers.h"

#define CHILD_ENV "NW_SIGPIPE_WAIT_CHILD"
#define DELAY_US  200000
#define DEFER	  (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)

enum disp { D_IGN, D_DFL, D_HANDLER };

struct tcase {
	enum disp disp;
	bool blocked; /* the program blocks SIGPIPE itself */
	bool parked;  /* the write parks on a full pipe, its reader closes */
	bool async;   /* IOSQE_ASYNC on the write */
	unsigned int setup_flags;
};

static volatile sig_atomic_t hits;
static int closer_fd = -1;

static void on_sigpipe(int sig)
{
	(void)sig;
	hits++;
}

static void *close_later(void *arg)
{
	(void)arg;
	usleep(DELAY_US / 2);
	close(closer_fd);
	return NULL;
}

static void set_disp(const struct tcase *tc)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = tc->disp == D_IGN   ? SIG_IGN
			: tc->disp == D_DFL ? SIG_DFL
					    : on_sigpipe;
	T_ASSERT_EQ(sigaction(SIGPIPE, &sa, NULL), 0);
	if (tc->blocked) {
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGPIPE);
		T_ASSERT_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	}
}

/* The pipe the write goes to: its reader closed now, or DELAY_US / 2 on. */
static void broken_pipe(const struct tcase *tc, int p[2], pthread_t *closer)
{
	static char fill[4096];

	T_ASSERT_EQ(pipe(p), 0);
	if (!tc->parked) {
		close(p[0]);
		return;
	}
	T_ASSERT_EQ(fcntl(p[1], F_SETPIPE_SZ, (int)sizeof(fill)),
		    (int)sizeof(fill));
	T_ASSERT_EQ(write(p[1], fill, sizeof(fill)), (ssize_t)sizeof(fill));
	closer_fd = p[0];
	T_ASSERT_EQ(pthread_create(closer, NULL, close_later, NULL), 0);
}

/* What the parent expects of the child's end, and of its checks. */
static bool expect_death(const struct tcase *tc)
{
	return tc->disp == D_DFL && !tc->blocked && !tc->async;
}

/* Does the signal reach the program (and end the wait)? */
static bool delivered(const struct tcase *tc)
{
	return tc->disp == D_HANDLER && !tc->blocked && !tc->async;
}

/* The write's -EPIPE and the read's byte, in either order. */
static void expect_both(struct t_ring *r)
{
	struct io_uring_cqe cqe;
	unsigned int seen = 0;

	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		T_ASSERT(cqe.user_data == 1 || cqe.user_data == 2);
		T_ASSERT_EQ(cqe.res, cqe.user_data == 1 ? -EPIPE : 1);
		seen |= 1u << cqe.user_data;
	}
	T_ASSERT_EQ(seen, 6u);
}

static void child(const struct tcase *tc)
{
	struct io_uring_params p = {.flags = tc->setup_flags};
	struct io_uring_sqe *sqe;
	struct t_writer w;
	struct t_ring r;
	pthread_t closer;
	sigset_t pending;
	char buf[8];
	int bp[2], other[2], ret;
	unsigned int ready;

	set_disp(tc);
	T_ASSERT_EQ(pipe(other), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	broken_pipe(tc, bp, &closer);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_WRITE, bp[1], "abc", 3, 0, 1);
	if (tc->async)
		sqe->flags |= IOSQE_ASYNC;
	t_prep_rw(t_get_sqe(&r), IORING_OP_READ, other[0], buf, 1, 0, 2);
	t_writer_start(&w, other[1], "x", 1, DELAY_US);
	ret = t_enter(r.fd, t_ring_flush(&r), 2, IORING_ENTER_GETEVENTS, NULL,
		      0);
	ready = t_cq_ready(&r);
	T_ASSERT_EQ(ret, 2);
	T_ASSERT_EQ(hits, delivered(tc) ? 1 : 0);
	T_ASSERT_EQ(ready, delivered(tc) ? 1u : 2u);
	T_ASSERT_EQ(sigpending(&pending), 0);
	T_ASSERT_EQ(sigismember(&pending, SIGPIPE),
		    tc->blocked && !tc->async ? 1 : 0);
	expect_both(&r);
	T_ASSERT_EQ(t_writer_join(&w), 1);
	if (tc->parked)
		pthread_join(closer, NULL);
	t_ring_exit(&r);
	exit(T_EXIT_PASS);
}

/* One case in a child; false (and said) when it did not end as expected. */
static bool run(const struct tcase *tc)
{
	pid_t pid = fork();
	bool ok;
	int st;

	T_ASSERT_GE(pid, 0);
	if (pid == 0)
		child(tc);
	st = t_waitpid_timeout(pid, 10000);
	if (expect_death(tc))
		ok = WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE;
	else
		ok = WIFEXITED(st) && WEXITSTATUS(st) == T_EXIT_PASS;
	if (!ok)
		fprintf(stderr,
			"[%s] disp %d blocked %d parked %d async %d flags %#x: "
			"wait status %#x\n",
			t_engine_name(), tc->disp, tc->blocked, tc->parked,
			tc->async, tc->setup_flags, st);
	return ok;
}

static void run_checks(void)
{
	static const struct tcase cases[] = {
		{D_IGN, false, false, false, 0},
		{D_IGN, false, false, false, DEFER},
		{D_IGN, false, true, false, 0},
		{D_IGN, false, true, false, DEFER},
		{D_DFL, false, false, false, 0},
		{D_DFL, false, true, false, DEFER},
		{D_HANDLER, false, false, false, 0},
		{D_HANDLER, false, false, false, DEFER},
		/* (DEFER: the kernel wakes for both items at once.) */
		{D_HANDLER, false, true, false, 0},
		{D_IGN, true, false, false, 0},
		{D_HANDLER, true, false, false, 0},
		{D_HANDLER, true, true, false, DEFER},
		{D_DFL, false, false, true, 0},
		{D_DFL, false, true, true, DEFER},
		{D_HANDLER, false, false, true, 0},
		{D_HANDLER, false, true, true, 0},
		{D_IGN, false, false, true, DEFER},
	};

	unsigned int failed = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		failed += !run(&cases[i]);
	T_ASSERT_EQ(failed, 0);
}

int main(void)
{
#if defined(__SANITIZE_THREAD__)
	/* TSan runs signal handlers late, at its own points. */
	printf("skip: ThreadSanitizer defers signal handlers\n");
	return T_EXIT_SKIP;
#endif
	t_watchdog(60);
	return t_run_also_preloaded(CHILD_ENV, run_checks);
}
