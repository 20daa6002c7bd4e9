/* SPDX-License-Identifier: MIT */
/*
 * POLL_ADD and POLL_REMOVE: oneshot (inline when ready, later when not),
 * the result mask, multishot with IORING_CQE_F_MORE, removal (-ECANCELED
 * target, 0 or -ENOENT for the remove), updates of events and user_data,
 * IORING_POLL_ADD_LEVEL, and field validation.
 * Semantics: io_uring/poll.c.
 */
#include <sys/poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include "helpers.h"

static struct io_uring_sqe *queue_poll(struct t_ring *r, int fd,
				       unsigned int events, unsigned int flags,
				       uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_poll_add(sqe, fd, events, flags, ud);
	return sqe;
}

static struct io_uring_sqe *queue_remove(struct t_ring *r, uint64_t target,
					 uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_poll_remove(sqe, target, ud);
	return sqe;
}

/*
 * Take two CQEs in either order: (ud1, res1) and (ud2, res2); flags out.
 * A failure names the call site and the CQE that was taken.
 */
#define expect_pair(r, ud1, res1, f1, ud2, res2, f2) \
	expect_pair_at(r, ud1, res1, f1, ud2, res2, f2, __LINE__)
static void expect_pair_at(struct t_ring *r, uint64_t ud1, int res1,
			   unsigned int *flags1, uint64_t ud2, int res2,
			   unsigned int *flags2, int line)
{
	struct io_uring_cqe cqe;
	int i, seen = 0;

	for (i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		if ((cqe.user_data == ud1 && !(seen & 1) && cqe.res == res1) ||
		    (cqe.user_data == ud2 && !(seen & 2) && cqe.res == res2)) {
			seen |= cqe.user_data == ud1 ? 1 : 2;
			*(cqe.user_data == ud1 ? flags1 : flags2) = cqe.flags;
			continue;
		}
		fprintf(stderr,
			"%s:%d: [%s] expected (ud %llu res %d) "
			"and (ud %llu res %d), CQE %d of 2 was ud %llu res %d "
			"flags 0x%x\n",
			__FILE__, line, t_engine_name(),
			(unsigned long long)ud1, res1, (unsigned long long)ud2,
			res2, i + 1, (unsigned long long)cqe.user_data, cqe.res,
			cqe.flags);
		while (t_peek_cqe(r, &cqe) == 0)
			fprintf(stderr, "  then ud %llu res %d flags 0x%x\n",
				(unsigned long long)cqe.user_data, cqe.res,
				cqe.flags);
		abort();
	}
}

static void drain(int fd, size_t n)
{
	char buf[256];

	T_ASSERT_LE(n, sizeof(buf));
	T_ASSERT_EQ(read(fd, buf, n), n);
}

/* Oneshot on an empty pipe: completes when written, res = the mask. */
static void test_oneshot(void)
{
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_poll(&r, p[0], POLLIN, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	/* Only the asked-for bits: POLLIN, not POLLRDNORM. */
	T_ASSERT_EQ(t_expect_cqe(&r, 1, POLLIN), 0);
	/* Oneshot: a second write posts nothing more. */
	T_ASSERT_EQ(write(p[1], "y", 1), 1);
	t_expect_no_cqe(&r, 20);

	/* Several bits asked, the ready ones reported. */
	queue_poll(&r, p[0], POLLIN | POLLRDNORM | POLLPRI | POLLOUT, 0, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, POLLIN | POLLRDNORM), 0);

	/* Woken from another thread while this one waits. */
	drain(p[0], 2);
	{
		struct t_writer w;

		queue_poll(&r, p[0], POLLIN, 0, 3);
		t_writer_start(&w, p[1], "t", 1, 20000);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 3, POLLIN), 0);
		T_ASSERT_EQ(t_writer_join(&w), 1);
	}

	/* HUP is always reported, even when not asked for. */
	drain(p[0], 1);
	queue_poll(&r, p[0], POLLIN, 0, 4);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 10);
	close(p[1]);
	T_ASSERT_EQ(t_expect_cqe(&r, 4, POLLHUP), 0);
	queue_poll(&r, p[0], POLLPRI, 0, 5);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, POLLHUP), 0);
	close(p[0]);

	/* POLLERR on a write end whose reader is gone. */
	T_ASSERT_EQ(pipe(p), 0);
	close(p[0]);
	queue_poll(&r, p[1], POLLOUT, 0, 6);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 6, POLLOUT | POLLERR), 0);
	close(p[1]);
	t_ring_exit(&r);
}

