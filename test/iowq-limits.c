/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_IOWQ_MAX_WORKERS (io_uring/register.c
 * io_register_iowq_max_workers): two u32 limits, bounded then unbounded;
 * 0 leaves a limit as it is; the old limits come back, the unbounded one
 * never below the bounded (io_wq_max_workers keeps a running maximum).
 * -EINVAL for a NULL arg, nr_args other than 2 or a count above INT_MAX,
 * -EFAULT for a bad pointer. liburing 2.15's reg-fd-only calls it through
 * a registered ring index once the ring fd is closed and wants non-zero
 * limits back. The calling task must have submitted once (the kernel's
 * io-wq is made with its io_uring task context).
 *
 * Also, on SQPOLL, the SQ head moves before the CQEs of the batch are
 * seen: a program that reaps them and fills the SQ again finds every
 * slot free (reg-fd-only's SQPOLL NOPs got a NULL SQE).
 */
#include <limits.h>
#include "helpers.h"

#define ROUNDS 200

static void nop_round(struct t_ring *r, unsigned int n, uint64_t ud)
{
	struct io_uring_cqe cqe;

	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = t_get_sqe(r);

		/*
		 * The CQEs of the last round were reaped: nowait's SQ is
		 * empty then. The kernel's poller may post a CQE before it
		 * moves the head (seen once in a hundred runs): wait for room.
		 */
		if (!sqe && t_engine() == T_ENGINE_KERNEL &&
		    (r->p.flags & IORING_SETUP_SQPOLL)) {
			T_ASSERT_GE(t_enter(r->fd, 0, 0, IORING_ENTER_SQ_WAIT,
					    NULL, 0),
				    0);
			sqe = t_get_sqe(r);
		}
		T_ASSERT(sqe != NULL);
		t_prep_nop(sqe, ud);
	}
	if (!(r->p.flags & IORING_SETUP_SQPOLL))
		T_ASSERT_EQ(t_submit(r), (int)n);
	else
		t_ring_flush(r);
	/* Wake a sleeping poller; the poller may also have taken them. */
	if ((r->p.flags & IORING_SETUP_SQPOLL) &&
	    (*r->sq_flags & IORING_SQ_NEED_WAKEUP))
		T_ASSERT_GE(
			t_enter(r->fd, n, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0),
			0);
	for (unsigned int i = 0; i < n; i++) {
		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, ud);
		T_ASSERT_EQ(cqe.res, 0);
	}
}

static void limits(void)
{
	struct t_ring r;
	unsigned int v[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	nop_round(&r, 1, 1); /* the task's io-wq exists from here */
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS, NULL, 2),
		    -EINVAL);
	v[0] = v[1] = 0;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS, v, 1),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS, v, 3),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS,
			       (void *)8, 2),
		    -EFAULT);
	v[0] = (unsigned int)INT_MAX + 1;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS, v, 2),
		    -EINVAL);
	v[0] = v[1] = 0; /* a query */
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS, v, 2),
		    0);
	T_ASSERT_GT(v[0], 0);
	T_ASSERT_GE(v[1], v[0]);
	v[0] = 3;
	v[1] = 0;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS, v, 2),
		    0);
	v[0] = v[1] = 0;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS, v, 2),
		    0);
	T_ASSERT_EQ(v[0], 3);
	T_ASSERT_GE(v[1], 3);
	t_ring_exit(&r);
}

static void sqpoll_head(void)
{
	struct io_uring_params p = {.flags = IORING_SETUP_SQPOLL,
				    .sq_thread_idle = 10};
	struct t_ring r;
	int ret = t_ring_init(&r, 8, &p);

	if (ret == -EPERM)
		return; /* SQPOLL needs privileges on old kernels */
	T_ASSERT_EQ(ret, 0);
	for (int i = 0; i < ROUNDS; i++)
		nop_round(&r, 8, (uint64_t)i + 10);
	t_ring_exit(&r);
}

int main(void)
{
	t_watchdog(60);
	t_require_engine();
	limits();
	sqpoll_head();
	return T_EXIT_PASS;
}
