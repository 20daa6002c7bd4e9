/* SPDX-License-Identifier: MIT */
/*
 * The cost of an fd's close and of a bad fd, the kernel's way:
 * - Many rings learn an fd (a READ of a pipe), then the number is closed
 *   (IORING_OP_CLOSE) and reused, round after round, by one ring only.
 *   On the kernel a close never looks at other rings; the user engine's
 *   close hook visits the rings on the fd's owner record (fdcache.c), so
 *   a round visits the one ring that used the number again, not all the
 *   rings the process ever made (liburing 2.15's pipe-bug: 10,000 rings
 *   made in turn). Counted by nw_fd_close_visits, not timed.
 * - POLL_ADD (single and multishot), READ, RECV and multishot ACCEPT on an unopened fd
 *   number as high as 50,000,000 fail with -EBADF, and the process does
 *   not grow: the per-fd table is made only for open fds, two-level, not
 *   sized by the fd number (issue 14: +500 MB before the -EBADF).
 */
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include "helpers.h"
#include "../src/fdcache.h"

#define RINGS  150
#define ROUNDS 200
#define BIG_FD 50000000

static long rss_kb(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	T_ASSERT(f != NULL);
	T_ASSERT_EQ(fscanf(f, "%ld %ld", &pages, &rss), 2);
	fclose(f);
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* A READ of fd (data waiting), one CQE with n bytes. */
static void read_one(struct t_ring *r, int fd, unsigned int n)
{
	char buf[16];
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_READ, fd, buf, n, 0, 1);
	T_ASSERT_EQ(t_run(r, 1), (int)n);
}

static void close_op(struct t_ring *r, int fd)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = IORING_OP_CLOSE;
	sqe->fd = fd;
	sqe->user_data = 2;
	T_ASSERT_EQ(t_run(r, 2), 0);
}

static void close_rounds(void)
{
	static struct t_ring rings[RINGS];
	unsigned long before;
	int p[2], i, fd;

	T_ASSERT_EQ(pipe(p), 0);
	fd = p[0];
	for (i = 0; i < RINGS; i++) {
		/* Each ring reads a byte: each learns the fd. */
		T_ASSERT_EQ(t_ring_init(&rings[i], 4, NULL), 0);
		T_ASSERT_EQ(write(p[1], "x", 1), 1);
		read_one(&rings[i], fd, 1);
	}
	close(p[1]);
	before = nw_fd_close_visits();
	close_op(&rings[0], fd); /* every ring that knew it: visited once */
	if (t_engine() == T_ENGINE_USER)
		T_ASSERT_GE(nw_fd_close_visits() - before,
			    (unsigned long)RINGS);
	before = nw_fd_close_visits();
	for (i = 0; i < ROUNDS; i++) {
		T_ASSERT_EQ(pipe(p), 0);
		T_ASSERT_EQ(p[0], fd); /* the number comes back */
		T_ASSERT_EQ(write(p[1], "y", 1), 1);
		read_one(&rings[0], fd, 1);
		close_op(&rings[0], fd);
		close(p[1]);
	}
	if (t_engine() == T_ENGINE_USER)
		/* A round's close visits ring 0 (and its write end's, if any). */
		T_ASSERT_LE(nw_fd_close_visits() - before, 2UL * ROUNDS);
	for (i = 0; i < RINGS; i++)
		t_ring_exit(&rings[i]);
}

static void bad_fd_sqe(struct t_ring *r, int opcode, unsigned int flags)
{
	static char buf[16];
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	if (opcode == IORING_OP_POLL_ADD) {
		t_prep_poll_add(sqe, BIG_FD, POLLIN, flags, 3);
	} else {
		t_prep_rw(sqe, opcode, BIG_FD, buf, sizeof(buf), 0, 3);
		sqe->ioprio = (unsigned short)flags;
		if (opcode == IORING_OP_ACCEPT)
			sqe->addr = sqe->len = 0; /* no address wanted */
	}
	T_ASSERT_EQ(t_run(r, 3), -EBADF);
}

static void bad_fds(void)
{
	struct t_ring r;
	long before;
	int i;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	before = rss_kb();
	for (i = 0; i < 4; i++) {
		bad_fd_sqe(&r, IORING_OP_POLL_ADD, 0);
		bad_fd_sqe(&r, IORING_OP_POLL_ADD, IORING_POLL_ADD_MULTI);
		bad_fd_sqe(&r, IORING_OP_READ, 0);
		bad_fd_sqe(&r, IORING_OP_RECV, 0);
		/* A multishot arms at once, without an attempt first. */
		bad_fd_sqe(&r, IORING_OP_ACCEPT, IORING_ACCEPT_MULTISHOT);
	}
	/* The old table by fd number: 8 bytes a number, 400 MB here. */
	T_ASSERT_LT(rss_kb() - before, 16 * 1024);
	t_ring_exit(&r);
}

int main(void)
{
	t_watchdog(60);
	t_require_engine();
	bad_fds();
	close_rounds();
	return T_EXIT_PASS;
}
