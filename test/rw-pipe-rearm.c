/* SPDX-License-Identifier: MIT */
/*
 * READs parked on pipes that are woken but find nothing when they run
 * again, and must wait again: two readers and one write, the program
 * taking the data itself before the wake-up runs (DEFER_TASKRUN: the
 * retry runs in GETEVENTS, after the program's read), and IOSQE_ASYNC
 * reads on pipes at fd numbers far apart, whose state the engine makes
 * while other reads look it up. Nothing may be lost or hang: every read
 * completes once, with the bytes of a later write.
 * Semantics: io_uring/poll.c (the retry of a woken request re-arms when
 * it gets -EAGAIN), io_uring/rw.c, fs/pipe.c.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>
#include "helpers.h"

#define ROUNDS 16

static const unsigned int defer_flags =
	IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;

static void queue_read(struct t_ring *r, int fd, void *buf, unsigned int len,
		       uint64_t ud, unsigned char flags)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_READ, fd, buf, len, 0, ud);
	sqe->flags = flags;
}

static int pipe_bytes(int fd)
{
	int n = -1;

	T_ASSERT_EQ(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

static int ring_open(struct t_ring *r, unsigned int entries, unsigned int flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	return t_ring_init(r, entries, &p);
}

/*
 * Two reads of 4 bytes parked on one empty pipe, and one write of 4: one
 * read takes them, the other finds the pipe empty again and waits for the
 * next write. Every round, both orders of who wins are fine; each read
 * completes once, with one write's bytes.
 */
static void test_two_readers(unsigned int flags)
{
	char bufs[2][4];
	struct io_uring_cqe cqe;
	unsigned int round, parked;
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(ring_open(&r, 8, flags), 0);
	T_ASSERT_EQ(pipe(p), 0);
	queue_read(&r, p[0], bufs[0], 4, 0, 0);
	queue_read(&r, p[0], bufs[1], 4, 1, 0);
	T_ASSERT_EQ(t_submit(&r), 2);
	for (round = 0; round < ROUNDS; round++) {
		char msg[4] = {'w', (char)round, 'x', 'y'};

		T_ASSERT_EQ(write(p[1], msg, 4), 4);
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_LT(cqe.user_data, 2);
		T_ASSERT_EQ(cqe.res, 4);
		T_ASSERT_EQ(memcmp(bufs[cqe.user_data], msg, 4), 0);
		/* The other one went back to waiting: nothing more yet. */
		t_expect_no_cqe(&r, 5);
		T_ASSERT_EQ(pipe_bytes(p[0]), 0);
		/* The winner reads again, so two are parked every round. */
		queue_read(&r, p[0], bufs[cqe.user_data], 4, cqe.user_data, 0);
		T_ASSERT_EQ(t_submit(&r), 1);
	}
	/* Two last writes end both. */
	T_ASSERT_EQ(write(p[1], "endA", 4), 4);
	T_ASSERT_EQ(write(p[1], "endB", 4), 4);
	for (parked = 0; parked < 2; parked++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.res, 4);
		T_ASSERT_EQ(bufs[cqe.user_data][0], 'e');
	}
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/*
 * The write wakes the parked read, but the program reads the byte itself
 * before the ring runs the wake-up. On a DEFER_TASKRUN ring that is before
 * its next GETEVENTS, in the kernel as here: the read runs again there,
 * finds the pipe empty and waits. The next write's bytes are what it gets.
 */
static void test_data_taken(unsigned int flags)
{
	struct io_uring_cqe cqe;
	unsigned int round;
	struct t_ring r;
	char buf[8], c;
	int p[2];

	T_ASSERT_EQ(ring_open(&r, 8, flags), 0);
	T_ASSERT_EQ(pipe(p), 0);
	for (round = 0; round < ROUNDS; round++) {
		char msg[2] = {'n', (char)round};

		memset(buf, 0, sizeof(buf));
		queue_read(&r, p[0], buf, sizeof(buf), round, 0);
		T_ASSERT_EQ(t_submit(&r), 1);
		T_ASSERT_EQ(write(p[1], "s", 1), 1);
		T_ASSERT_EQ(read(p[0], &c, 1), 1);
		T_ASSERT_EQ(c, 's');
		/* GETEVENTS runs the wake-up: the read waits again. */
		t_expect_no_cqe(&r, 5);
		T_ASSERT_EQ(write(p[1], msg, 2), 2);
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, round);
		T_ASSERT_EQ(cqe.res, 2);
		T_ASSERT_EQ(memcmp(buf, msg, 2), 0);
		T_ASSERT_EQ(t_cq_ready(&r), 0);
	}
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

#define NSPREAD 12

/*
 * IOSQE_ASYNC reads (io-wq in the kernel; nowait's workers try them
 * nonblocking first) on pipes whose read ends sit at fd numbers 64 and
 * more apart, submitted in rising order: the engine makes each fd's state
 * as its read waits, while the reads before it are looked up by workers.
 * Then one write each: every read gets its own pipe's bytes.
 */
static void test_spread_fds(void)
{
	static char bufs[NSPREAD][8];
	int fds[NSPREAD], w[NSPREAD], p[2], i, top;
	struct io_uring_cqe cqe;
	unsigned int seen = 0;
	struct rlimit rl;
	struct t_ring r;

	T_ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	top = rl.rlim_cur > 1024 ? 1024 : (int)rl.rlim_cur;
	T_ASSERT_GT(top, 200);
	T_ASSERT_EQ(t_ring_init(&r, 32, NULL), 0);
	for (i = 0; i < NSPREAD; i++) {
		/* 100, 180, 260...: one leaf of 64 each, up to top */
		int want = 100 + i * (top - 120) / NSPREAD;

		T_ASSERT_EQ(pipe(p), 0);
		fds[i] = fcntl(p[0], F_DUPFD, want);
		T_ASSERT_GE(fds[i], want);
		close(p[0]);
		w[i] = p[1];
		queue_read(&r, fds[i], bufs[i], sizeof(bufs[i]), i,
			   IOSQE_ASYNC);
		T_ASSERT_EQ(t_submit(&r), 1);
	}
	t_expect_no_cqe(&r, 5);
	for (i = 0; i < NSPREAD; i++) {
		char msg[3] = {'s', (char)i, '!'};

		T_ASSERT_EQ(write(w[i], msg, 3), 3);
	}
	for (i = 0; i < NSPREAD; i++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_LT(cqe.user_data, NSPREAD);
		T_ASSERT_EQ(seen & (1U << cqe.user_data), 0);
		seen |= 1U << cqe.user_data;
		T_ASSERT_EQ(cqe.res, 3);
		T_ASSERT_EQ(bufs[cqe.user_data][0], 's');
		T_ASSERT_EQ(bufs[cqe.user_data][1], (char)cqe.user_data);
	}
	T_ASSERT_EQ(seen, (1U << NSPREAD) - 1);
	t_ring_exit(&r);
	for (i = 0; i < NSPREAD; i++) {
		close(fds[i]);
		close(w[i]);
	}
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_two_readers(0);
	test_two_readers(defer_flags);
	test_data_taken(defer_flags);
	test_spread_fds();
	return T_EXIT_PASS;
}
