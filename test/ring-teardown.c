/* SPDX-License-Identifier: MIT */
/*
 * The life of a ring ends when the program lets go of it: 100 rings, each
 * with a read parked on a pipe, unmapped and closed in turn, must leave
 * the process with the fds and threads it had before (the kernel's ring
 * exit cancels the reads and frees the ring; nowait's reactor thread, its
 * epoll fd and eventfds must go too), and no cancelled read may take
 * data written to its pipe afterwards. The same with DEFER_TASKRUN rings,
 * which have no reactor thread of their own: a later setup reaps them.
 * And a ring with nothing in flight but a registered pipe write end: once
 * the ring is let go of, the reader sees EOF (ring exit put the file).
 * Teardown runs asynchronously on both engines, so the counts are awaited
 * (bounded) before they are compared.
 */
#include <dirent.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "helpers.h"

#define NRINGS 100

static int pipes[NRINGS][2];
static char bufs[NRINGS][8];

static int count_dir(const char *path)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(path);

	T_ASSERT(d != NULL);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - (path[11] == 'f'); /* /proc/self/fd: the DIR's own fd */
}

static int nr_fds(void)
{
	return count_dir("/proc/self/fd");
}

static int nr_threads(void)
{
	return count_dir("/proc/self/task");
}

/* Wait (at most 10 s) until both counts are down to fds and threads. */
static void settle(int fds, int threads)
{
	for (int i = 0; i < 1000; i++) {
		if (nr_fds() <= fds && nr_threads() <= threads)
			break;
		usleep(10000);
	}
}

/* A ring with a read parked on pipe i, then let go of. */
static void park_and_drop(int i, unsigned int flags)
{
	struct io_uring_params p = {.flags = flags};
	struct io_uring_sqe *sqe;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_READ, pipes[i][0], bufs[i], sizeof(bufs[i]), 0,
		  (uint64_t)i + 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	t_ring_exit(&r);
}

/* A ring that only runs a NOP: its setup reaps the rings let go of. */
static void nop_ring(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, 7);
	T_ASSERT_EQ(t_run(&r, 7), 0);
	t_ring_exit(&r);
}

static int pipe_bytes(int fd)
{
	int n = -1;

	T_ASSERT_EQ(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

/* No read of a ring let go of takes what is written now. */
static void check_pipes(int nr)
{
	for (int i = 0; i < nr; i++)
		T_ASSERT_EQ(write(pipes[i][1], "late", 4), 4);
	usleep(20000);
	for (int i = 0; i < nr; i++) {
		T_ASSERT_EQ(pipe_bytes(pipes[i][0]), 4);
		T_ASSERT_EQ(read(pipes[i][0], bufs[i], 4), 4);
	}
}

static void run(int nr, unsigned int flags, int fds, int threads)
{
	for (int i = 0; i < nr; i++)
		park_and_drop(i, flags);
	nop_ring();
	settle(fds, threads);
	T_ASSERT_EQ(nr_fds(), fds);
	T_ASSERT_EQ(nr_threads(), threads);
	/* The kernel's ring exit is work of its own: let it run. */
	usleep(50000);
	check_pipes(nr);
}

/* liburing's ring-leak: the registered file goes with the ring. */
static void test_registered_file(void)
{
	struct pollfd pfd;
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, &p[1], 1), 0);
	close(p[1]);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	T_ASSERT_EQ(poll(&pfd, 1, 0), 0); /* the ring holds the write end */
	t_ring_exit(&r);
	/* Bounded: the kernel's ring exit is async, nowait's looks every 1 s. */
	T_ASSERT_EQ(poll(&pfd, 1, 20000), 1);
	T_ASSERT(pfd.revents & POLLHUP);
	T_ASSERT_EQ(read(p[0], bufs[0], 1), 0);
	close(p[0]);
}

static void *nothing(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t th;
	int fds, threads;

	t_require_engine();
	t_watchdog(60);
	for (int i = 0; i < NRINGS; i++)
		T_ASSERT_EQ(pipe(pipes[i]), 0);
	/*
	 * The engine's process-wide state is made with the first ring; a
	 * sanitizer's helper thread with the first thread (started here).
	 */
	T_ASSERT_EQ(pthread_create(&th, NULL, nothing, NULL), 0);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	threads = nr_threads();
	park_and_drop(0, 0);
	nop_ring();
	settle(1 << 30, threads);
	usleep(50000);
	check_pipes(1);
	fds = nr_fds();

	run(NRINGS, 0, fds, threads);
	run(NRINGS / 2, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	    fds, threads);
	for (int i = 0; i < NRINGS; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	test_registered_file();
	return T_EXIT_PASS;
}
