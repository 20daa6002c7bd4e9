/* SPDX-License-Identifier: MIT */
/*
 * Multishot POLL_ADD where liburing 2.15 found the user engine apart from
 * the kernel (io_uring/poll.c):
 * - ready at arm: the first event is task work, not a CQE at submit; on a
 *   DEFER_TASKRUN ring it runs in the next wait and reports what is ready
 *   then (poll.t test_missing_events: POLLIN|POLLOUT in one CQE);
 * - a CQE that cannot be posted (the CQ full) ends the poll: its event
 *   becomes the final CQE, without F_MORE (poll-mshot-overflow.t);
 * - a poll of the ring's own registered eventfd ends when the ring's
 *   signal wakes it (EPOLL_URING_WAKE: poll-mshot-wake.t, evloop.t);
 * - DEFER_TASKRUN: the task work of a read of the ring's own eventfd,
 *   woken by the ring's signal, does not signal it again at once
 *   (eventfd-disable.t: the read sees 1).
 * Every CQE is waited for or peeked right after what must have posted it;
 * the one bounded wait is for IORING_SQ_CQ_OVERFLOW / IORING_SQ_TASKRUN,
 * which the kernel raises before the system call that causes it returns.
 */
#include <poll.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include "helpers.h"

#define DEFER (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)

static bool ring_init(struct t_ring *r, unsigned int entries,
		      struct io_uring_params *p)
{
	int ret = t_ring_init(r, entries, p);

	if (ret == -EINVAL && (p->flags & IORING_SETUP_DEFER_TASKRUN))
		return false; /* a kernel before 6.1 */
	T_ASSERT_EQ(ret, 0);
	return true;
}

/* The POLL_REMOVE of ud: its result; a poll it ends posts -ECANCELED. */
static int poll_remove(struct t_ring *r, uint64_t ud)
{
	struct io_uring_cqe cqe;
	int res = 1, i, n;

	t_prep_poll_remove(t_get_sqe(r), ud, 99);
	T_ASSERT_EQ(t_submit(r), 1);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	n = cqe.user_data == 99 && cqe.res == -ENOENT ? 1 : 2;
	for (i = 0; i < n; i++) {
		if (i)
			T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		if (cqe.user_data == 99) {
			res = cqe.res;
		} else {
			T_ASSERT_EQ(cqe.user_data, ud);
			T_ASSERT_EQ(cqe.res, -ECANCELED);
		}
	}
	T_ASSERT_EQ(t_peek_cqe(r, &cqe), -EAGAIN);
	return res;
}

/* Wait (bounded) for a flag the kernel raises before the call returns. */
static void await_sq_flag(struct t_ring *r, unsigned int flag)
{
	for (int i = 0; i < 5000; i++) {
		if (__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) & flag)
			return;
		usleep(1000);
	}
	T_ASSERT_EQ(*r->sq_flags & flag, flag);
}

static void test_ready_at_arm(void)
{
	struct io_uring_params p = {.flags = DEFER};
	struct io_uring_cqe cqe;
	struct t_ring r;
	char buf[2] = {0};
	int sp[2], one = 1;

	if (!ring_init(&r, 8, &p))
		return;
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	T_ASSERT_EQ(setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &one, 4), 0);
	T_ASSERT_EQ(send(sp[0], buf, 2, 0), 2);
	t_prep_poll_add(t_get_sqe(&r), sp[0], POLLIN | POLLOUT,
			IORING_POLL_ADD_MULTI, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	/* DEFER_TASKRUN: nothing is posted before the program waits. */
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), -EAGAIN);
	T_ASSERT_EQ(send(sp[1], buf, 2, 0), 2); /* sp[0] readable */
	T_ASSERT_EQ(recv(sp[1], buf, 2, 0), 2); /* sp[0] writable */
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 1);
	T_ASSERT_EQ(cqe.res & (POLLIN | POLLOUT), POLLIN | POLLOUT);
	T_ASSERT(cqe.flags & IORING_CQE_F_MORE);
	T_ASSERT_EQ(poll_remove(&r, 1), 0);
	close(sp[0]);
	close(sp[1]);
	t_ring_exit(&r);
}

