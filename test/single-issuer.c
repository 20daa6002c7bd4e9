/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_SINGLE_ISSUER: only the task that set the ring up may
 * submit (-EEXIST for any other, the SQEs left in the SQ), and with
 * DEFER_TASKRUN only it may wait for completions (-EEXIST), while a
 * plain SINGLE_ISSUER ring lets another thread reap. Each refusal also
 * when the other thread's enter both submits and waits, and the issuer's
 * submits and waits in between work as usual (the engine checks the
 * issuer once per enter on its fast path: these are the cases that check
 * must keep).
 * Semantics: io_uring/tctx.c __io_uring_add_tctx_node_from_submit,
 * io_uring.c io_cqring_wait (io_allowed_run_tw).
 */
#include <pthread.h>
#include "helpers.h"

struct other {
	struct t_ring *r;
	int submit, wait, both; /* enter's results on the other thread */
};

/* Another thread: submit the queued NOP; wait; submit and wait. */
static void *other_main(void *arg)
{
	struct other *o = arg;
	unsigned int pending = *o->r->sq_tail - *o->r->sq_head;

	o->submit = t_enter(o->r->fd, pending, 0, 0, NULL, 0);
	o->wait = t_enter(o->r->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0);
	o->both =
		t_enter(o->r->fd, pending, 1, IORING_ENTER_GETEVENTS, NULL, 0);
	return NULL;
}

static void run_other(struct other *o)
{
	pthread_t th;

	T_ASSERT_EQ(pthread_create(&th, NULL, other_main, o), 0);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
}

static void test_ring(bool defer)
{
	struct io_uring_params p;
	struct io_uring_cqe cqe;
	struct other o;
	struct t_ring r;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER;
	if (defer)
		p.flags |= IORING_SETUP_DEFER_TASKRUN;
	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);

	/* The issuer's NOP completes; its CQE stays for the other thread. */
	t_prep_nop(t_get_sqe(&r), 1);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);

	/* A second NOP queued, not submitted: the other thread may not. */
	t_prep_nop(t_get_sqe(&r), 2);
	t_ring_flush(&r);
	memset(&o, 0, sizeof(o));
	o.r = &r;
	run_other(&o);
	T_ASSERT_EQ(o.submit, -EEXIST);
	T_ASSERT_EQ(o.both, -EEXIST);
	/* Waiting: refused with DEFER_TASKRUN, else the CQE is there. */
	T_ASSERT_EQ(o.wait, defer ? -EEXIST : 0);
	T_ASSERT_EQ(*r.sq_tail - *r.sq_head, 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);

	/* The issuer submits the NOP the other could not, and reaps both. */
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 2);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 1);
	T_ASSERT_EQ(cqe.res, 0);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 2);
	T_ASSERT_EQ(cqe.res, 0);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_ring(false);
	test_ring(true);
	return T_EXIT_PASS;
}
