/* SPDX-License-Identifier: MIT */
/*
 * The io-wq workers (threads named iou-wrk-<tid>) go with the task's last
 * ring: once no ring of the process is held (no fd, no mapping), its idle
 * workers are gone within a bound, not after the 5 s idle time-out; while
 * a ring is still held, by an fd or by a mapping alone, they stay; a ring
 * made afterwards gets workers again. Nothing tells the engine that the
 * program let go of a ring (it closes and unmaps with plain system calls).
 * liburing 2.15's io-wq-unused-exit checks the first part within 2 s.
 * And while a ring is held, idle workers sleep: the kernel's until work
 * comes or their idle time-out, nowait's too but for one per pool (the
 * one that looks whether the rings are still held).
 * Semantics: io_uring/tctx.c, io-wq.c (io_wq_put_and_exit).
 */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "helpers.h"

/*
 * The wait for workers to go: generous (the kernel needs none), yet below
 * the idle time-out of 5 s, which would let them go by itself.
 */
#define GONE_TRIES 300 /* x 10 ms */
/* How long a held ring's idle workers must stay: well below the 5 s. */
#define HELD_MS	   600
/* Blocking reads at once in test_idle_quiet: as many workers. */
#define NR_BLOCKED 4
/* Workers of nowait's that may wake while idle: one per pool. */
#define LOOKERS	   2

static char path[64];

/* The process's threads named iou-wrk-*. */
static int count_workers(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	T_ASSERT(d != NULL);
	while ((de = readdir(d))) {
		char comm_path[300], comm[32] = "";

		if (de->d_name[0] == '.')
			continue;
		snprintf(comm_path, sizeof(comm_path),
			 "/proc/self/task/%s/comm", de->d_name);
		/* -1: the thread just exited */
		if (t_read_text(comm_path, comm, sizeof(comm)) > 0 &&
		    !strncmp(comm, "iou-wrk-", 8))
			n++;
	}
	closedir(d);
	return n;
}

/*
 * Each iou-wrk thread's voluntary context switches (tid, count), up to
 * max; returns how many. A sleeping thread's count moves only when it
 * wakes and sleeps again.
 */
static int worker_switches(int *tid, long *sw, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	T_ASSERT(d != NULL);
	while ((de = readdir(d)) && n < max) {
		char p[300], buf[4096];
		const char *v;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", de->d_name);
		if (t_read_text(p, buf, sizeof(buf)) < 0 ||
		    strncmp(buf, "iou-wrk-", 8))
			continue;
		snprintf(p, sizeof(p), "/proc/self/task/%s/status", de->d_name);
		if (t_read_text(p, buf, sizeof(buf)) < 0)
			continue;
		v = strstr(buf, "\nvoluntary_ctxt_switches:");
		if (!v)
			continue;
		tid[n] = atoi(de->d_name);
		sw[n++] = atol(v + 26);
	}
	closedir(d);
	return n;
}

/* Wait (bounded) until no worker is left; returns how many remain. */
static int wait_workers_gone(void)
{
	int n = count_workers();

	for (int i = 0; n && i < GONE_TRIES; i++) {
		usleep(10000);
		n = count_workers();
	}
	return n;
}

static void ring_init(struct t_ring *r)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	T_ASSERT_EQ(t_ring_init(r, 8, &p), 0);
}

/*
 * Work that both engines run on a worker: an FSYNC (never done
 * nonblocking) and an IOSQE_ASYNC read of a pipe with data in it.
 */
static void run_on_workers(struct t_ring *r, int file, uint64_t ud)
{
	struct io_uring_sqe *sqe;
	int fds[2];
	char c;

	T_ASSERT_EQ(pipe(fds), 0);
	T_ASSERT_EQ(write(fds[1], "x", 1), 1);
	sqe = t_get_sqe(r);
	sqe->opcode = IORING_OP_FSYNC;
	sqe->fd = file;
	sqe->user_data = ud;
	sqe = t_get_sqe(r);
	t_prep_rw(sqe, IORING_OP_READ, fds[0], &c, 1, 0, ud + 1);
	sqe->flags = IOSQE_ASYNC;
	T_ASSERT_EQ(t_submit(r), 2);
	for (int i = 0; i < 2; i++) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		if (cqe.user_data == ud) {
			T_ASSERT_EQ(cqe.res, 0);
		} else {
			T_ASSERT_EQ(cqe.user_data, ud + 1);
			T_ASSERT_EQ(cqe.res, 1);
		}
	}
	close(fds[0]);
	close(fds[1]);
	/* The workers that ran them are idle now, and still there. */
	T_ASSERT_GT(count_workers(), 0);
}