static void test_overflow_downgrade(void)
{
	struct io_uring_params p = {.flags = IORING_SETUP_CQSIZE,
				    .cq_entries = 2};
	struct io_uring_cqe cqe;
	struct t_ring r;
	int fds[2], i;
	char c = 'x';

	ring_init(&r, 2, &p);
	T_ASSERT_EQ(pipe(fds), 0);
	t_prep_poll_add(t_get_sqe(&r), fds[0], POLLIN, IORING_POLL_ADD_MULTI,
			1);
	T_ASSERT_EQ(t_submit(&r), 1);
	for (i = 1; i <= 2; i++) {
		T_ASSERT_EQ(write(fds[1], &c, 1), 1);
		/* Wait for the i-th event without taking it. */
		T_ASSERT_EQ(t_enter(r.fd, 0, (unsigned int)i,
				    IORING_ENTER_GETEVENTS, NULL, 0),
			    0);
		T_ASSERT_EQ(t_cq_ready(&r), i);
		T_ASSERT_EQ(read(fds[0], &c, 1), 1);
	}
	/* The third event finds the CQ full: the poll ends with it. */
	T_ASSERT_EQ(write(fds[1], &c, 1), 1);
	await_sq_flag(&r, IORING_SQ_CQ_OVERFLOW);
	for (i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, 1);
		T_ASSERT_EQ(cqe.res, POLLIN);
		T_ASSERT(cqe.flags & IORING_CQE_F_MORE);
	}
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 1);
	T_ASSERT_EQ(cqe.res, POLLIN);
	T_ASSERT_EQ(cqe.flags & IORING_CQE_F_MORE, 0);
	T_ASSERT_EQ(poll_remove(&r, 1), -ENOENT);
	close(fds[0]);
	close(fds[1]);
	t_ring_exit(&r);
}

/* A multishot poll of the ring's own eventfd: the program's write. */
static void test_own_eventfd_write(void)
{
	struct io_uring_params p = {0};
	struct io_uring_cqe cqe;
	struct t_ring r;
	uint64_t val = 1;
	int evfd;

	ring_init(&r, 8, &p);
	evfd = eventfd(0, EFD_NONBLOCK);
	T_ASSERT_GE(evfd, 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &evfd, 1), 0);
	t_prep_poll_add(t_get_sqe(&r), evfd, POLLIN, IORING_POLL_ADD_MULTI, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(write(evfd, &val, sizeof(val)), sizeof(val));
	/* The program's signal: F_MORE. Its CQE's signal ends the poll. */
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 1);
	T_ASSERT_EQ(cqe.res, POLLIN);
	T_ASSERT(cqe.flags & IORING_CQE_F_MORE);
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 1);
	T_ASSERT_EQ(cqe.res, POLLIN);
	T_ASSERT_EQ(cqe.flags & IORING_CQE_F_MORE, 0);
	T_ASSERT_EQ(poll_remove(&r, 1), -ENOENT);
	t_ring_exit(&r);
	close(evfd);
}

/* The same woken by the ring's own signal first (evloop.t): one CQE. */
static void test_own_eventfd_nop(void)
{
	struct io_uring_params p = {0};
	struct io_uring_cqe cqe;
	struct t_ring r;
	int evfd, i, seen = 0;

	ring_init(&r, 8, &p);
	evfd = eventfd(0, 0);
	T_ASSERT_GE(evfd, 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &evfd, 1), 0);
	t_prep_poll_add(t_get_sqe(&r), evfd, POLLIN, IORING_POLL_ADD_MULTI, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_prep_nop(t_get_sqe(&r), 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	for (i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		seen |= 1 << cqe.user_data;
		if (cqe.user_data == 1) {
			T_ASSERT_EQ(cqe.res, POLLIN);
			T_ASSERT_EQ(cqe.flags & IORING_CQE_F_MORE, 0);
		} else {
			T_ASSERT_EQ(cqe.user_data, 2);
			T_ASSERT_EQ(cqe.res, 0);
		}
	}
	T_ASSERT_EQ(seen, 6);
	T_ASSERT_EQ(poll_remove(&r, 1), -ENOENT);
	t_ring_exit(&r);
	close(evfd);
}

/* DEFER_TASKRUN: a READ of the ring's eventfd, woken by the ring's signal. */
static void test_defer_eventfd_read(void)
{
	struct io_uring_params p = {.flags = DEFER | IORING_SETUP_TASKRUN_FLAG};
	struct io_uring_cqe cqe;
	struct t_ring r;
	uint64_t val = 0;
	int evfd, i;

	if (!ring_init(&r, 8, &p))
		return;
	evfd = eventfd(0, EFD_NONBLOCK);
	T_ASSERT_GE(evfd, 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &evfd, 1), 0);
	t_prep_rw(t_get_sqe(&r), IORING_OP_READ, evfd, &val, sizeof(val), 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_prep_nop(t_get_sqe(&r), 2);
	T_ASSERT_EQ(t_submit(&r), 1);	      /* its CQE signals the eventfd */
	await_sq_flag(&r, IORING_SQ_TASKRUN); /* the read's task work */
	for (i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		if (cqe.user_data == 1)
			T_ASSERT_EQ(cqe.res, sizeof(val));
		else
			T_ASSERT_EQ(cqe.user_data, 2);
	}
	T_ASSERT_EQ(val, 1);
	t_ring_exit(&r);
	close(evfd);
}

int main(void)
{
	t_watchdog(60);
	t_require_engine();
	test_ready_at_arm();
	test_overflow_downgrade();
	test_own_eventfd_write();
	test_own_eventfd_nop();
	test_defer_eventfd_read();
	return T_EXIT_PASS;
}