/* A ready fd completes inline, before submit returns. */
static void test_inline(void)
{
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_poll(&r, p[1], POLLOUT, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, POLLOUT), 0);

	T_ASSERT_EQ(write(p[1], "ab", 2), 2);
	queue_poll(&r, p[0], POLLIN, 0, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, POLLIN), 0);

	/* An eventfd with a count. */
	{
		int efd = eventfd(1, 0);

		T_ASSERT_GE(efd, 0);
		queue_poll(&r, efd, POLLIN | POLLOUT, 0, 3);
		T_ASSERT_EQ(t_submit(&r), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 3, POLLIN | POLLOUT), 0);
		close(efd);
	}
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* Multishot: one CQE per event with F_MORE, then POLL_REMOVE ends it. */
static void test_multishot(void)
{
	unsigned int f1 = 0, f2 = 0;
	struct t_ring r;
	int p[2], i;

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_poll(&r, p[0], POLLIN, IORING_POLL_ADD_MULTI, 7);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	for (i = 0; i < 4; i++) {
		T_ASSERT_EQ(write(p[1], "m", 1), 1);
		T_ASSERT_EQ(t_expect_cqe(&r, 7, POLLIN), IORING_CQE_F_MORE);
		/* Edge-triggered: nothing more without a new event. */
		t_expect_no_cqe(&r, 10);
	}
	drain(p[0], 4);

	queue_remove(&r, 7, 8);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_pair(&r, 7, -ECANCELED, &f1, 8, 0, &f2);
	T_ASSERT_EQ(f1, 0);
	T_ASSERT_EQ(f2, 0);
	/* Gone: a write posts nothing, a second remove finds nothing. */
	T_ASSERT_EQ(write(p[1], "m", 1), 1);
	t_expect_no_cqe(&r, 10);
	queue_remove(&r, 7, 9);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 9, -ENOENT), 0);

	/* Multishot armed on a ready fd: a first CQE at once, with F_MORE. */
	queue_poll(&r, p[0], POLLIN, IORING_POLL_ADD_MULTI, 10);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 10, POLLIN), IORING_CQE_F_MORE);
	t_expect_no_cqe(&r, 10);
	T_ASSERT_EQ(write(p[1], "m", 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 10, POLLIN), IORING_CQE_F_MORE);

	/* A hang-up: a CQE with F_MORE (multishot survives HUP). */
	close(p[1]);
	{
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, 10);
		T_ASSERT_EQ(cqe.res, POLLIN | POLLHUP);
		T_ASSERT_EQ(cqe.flags, IORING_CQE_F_MORE);
	}
	queue_remove(&r, 10, 11);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_pair(&r, 10, -ECANCELED, &f1, 11, 0, &f2);
	T_ASSERT_EQ(f1, 0);
	t_ring_exit(&r);
	close(p[0]);
}

/* POLL_REMOVE of an unknown user_data: -ENOENT; of a done poll too. */
static void test_remove(void)
{
	unsigned int f1, f2;
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_remove(&r, 12345, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -ENOENT), 0);

	/* Oneshot removed while armed: -ECANCELED and 0. */
	queue_poll(&r, p[0], POLLIN, 0, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	queue_remove(&r, 2, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_pair(&r, 2, -ECANCELED, &f1, 3, 0, &f2);
	T_ASSERT_EQ(f1, 0);

	/* Add and remove in one batch. */
	queue_poll(&r, p[0], POLLIN, 0, 4);
	queue_remove(&r, 4, 5);
	T_ASSERT_EQ(t_submit(&r), 2);
	expect_pair(&r, 4, -ECANCELED, &f1, 5, 0, &f2);

	/* A completed oneshot is not found. */
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	queue_poll(&r, p[0], POLLIN, 0, 6);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 6, POLLIN), 0);
	queue_remove(&r, 6, 7);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 7, -ENOENT), 0);

	/* Two polls with one user_data: one remove takes one of them. */
	drain(p[0], 1);
	queue_poll(&r, p[0], POLLIN, 0, 8);
	queue_poll(&r, p[0], POLLIN, 0, 8);
	T_ASSERT_EQ(t_submit(&r), 2);
	queue_remove(&r, 8, 9);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_pair(&r, 8, -ECANCELED, &f1, 9, 0, &f2);
	t_expect_no_cqe(&r, 10);
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 8, POLLIN), 0);

	/* Removal fields: MULTI alone, or off without UPDATE_USER_DATA. */
	queue_remove(&r, 8, 10)->len = IORING_POLL_ADD_MULTI;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 10, -EINVAL), 0);
	queue_remove(&r, 8, 11)->off = 99;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 11, -EINVAL), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* POLL_REMOVE with UPDATE_EVENTS and UPDATE_USER_DATA. */
