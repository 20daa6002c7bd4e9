/* SPDX-License-Identifier: MIT */
/*
 * Reads parked by the submit of a SINGLE_ISSUER | DEFER_TASKRUN ring on
 * pipes that were never waited on before, against the kernel: the engine
 * parks them without a watch and tries them again at the next GETEVENTS
 * (src/pollverify.c). Each case is one where that must not change what
 * the program sees: data written before the wait; data that comes only
 * while the wait sleeps; data the program took itself before the wait;
 * a link whose second read is issued in the wait; an eventfd registered
 * after the read parked, which must then be signalled when the pipe
 * becomes ready.
 */
#include <poll.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "helpers.h"

static int defer_ring(struct t_ring *r)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	return t_ring_init(r, 8, &p);
}

static bool readable(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, ms) == 1;
}

static void get_events(struct t_ring *r)
{
	T_ASSERT_EQ(t_enter(r->fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
}

static void read_sqe(struct t_ring *r, int fd, char *buf, unsigned int len,
		     uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_READ, fd, buf, len, 0, ud);
}

/* Written before the wait: both reads complete in it, with their data. */
static void test_written_before(void)
{
	char a[8] = {0}, b[8] = {0};
	int p[2], q[2];
	struct t_ring r;

	T_ASSERT_EQ(defer_ring(&r), 0);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(pipe(q), 0);
	read_sqe(&r, p[0], a, sizeof(a), 1);
	read_sqe(&r, q[0], b, sizeof(b), 2);
	T_ASSERT_EQ(t_submit(&r), 2);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	T_ASSERT_EQ(write(p[1], "abc", 3), 3);
	T_ASSERT_EQ(write(q[1], "de", 2), 2);
	T_ASSERT_EQ(t_enter(r.fd, 0, 2, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(t_cq_ready(&r), 2);
	t_expect_cqe(&r, 1, 3);
	t_expect_cqe(&r, 2, 2);
	T_ASSERT(!memcmp(a, "abc", 3));
	T_ASSERT(!memcmp(b, "de", 2));
	close(p[0]), close(p[1]), close(q[0]), close(q[1]);
	t_ring_exit(&r);
}

/* Empty at the wait: it sleeps until another thread writes. */
static void test_written_during_wait(void)
{
	struct io_uring_cqe cqe;
	struct t_writer w;
	char buf[8] = {0};
	struct t_ring r;
	uint64_t t0;
	int p[2];

	T_ASSERT_EQ(defer_ring(&r), 0);
	T_ASSERT_EQ(pipe(p), 0);
	read_sqe(&r, p[0], buf, sizeof(buf), 7);
	T_ASSERT_EQ(t_submit(&r), 1);
	t0 = t_now_us();
	t_writer_start(&w, p[1], "wxyz", 4, 100000);
	T_ASSERT_EQ(t_wait_cqe_timeout(&r, &cqe, 5000), 0);
	T_ASSERT_EQ(t_writer_join(&w), 4);
	T_ASSERT_GE(t_now_us() - t0, 90000); /* not before the write */
	T_ASSERT_EQ(cqe.user_data, 7);
	T_ASSERT_EQ(cqe.res, 4);
	T_ASSERT(!memcmp(buf, "wxyz", 4));
	close(p[0]), close(p[1]);
	t_ring_exit(&r);
}

/*
 * The program reads the data itself before it enters: the read finds the
 * pipe empty at GETEVENTS and waits on, and takes the next write's data.
 */
static void test_taken_before(void)
{
	char buf[8] = {0}, mine[8];
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(defer_ring(&r), 0);
	T_ASSERT_EQ(pipe(p), 0);
	read_sqe(&r, p[0], buf, sizeof(buf), 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(write(p[1], "abc", 3), 3);
	T_ASSERT_EQ(read(p[0], mine, sizeof(mine)), 3);
	get_events(&r);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	t_expect_no_cqe(&r, 50);
	T_ASSERT_EQ(write(p[1], "fg", 2), 2);
	t_expect_cqe(&r, 3, 2);
	T_ASSERT(!memcmp(buf, "fg", 2));
	close(p[0]), close(p[1]);
	t_ring_exit(&r);
}

/* READ -> READ linked: the second is issued in the wait, and reads too. */
static void test_link(void)
{
	char a[8] = {0}, b[8] = {0};
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int p[2], q[2];

	T_ASSERT_EQ(defer_ring(&r), 0);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(pipe(q), 0);
	read_sqe(&r, p[0], a, 3, 1);
	sqe = r.sqes + ((r.sqe_tail - 1) & *r.sq_mask);
	sqe->flags |= IOSQE_IO_LINK;
	read_sqe(&r, q[0], b, 2, 2);
	T_ASSERT_EQ(t_submit(&r), 2);
	T_ASSERT_EQ(write(q[1], "de", 2), 2);
	T_ASSERT_EQ(write(p[1], "abc", 3), 3);
	T_ASSERT_EQ(t_enter(r.fd, 0, 2, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	t_expect_cqe(&r, 1, 3);
	t_expect_cqe(&r, 2, 2);
	T_ASSERT(!memcmp(a, "abc", 3) && !memcmp(b, "de", 2));
	close(p[0]), close(p[1]), close(q[0]), close(q[1]);
	t_ring_exit(&r);
}

/*
 * An eventfd registered after the read parked: the pipe's readiness
 * signals it (the kernel's task work was queued), with no CQE yet.
 */
static void test_late_eventfd(void)
{
	char buf[8] = {0};
	struct t_ring r;
	int evfd, p[2];

	T_ASSERT_EQ(defer_ring(&r), 0);
	T_ASSERT_EQ(pipe(p), 0);
	evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	T_ASSERT_GE(evfd, 0);
	read_sqe(&r, p[0], buf, sizeof(buf), 5);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &evfd, 1), 0);
	T_ASSERT(!readable(evfd, 50));
	T_ASSERT_EQ(write(p[1], "abc", 3), 3);
	T_ASSERT(readable(evfd, 1000));
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	get_events(&r);
	t_expect_cqe(&r, 5, 3);
	close(p[0]), close(p[1]), close(evfd);
	t_ring_exit(&r);
}

int main(void)
{
	struct t_ring r;

	t_require_engine();
	t_watchdog(30);
	if (defer_ring(&r)) {
		printf("DEFER_TASKRUN not supported\n");
		return T_EXIT_SKIP;
	}
	t_ring_exit(&r);
	test_written_before();
	test_written_during_wait();
	test_taken_before();
	test_link();
	test_late_eventfd();
	return T_EXIT_PASS;
}
