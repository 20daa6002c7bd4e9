/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_DEFER_TASKRUN with a registered eventfd, against the
 * kernel: when a parked request's fd becomes ready the eventfd is
 * signalled (task work was queued) although no CQE is posted until the
 * program enters; the request then completes in enter. IORING_SQ_TASKRUN
 * (TASKRUN_FLAG) says the same and is cleared by enter (liburing's
 * defer-taskrun test_eventfd and test_flag).
 */
#include <poll.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "helpers.h"

static bool readable(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, ms) == 1;
}

static int defer_ring(struct t_ring *r, unsigned int extra)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags =
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | extra;
	return t_ring_init(r, 8, &p);
}

/* Enter with GETEVENTS and min_complete 0: runs the task work. */
static void get_events(struct t_ring *r)
{
	T_ASSERT_EQ(t_enter(r->fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
}

/*
 * A POLL_ADD (op 0) or a READ (op 1) parked on an empty pipe or eventfd:
 * the write signals the ring's eventfd within a second, no CQE yet.
 */
static void test_eventfd(int op)
{
	int evfd, fds[2], res = op ? 3 : POLLIN;
	struct t_ring r;
	eventfd_t v;
	char buf[8];

	T_ASSERT_EQ(defer_ring(&r, 0), 0);
	evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	T_ASSERT_GE(evfd, 0);
	T_ASSERT_EQ(pipe(fds), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &evfd, 1), 0);
	if (op)
		t_prep_rw(t_get_sqe(&r), IORING_OP_READ, fds[0], buf,
			  sizeof(buf), 0, 1);
	else
		t_prep_poll_add(t_get_sqe(&r), fds[0], POLLIN, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT(!readable(evfd, 50));
	T_ASSERT_EQ(write(fds[1], "abc", 3), 3);
	T_ASSERT(readable(evfd, 1000));
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	T_ASSERT_EQ(eventfd_read(evfd, &v), 0);
	get_events(&r);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	t_expect_cqe(&r, 1, res);
	/* The CQE posted in enter signals the eventfd too. */
	T_ASSERT(readable(evfd, 0));
	close(fds[0]);
	close(fds[1]);
	close(evfd);
	t_ring_exit(&r);
}

/* TASKRUN_FLAG: IORING_SQ_TASKRUN is raised, and enter clears it. */
static void test_flag(void)
{
	struct t_ring r;
	int fds[2];
	int i;

	T_ASSERT_EQ(defer_ring(&r, IORING_SETUP_TASKRUN_FLAG), 0);
	T_ASSERT_EQ(pipe(fds), 0);
	t_prep_poll_add(t_get_sqe(&r), fds[0], POLLIN, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	usleep(20000);
	T_ASSERT_EQ(*r.sq_flags & IORING_SQ_TASKRUN, 0);
	T_ASSERT_EQ(write(fds[1], "x", 1), 1);
	/* Raised as the readiness is noticed: within a second, bounded. */
	for (i = 0;
	     i < 1000 && !(__atomic_load_n(r.sq_flags, __ATOMIC_ACQUIRE) &
			   IORING_SQ_TASKRUN);
	     i++)
		usleep(1000);
	T_ASSERT(*r.sq_flags & IORING_SQ_TASKRUN);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	get_events(&r);
	T_ASSERT_EQ(*r.sq_flags & IORING_SQ_TASKRUN, 0);
	t_expect_cqe(&r, 1, POLLIN);
	close(fds[0]);
	close(fds[1]);
	t_ring_exit(&r);
}

int main(void)
{
	struct t_ring r;

	t_require_engine();
	t_watchdog(30);
	if (defer_ring(&r, 0)) {
		printf("DEFER_TASKRUN not supported\n");
		return T_EXIT_SKIP;
	}
	t_ring_exit(&r);
	test_eventfd(0);
	test_eventfd(1);
	test_flag();
	return T_EXIT_PASS;
}