/* Two rings: the workers outlive the first and go with the second. */
static void test_last_ring(int file)
{
	struct t_ring a, b;

	ring_init(&a);
	ring_init(&b);
	run_on_workers(&a, file, 10);
	t_ring_exit(&a);
	usleep(HELD_MS * 1000);
	T_ASSERT_GT(count_workers(), 0); /* b is held */
	run_on_workers(&b, file, 20);
	t_ring_exit(&b);
	T_ASSERT_EQ(wait_workers_gone(), 0);
}

/* A ring held by its mapping alone keeps them; the munmap lets them go. */
static void test_mapping_holds(int file)
{
	struct t_ring r;
	int fd;

	ring_init(&r);
	run_on_workers(&r, file, 30);
	fd = r.fd;
	r.fd = -1;
	T_ASSERT_EQ(close(fd), 0);
	usleep(HELD_MS * 1000);
	T_ASSERT_GT(count_workers(), 0);
	t_ring_unmap(&r);
	T_ASSERT_EQ(wait_workers_gone(), 0);
}

/* After all that, a new ring's work runs on new workers as before. */
static void test_again(int file)
{
	struct t_ring r;

	ring_init(&r);
	run_on_workers(&r, file, 40);
	t_ring_exit(&r);
	T_ASSERT_EQ(wait_workers_gone(), 0);
}

/*
 * Idle workers of a held ring sleep: of NR_BLOCKED that each sat in a
 * blocking open (a FIFO's, until a writer comes), at most LOOKERS woke
 * (and slept again) while the program did nothing for HELD_MS. nowait's
 * all used to wake every 250 ms.
 */
static void test_idle_quiet(void)
{
	int tid0[64], tid1[64], n0, n1, wr, woke = 0;
	long sw0[64], sw1[64];
	char fifo[64];
	struct t_ring r;

	snprintf(fifo, sizeof(fifo), "/tmp/nw-iowq-fifo.%d", (int)getpid());
	T_ASSERT_EQ(mkfifo(fifo, 0600), 0);
	ring_init(&r);
	for (int i = 0; i < NR_BLOCKED; i++) {
		struct io_uring_sqe *sqe = t_get_sqe(&r);

		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = IORING_OP_OPENAT;
		sqe->fd = AT_FDCWD;
		sqe->addr = (uintptr_t)fifo;
		sqe->open_flags = O_RDONLY;
		sqe->flags = IOSQE_ASYNC; /* no nonblocking try: it succeeds */
		sqe->user_data = 50 + i;
	}
	T_ASSERT_EQ(t_submit(&r), NR_BLOCKED);
	wr = open(fifo, O_WRONLY); /* once a reader has it open */
	T_ASSERT_GE(wr, 0);
	for (int i = 0; i < NR_BLOCKED; i++) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_GE(cqe.res, 0);
		close(cqe.res);
	}
	close(wr);
	unlink(fifo);
	usleep(100000); /* they have gone back to sleep */
	n0 = worker_switches(tid0, sw0, 64);
	T_ASSERT_GE(n0, 1);
	/* nowait starts a worker per blocked open (the kernel: one here) */
	if (t_engine() == T_ENGINE_USER)
		T_ASSERT_GT(n0, LOOKERS);
	usleep(HELD_MS * 1000);
	n1 = worker_switches(tid1, sw1, 64);
	for (int i = 0; i < n0; i++)
		for (int j = 0; j < n1; j++)
			woke += tid0[i] == tid1[j] && sw0[i] != sw1[j];
	T_ASSERT_LE(woke, LOOKERS);
	t_ring_exit(&r);
	T_ASSERT_EQ(wait_workers_gone(), 0);
}

int main(void)
{
	int file;

	t_require_engine();
	t_watchdog(60);
	snprintf(path, sizeof(path), "/tmp/nw-iowq-exit.%d", (int)getpid());
	file = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	T_ASSERT_GE(file, 0);
	unlink(path);
	T_ASSERT_EQ(write(file, "data", 4), 4);
	T_ASSERT_EQ(count_workers(), 0);
	test_last_ring(file);
	test_mapping_holds(file);
	test_again(file);
	test_idle_quiet();
	close(file);
	return T_EXIT_PASS;
}
