/* SPDX-License-Identifier: MIT */
/*
 * SQPOLL rings the program lets go of (closed and unmapped) go away with
 * all they hold, as the kernel's do at their last reference (io_ring_exit_work,
 * io_sq_thread_finish): each ring below parks a POLL_ADD (so that it has a
 * readiness loop, with its fds, and a reactor thread on nowait), is let go
 * of, and after the next setups the process has no more fds and threads
 * than before. The fuzzer found the engine keeping every one (fds, memory,
 * a thread each) and slowing each later setup down by their number.
 */
#include <dirent.h>
#include <poll.h>
#include <unistd.h>
#include "helpers.h"

#define NR_RINGS 16

/* Entries of a /proc/self directory (fd, task). */
static int count(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	T_ASSERT(d != NULL);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - !strcmp(dir, "/proc/self/fd"); /* opendir's own fd */
}

/* An SQPOLL ring that parks a poll of a pipe, gets its CQE, is let go. */
static void one_ring(void)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int fds[2];

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	p.sq_thread_idle = 10;
	T_ASSERT_EQ(t_ring_init(&r, 4, &p), 0);
	T_ASSERT_EQ(pipe(fds), 0);
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	sqe->opcode = IORING_OP_POLL_ADD;
	sqe->fd = fds[0];
	sqe->poll32_events = POLLIN;
	sqe->user_data = 1;
	t_ring_flush(&r);
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0), 1);
	/* Consumed by the poller and parked before the data comes. */
	for (int i = 0; i < 2000 && *r.sq_head != *r.sq_tail; i++)
		usleep(1000);
	usleep(5000);
	T_ASSERT_EQ(write(fds[1], "x", 1), 1);
	T_ASSERT_EQ(t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, POLLIN), 0);
	close(fds[0]);
	close(fds[1]);
	t_ring_exit(&r);
}

/*
 * Plain setups (the engine looks for rings let go of at each), until the
 * counts are down to fds and threads, at most 300 of them.
 */
static void settle(int fds, int threads)
{
	for (int i = 0; i < 300; i++) {
		struct t_ring r;

		if (count("/proc/self/fd") <= fds &&
		    count("/proc/self/task") <= threads && i >= 10)
			return;
		T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
		t_ring_exit(&r);
		usleep(10000);
	}
}

int main(void)
{
	int fds, threads;

	t_require_engine();
	t_watchdog(60);
	/* The engine's own lasting fds and threads come with the first. */
	one_ring();
	settle(1 << 20, 1 << 20);
	fds = count("/proc/self/fd");
	threads = count("/proc/self/task");
	for (int i = 0; i < NR_RINGS; i++)
		one_ring();
	settle(fds + 2, threads + 1);
	T_ASSERT_LE(count("/proc/self/fd"), fds + 2);
	T_ASSERT_LE(count("/proc/self/task"), threads + 1);
	return T_EXIT_PASS;
}