static void test_update(void)
{
	struct io_uring_sqe *sqe;
	unsigned int f1, f2;
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);

	/* Armed for POLLPRI (never on a pipe), updated to POLLIN. */
	queue_poll(&r, p[0], POLLPRI, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	sqe = queue_remove(&r, 1, 2);
	sqe->len = IORING_POLL_UPDATE_EVENTS;
	sqe->poll32_events = POLLIN;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, 0), 0);
	t_expect_no_cqe(&r, 10);
	T_ASSERT_EQ(write(p[1], "u", 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, POLLIN), 0);
	drain(p[0], 1);

	/* New user_data only: the event arrives under the new one. */
	queue_poll(&r, p[0], POLLIN, 0, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	sqe = queue_remove(&r, 3, 4);
	sqe->len = IORING_POLL_UPDATE_USER_DATA;
	sqe->off = 33;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 4, 0), 0);
	/* The old user_data is no longer known. */
	queue_remove(&r, 3, 5);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, -ENOENT), 0);
	T_ASSERT_EQ(write(p[1], "u", 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 33, POLLIN), 0);

	/* Both, to a mask that is ready now: the target completes at once. */
	queue_poll(&r, p[0], POLLPRI, 0, 6);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 10);
	sqe = queue_remove(&r, 6, 7);
	sqe->len = IORING_POLL_UPDATE_EVENTS | IORING_POLL_UPDATE_USER_DATA;
	sqe->poll32_events = POLLIN | POLLRDNORM;
	sqe->off = 66;
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_pair(&r, 7, 0, &f1, 66, POLLIN | POLLRDNORM, &f2);
	T_ASSERT_EQ(f2, 0);
	drain(p[0], 1);

	/* A multishot updated stays multishot. */
	queue_poll(&r, p[0], POLLPRI, IORING_POLL_ADD_MULTI, 8);
	T_ASSERT_EQ(t_submit(&r), 1);
	sqe = queue_remove(&r, 8, 9);
	sqe->len = IORING_POLL_UPDATE_EVENTS | IORING_POLL_ADD_MULTI;
	sqe->poll32_events = POLLIN;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 9, 0), 0);
	T_ASSERT_EQ(write(p[1], "a", 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 8, POLLIN), IORING_CQE_F_MORE);
	T_ASSERT_EQ(write(p[1], "b", 1), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 8, POLLIN), IORING_CQE_F_MORE);
	queue_remove(&r, 8, 10);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_pair(&r, 8, -ECANCELED, &f1, 10, 0, &f2);
	T_ASSERT_EQ(f1, 0);

	/* Updating an unknown request: -ENOENT. */
	sqe = queue_remove(&r, 4242, 11);
	sqe->len = IORING_POLL_UPDATE_EVENTS;
	sqe->poll32_events = POLLIN;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 11, -ENOENT), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/*
 * IORING_POLL_ADD_LEVEL is in the uapi header and io_poll_parse_events
 * knows it, but io_poll_add_prep accepts no flag other than MULTI: the
 * kernel fails every POLL_ADD with LEVEL with -EINVAL, and so must we.
 */
static void test_level(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);

	/* Oneshot level, on a ready and on an empty pipe. */
	queue_poll(&r, p[0], POLLIN, IORING_POLL_ADD_LEVEL, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -EINVAL), 0);
	T_ASSERT_EQ(write(p[1], "L", 1), 1);
	queue_poll(&r, p[0], POLLIN, IORING_POLL_ADD_LEVEL, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, -EINVAL), 0);

	/* Multishot level. */
	queue_poll(&r, p[0], POLLIN,
		   IORING_POLL_ADD_MULTI | IORING_POLL_ADD_LEVEL, 3);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, -EINVAL), 0);
	t_expect_no_cqe(&r, 10);

	/* LEVEL in a POLL_REMOVE update: -EINVAL as well. */
	queue_poll(&r, p[1], POLLPRI, 0, 4);
	T_ASSERT_EQ(t_submit(&r), 1);
	sqe = queue_remove(&r, 4, 5);
	sqe->len = IORING_POLL_UPDATE_EVENTS | IORING_POLL_ADD_LEVEL;
	sqe->poll32_events = POLLOUT;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, -EINVAL), 0);
	t_expect_no_cqe(&r, 10);
	queue_remove(&r, 4, 6);
	T_ASSERT_EQ(t_submit(&r), 1);
	{
		unsigned int f1, f2;

		expect_pair(&r, 4, -ECANCELED, &f1, 6, 0, &f2);
	}

	/* Unknown POLL_ADD flag bits: -EINVAL. */
	queue_poll(&r, p[0], POLLIN, 1U << 5, 7);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 7, -EINVAL), 0);
	/* The update flags mean nothing to POLL_ADD: -EINVAL. */
	queue_poll(&r, p[0], POLLIN, IORING_POLL_UPDATE_EVENTS, 8);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 8, -EINVAL), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* addr, off, buf_index must be zero; bad fds; CQE_SKIP with multishot. */
