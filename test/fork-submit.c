/* SPDX-License-Identifier: MIT */
/*
 * A forked child submits on the ring its parent set up (liburing's
 * across-fork; docs/fork.md). Both engines must:
 * - wake the parent asleep in GETEVENTS with the CQE of a NOP the child
 *   submits (the child's posts reach the parent's wait);
 * - keep every CQE while both processes post into the one CQ: the parent
 *   has reads parked on a pipe that the child fills a byte at a time
 *   between batches of NOPs of its own, so the parent's engine completes
 *   them while the child's posts; after the child exits the parent reaps
 *   each user_data exactly once, with its result;
 * - let the child wait for a read of its own that only the parent's
 *   write completes (the child's engine parks it);
 * - keep serving the parent after the child is gone;
 * - cancel at the child's exec what it left in flight, the CQEs posted.
 * A ring with registered files is one the user engine's child cannot
 * serve (its table is the parent's): -EPERM at once there, never a hang.
 * The two processes take turns on the SQ (the program's side of it is
 * not shared), handing over through pipes; every child is bounded.
 */
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

#define NR_READS  16
#define NR_ROUNDS 12
#define NR_NOPS	  6 /* per round */
#define UD_READ	  1000
#define UD_NOP	  2000
#define UD_WAKE	  3000
#define UD_OWN	  4000
#define UD_LAST	  5000
#define UD_EXEC	  6000
#define EXEC_ARG  "exec-target"
#define CHILD_ENV "NOWAIT_TEST_FORK_SUBMIT_CHILD"

/* Block until the peer says go (one byte on fd). */
static void t_recv_go(int fd)
{
	char c;

	T_ASSERT_EQ(read(fd, &c, 1), 1);
}

static void t_send_go(int fd)
{
	T_ASSERT_EQ(write(fd, "g", 1), 1);
}

/* The child's side: go_r is read from the parent, back_w written to. */
static void child(struct t_ring *r, int data_w, int go_r, int back_w)
{
	struct io_uring_cqe cqe;
	char buf[4];

	/* 1: a NOP whose CQE wakes the parent asleep in GETEVENTS. */
	t_recv_go(go_r);
	r->sqe_tail = *r->sq_tail;
	t_prep_nop(t_get_sqe(r), UD_WAKE);
	T_ASSERT_EQ(t_submit(r), 1);
	/* 2: NOPs between the bytes that complete the parent's reads. */
	t_recv_go(go_r);
	r->sqe_tail = *r->sq_tail;
	for (int i = 0; i < NR_ROUNDS; i++) {
		for (int j = 0; j < NR_NOPS; j++)
			t_prep_nop(t_get_sqe(r), UD_NOP + i * NR_NOPS + j);
		T_ASSERT_EQ(t_submit(r), NR_NOPS);
		for (int k = i; k < NR_READS; k += NR_ROUNDS)
			T_ASSERT_EQ(write(data_w, "d", 1), 1);
	}
	t_send_go(back_w);
	/* 3: a read that the parent's write to the go pipe ends. */
	t_recv_go(go_r);
	r->sqe_tail = *r->sq_tail;
	t_prep_rw(t_get_sqe(r), IORING_OP_READ, go_r, buf, sizeof(buf), 0,
		  UD_OWN);
	T_ASSERT_EQ(t_submit(r), 1);
	t_expect_no_cqe(r, 20);
	t_send_go(back_w);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, UD_OWN);
	T_ASSERT_EQ(cqe.res, 1);
	T_ASSERT_EQ(buf[0], 'o');
	fflush(NULL);
	_exit(T_EXIT_PASS);
}

/* The parent's phase 2: every read's and NOP's CQE, each once. */
static void reap_all(struct t_ring *r)
{
	bool seen_read[NR_READS] = {0}, seen_nop[NR_ROUNDS * NR_NOPS] = {0};
	unsigned int left = NR_READS + NR_ROUNDS * NR_NOPS;
	struct io_uring_cqe cqe;

	while (left--) {
		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		if (cqe.user_data >= UD_NOP) {
			unsigned int i = (unsigned int)(cqe.user_data - UD_NOP);

			T_ASSERT_LT(i, NR_ROUNDS * NR_NOPS);
			T_ASSERT(!seen_nop[i]);
			T_ASSERT_EQ(cqe.res, 0);
			seen_nop[i] = true;
		} else {
			unsigned int i =
				(unsigned int)(cqe.user_data - UD_READ);

			T_ASSERT_LT(i, NR_READS);
			T_ASSERT(!seen_read[i]);
			T_ASSERT_EQ(cqe.res, 1);
			seen_read[i] = true;
		}
	}
	T_ASSERT_EQ(t_cq_ready(r), 0);
	T_ASSERT_EQ(*r->cq_overflow, 0);
}

