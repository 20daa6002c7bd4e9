/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_EVENTFD / _ASYNC / UNREGISTER_EVENTFD: argument checks,
 * one signal per CQ commit, IORING_CQ_EVENTFD_DISABLED, and the async
 * variant that ignores inline completions. Semantics: io_uring/eventfd.c,
 * register.c (kernel-semantics.md 6 and 8).
 */
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <nowait.h>
#include "helpers.h"

/* How long to wait for a signal that must come, and for one that must not. */
#define SIGNAL_MS    2000
#define NO_SIGNAL_MS 100

/* Read the eventfd counter after waiting up to ms; 0 when not signalled. */
static uint64_t efd_read(int efd, int ms)
{
	struct pollfd pfd = {.fd = efd, .events = POLLIN};
	uint64_t v = 0;

	if (poll(&pfd, 1, ms) != 1)
		return 0;
	T_ASSERT_EQ(read(efd, &v, sizeof(v)), sizeof(v));
	return v;
}

static void submit_nops(struct t_ring *r, unsigned int n, unsigned int flags)
{
	struct io_uring_sqe *sqe;
	unsigned int i;

	for (i = 0; i < n; i++) {
		sqe = t_get_sqe(r);
		T_ASSERT(sqe != NULL);
		t_prep_nop(sqe, i);
		sqe->flags = flags;
	}
	T_ASSERT_EQ(t_submit(r), n);
}

static void reap_all(struct t_ring *r, unsigned int n)
{
	struct io_uring_cqe cqe;

	while (n--)
		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(t_cq_ready(r), 0);
}

static void test_args(void)
{
	struct t_ring r;
	int efd, pfd[2], bad = -1;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	T_ASSERT_GE(efd, 0);
	T_ASSERT_EQ(pipe(pfd), 0);

	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &efd, 0),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &efd, 2),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD_ASYNC, &efd, 0),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, NULL, 1),
		    -EFAULT);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &bad, 1), -EBADF);
	/* An fd that is not an eventfd. */
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &pfd[0], 1),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_EVENTFD, NULL, 0),
		    -ENXIO);

	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &efd, 1), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &efd, 1), -EBUSY);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD_ASYNC, &efd, 1),
		    -EBUSY);
	/* Unregister takes no argument. */
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_EVENTFD, NULL, 1),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_EVENTFD, &efd, 0),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_EVENTFD, NULL, 0), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_EVENTFD, NULL, 0),
		    -ENXIO);
	/* And it can be registered again. */
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD_ASYNC, &efd, 1),
		    0);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_EVENTFD, NULL, 0), 0);

	close(pfd[0]);
	close(pfd[1]);
	close(efd);
	t_ring_exit(&r);
}

static void test_signal(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int efd;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	T_ASSERT_GE(efd, 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &efd, 1), 0);
	/* Registering signals nothing by itself. */
	T_ASSERT_EQ(efd_read(efd, NO_SIGNAL_MS), 0);

	submit_nops(&r, 1, 0);
	T_ASSERT_EQ(efd_read(efd, SIGNAL_MS), 1);
	reap_all(&r, 1);

	/* One batch of inline completions is one commit: one signal. */
	submit_nops(&r, 4, 0);
	T_ASSERT_EQ(efd_read(efd, SIGNAL_MS), 1);
	reap_all(&r, 4);

	/* A failed SQE's CQE signals too. */
	sqe = t_get_sqe(&r);
	t_prep_nop(sqe, 9);
	sqe->opcode = 200;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(efd_read(efd, SIGNAL_MS), 1);
	reap_all(&r, 1);

	/* Entering with nothing to complete signals nothing. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(efd_read(efd, NO_SIGNAL_MS), 0);

	/* The app may disable signalling through the CQ flags word. */
	__atomic_fetch_or(r.cq_flags, IORING_CQ_EVENTFD_DISABLED,
			  __ATOMIC_RELEASE);
	submit_nops(&r, 2, 0);
	T_ASSERT_EQ(t_cq_ready(&r), 2);
	T_ASSERT_EQ(efd_read(efd, NO_SIGNAL_MS), 0);
	reap_all(&r, 2);
	__atomic_fetch_and(r.cq_flags, ~IORING_CQ_EVENTFD_DISABLED,
			   __ATOMIC_RELEASE);
	/* Re-enabling does not signal the completions missed meanwhile. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	T_ASSERT_EQ(efd_read(efd, NO_SIGNAL_MS), 0);
	submit_nops(&r, 1, 0);
	T_ASSERT_EQ(efd_read(efd, SIGNAL_MS), 1);
	reap_all(&r, 1);

	/* After unregistering, completions no longer signal. */
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_EVENTFD, NULL, 0), 0);
	submit_nops(&r, 1, 0);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	T_ASSERT_EQ(efd_read(efd, NO_SIGNAL_MS), 0);
	reap_all(&r, 1);

	/* Closing the ring leaves the eventfd alone. */
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &efd, 1), 0);
	t_ring_exit(&r);
	T_ASSERT_EQ(efd_read(efd, NO_SIGNAL_MS), 0);
	T_ASSERT_EQ(write(efd, &(uint64_t){5}, 8), 8);
	T_ASSERT_EQ(efd_read(efd, SIGNAL_MS), 5);
	close(efd);
}

/* The ring keeps its own reference: closing our eventfd fd is fine. */
static void test_close_registered(void)
{
	struct t_ring r;
	int efd, efd2;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	T_ASSERT_GE(efd, 0);
	efd2 = dup(efd);
	T_ASSERT_GE(efd2, 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &efd2, 1), 0);
	close(efd2);
	submit_nops(&r, 1, 0);
	T_ASSERT_EQ(efd_read(efd, SIGNAL_MS), 1);
	reap_all(&r, 1);
	close(efd);
	/* The eventfd is gone from the process but not from the ring. */
	submit_nops(&r, 1, 0);
	reap_all(&r, 1);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_EVENTFD, NULL, 0), 0);
	t_ring_exit(&r);
}

/* EVENTFD_ASYNC: inline completions don't signal, worker ones do. */
static void test_async(void)
{
	struct t_ring r;
	int efd;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	T_ASSERT_GE(efd, 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD_ASYNC, &efd, 1),
		    0);
	submit_nops(&r, 1, 0);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	T_ASSERT_EQ(efd_read(efd, NO_SIGNAL_MS), 0);
	reap_all(&r, 1);
	submit_nops(&r, 4, 0);
	T_ASSERT_EQ(efd_read(efd, NO_SIGNAL_MS), 0);
	reap_all(&r, 4);

	/* A NOP forced to a worker completes from it: that signals. */
	submit_nops(&r, 1, IOSQE_ASYNC);
	reap_all(&r, 1);
	T_ASSERT_EQ(efd_read(efd, SIGNAL_MS), 1);

	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_EVENTFD, NULL, 0), 0);
	close(efd);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_args();
	test_signal();
	test_close_registered();
	test_async();
	return T_EXIT_PASS;
}