static void test_invalid(void)
{
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_poll(&r, p[0], POLLIN, 0, 1)->addr = 1;
	queue_poll(&r, p[0], POLLIN, 0, 2)->off = 1;
	queue_poll(&r, p[0], POLLIN, 0, 3)->buf_index = 1;
	T_ASSERT_EQ(t_ring_flush(&r), 3);
	/* Each init failure ends its batch: submit one at a time. */
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, 0, NULL, 0), 1);
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, 0, NULL, 0), 1);
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, 0, NULL, 0), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, -EINVAL), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, -EINVAL), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 3, -EINVAL), 0);

	queue_poll(&r, -1, POLLIN, 0, 4);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 4, -EBADF), 0);

	queue_poll(&r, p[0], POLLIN, IORING_POLL_ADD_MULTI, 5)->flags =
		IOSQE_CQE_SKIP_SUCCESS;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 5, -EINVAL), 0);

	/* POLL_REMOVE with buf_index set: -EINVAL. */
	queue_remove(&r, 1, 6)->buf_index = 1;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 6, -EINVAL), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* POLLOUT on a pipe's write end is ready at once; on a full pipe it waits. */
static void test_pollout(void)
{
	static char big[65536];
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_poll(&r, p[1], POLLOUT, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, POLLOUT), 0);

	T_ASSERT_EQ(write(p[1], big, sizeof(big)), sizeof(big));
	queue_poll(&r, p[1], POLLOUT | POLLWRNORM, 0, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	/* One page read frees a slot. */
	T_ASSERT_EQ(read(p[0], big, 4096), 4096);
	T_ASSERT_EQ(t_expect_cqe(&r, 2, POLLOUT | POLLWRNORM), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* Many polls on many fds; and several polls on one fd all fire. */
static void test_many(void)
{
	int pipes[32][2], i;
	unsigned int seen = 0;
	struct io_uring_cqe cqe;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 64, NULL), 0);
	for (i = 0; i < 32; i++) {
		T_ASSERT_EQ(pipe(pipes[i]), 0);
		queue_poll(&r, pipes[i][0], POLLIN, 0, 100 + i);
	}
	T_ASSERT_EQ(t_submit(&r), 32);
	t_expect_no_cqe(&r, 10);
	for (i = 31; i >= 0; i--)
		T_ASSERT_EQ(write(pipes[i][1], "p", 1), 1);
	for (i = 0; i < 32; i++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_GE(cqe.user_data, 100);
		T_ASSERT_LT(cqe.user_data, 132);
		T_ASSERT_EQ(seen & (1U << (cqe.user_data - 100)), 0);
		seen |= 1U << (cqe.user_data - 100);
		T_ASSERT_EQ(cqe.res, POLLIN);
	}
	T_ASSERT_EQ(seen, 0xffffffffU);

	/* Four polls on one empty pipe: one write wakes all four. */
	drain(pipes[0][0], 1);
	for (i = 0; i < 4; i++)
		queue_poll(&r, pipes[0][0], POLLIN, 0, 200 + i);
	T_ASSERT_EQ(t_submit(&r), 4);
	t_expect_no_cqe(&r, 10);
	T_ASSERT_EQ(write(pipes[0][1], "p", 1), 1);
	seen = 0;
	for (i = 0; i < 4; i++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_GE(cqe.user_data, 200);
		T_ASSERT_LT(cqe.user_data, 204);
		seen |= 1U << (cqe.user_data - 200);
		T_ASSERT_EQ(cqe.res, POLLIN);
	}
	T_ASSERT_EQ(seen, 0xf);
	for (i = 0; i < 32; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	t_ring_exit(&r);
}

/* A socket: POLLIN on data, POLLRDHUP reported on peer shutdown. */
static void test_socket(void)
{
	struct t_ring r;
	int s[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	queue_poll(&r, s[0], POLLIN | POLLRDHUP, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 10);
	T_ASSERT_EQ(shutdown(s[1], SHUT_WR), 0);
	T_ASSERT_EQ(t_expect_cqe(&r, 1, POLLIN | POLLRDHUP), 0);
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

int main(void)
{
	t_require_engine();
	t_watchdog(40);
	test_oneshot();
	test_inline();
	test_multishot();
	test_remove();
	test_update();
	test_level();
	test_invalid();
	test_pollout();
	test_many();
	test_socket();
	return T_EXIT_PASS;
}