/*
 * The child execs with a TIMEOUT and a linked NOP of its own in flight:
 * exec cancels the task's requests (the kernel's io_uring_task_cancel),
 * and the parent reaps both -ECANCELED (liburing's timeout test). The
 * user engine hears of the exec through the preload's interposers, so
 * this runs on the kernel and in the preloaded rerun (both with the
 * kernel's calls, the rerun's trapped into the engine).
 */
static void child_execs(void)
{
	struct __kernel_timespec ts = {10, 0};
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	struct t_ring r;
	int status;
	pid_t pid;

	memset(&p, 0, sizeof(p));
	T_ASSERT_EQ(t_ring_init(&r, 4, &p), 0);
	fflush(NULL);
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (!pid) {
		sqe = t_get_sqe(&r);
		sqe->opcode = IORING_OP_TIMEOUT;
		sqe->addr = (uint64_t)(uintptr_t)&ts;
		sqe->len = 1;
		sqe->flags = IOSQE_IO_LINK;
		sqe->user_data = UD_EXEC;
		t_prep_nop(t_get_sqe(&r), UD_EXEC + 1);
		T_ASSERT_EQ(t_submit(&r), 2);
		execl("/proc/self/exe", "fork-submit", EXEC_ARG, (char *)NULL);
		_exit(T_EXIT_FAIL);
	}
	status = t_waitpid_timeout(pid, 20000);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), T_EXIT_PASS);
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, UD_EXEC + i);
		T_ASSERT_EQ(cqe.res, -ECANCELED);
	}
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	t_ring_exit(&r);
}

/* The child of a ring with registered files: -EPERM on the user engine. */
static void registered_files(void)
{
	struct io_uring_params p;
	struct t_ring r;
	int fds[2], status;
	pid_t pid;

	memset(&p, 0, sizeof(p));
	T_ASSERT_EQ(t_ring_init(&r, 4, &p), 0);
	T_ASSERT_EQ(pipe(fds), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, fds, 2), 0);
	fflush(NULL);
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (!pid) {
		t_prep_nop(t_get_sqe(&r), 1);
		T_ASSERT_EQ(t_submit(&r),
			    t_fd_is_nowait_ring(r.fd) ? -EPERM : 1);
		fflush(NULL);
		_exit(T_EXIT_PASS);
	}
	status = t_waitpid_timeout(pid, 20000);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), T_EXIT_PASS);
	close(fds[0]);
	close(fds[1]);
	t_ring_exit(&r);
}

static void run_checks(void);

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], EXEC_ARG))
		return T_EXIT_PASS; /* child_execs's new image */
	t_watchdog(60);
	return t_run_also_preloaded(CHILD_ENV, run_checks);
}

static void run_checks(void)
{
	struct io_uring_params p;
	struct io_uring_cqe cqe;
	struct t_ring r;
	char bufs[NR_READS];
	int data[2], go[2], back[2], status;
	pid_t pid;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 256;
	T_ASSERT_EQ(t_ring_init(&r, 32, &p), 0);
	T_ASSERT_EQ(pipe(data), 0);
	T_ASSERT_EQ(pipe(go), 0);
	T_ASSERT_EQ(pipe(back), 0);
	fflush(NULL);
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (!pid) {
		close(data[0]);
		child(&r, data[1], go[0], back[1]);
	}
	close(data[1]);
	/* 1: asleep in GETEVENTS until the child's NOP is posted. */
	t_send_go(go[1]);
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, UD_WAKE);
	T_ASSERT_EQ(cqe.res, 0);
	/* 2: reads parked here, completed while the child posts. */
	r.sqe_tail = *r.sq_tail;
	for (int i = 0; i < NR_READS; i++)
		t_prep_rw(t_get_sqe(&r), IORING_OP_READ, data[0], &bufs[i], 1,
			  0, UD_READ + i);
	T_ASSERT_EQ(t_submit(&r), NR_READS);
	t_send_go(go[1]);
	t_recv_go(back[0]);
	reap_all(&r);
	/* 3: the child waits for its read; this write ends it. */
	t_send_go(go[1]);
	t_recv_go(back[0]);
	T_ASSERT_EQ(write(go[1], "o", 1), 1);
	status = t_waitpid_timeout(pid, 20000);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), T_EXIT_PASS);
	/* 4: the parent's ring still works without the child. */
	r.sqe_tail = *r.sq_tail;
	t_prep_nop(t_get_sqe(&r), UD_LAST);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, UD_LAST);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	close(data[0]);
	close(go[1]);
	close(back[0]);
	t_ring_exit(&r);
	registered_files();
	if (t_engine() == T_ENGINE_KERNEL)
		child_execs();
}
