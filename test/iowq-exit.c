/* SPDX-License-Identifier: MIT */
/*
 * The io-wq workers (threads named iou-wrk-<tid>) go with the task's last
 * ring: once no ring of the process is held (no fd, no mapping), its idle
 * workers are gone within a bound, not after the 5 s idle time-out; while
 * a ring is still held, by an fd or by a mapping alone, they stay; a ring
 * made afterwards gets workers again. Nothing tells the engine that the
 * program let go of a ring (it closes and unmaps with plain system calls).
 * liburing 2.15's io-wq-unused-exit checks the first part within 2 s.
 * Semantics: io_uring/tctx.c, io-wq.c (io_wq_put_and_exit).
 */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include "helpers.h"

/*
 * The wait for workers to go: generous (the kernel needs none), yet below
 * the idle time-out of 5 s, which would let them go by itself.
 */
#define GONE_TRIES 300 /* x 10 ms */
/* How long a held ring's idle workers must stay: well below the 5 s. */
#define HELD_MS	   600

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
		ssize_t len;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(comm_path, sizeof(comm_path),
			 "/proc/self/task/%s/comm", de->d_name);
		fd = open(comm_path, O_RDONLY);
		if (fd < 0)
			continue; /* the thread just exited */
		len = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (len > 0 && !strncmp(comm, "iou-wrk-", 8))
			n++;
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
	close(file);
	return T_EXIT_PASS;
}
