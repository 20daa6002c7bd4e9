/* SPDX-License-Identifier: MIT */
/*
 * The io_uring calls are no cancellation points: a thread with a deferred
 * pthread_cancel pending sets up a ring, registers files and enters to
 * SEND and RECV on a socket pair, both of which complete at once; each
 * call returns normally (the enter with the two CQEs), and the cancel
 * acts at the thread's next cancellation point. The
 * engine's own socket calls (glibc's sendto and recv are cancellation
 * points) must not unwind the thread from inside the engine. Checked on a
 * plain ring and on a SINGLE_ISSUER | DEFER_TASKRUN one, each set up by
 * the thread itself.
 */
#include <sys/socket.h>
#include <unistd.h>
#include "helpers.h"

struct cancel_run {
	unsigned int setup_flags;
	int s[2];
	int setup_ret, reg_ret, enter_ret;
	int res[2];   /* by user_data 1 (RECV) and 2 (SEND) */
	bool reached; /* the thread came back from enter */
	char buf[16];
};

static void collect(struct t_ring *r, struct cancel_run *cr)
{
	struct io_uring_cqe cqe;

	while (t_peek_cqe(r, &cqe) == 0)
		if (cqe.user_data == 1 || cqe.user_data == 2)
			cr->res[cqe.user_data - 1] = cqe.res;
}

static void *cancel_thread(void *arg)
{
	struct cancel_run *cr = arg;
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	struct t_ring r;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	/* Pending from here on; deferred, so it waits for a cancel point. */
	T_ASSERT_EQ(pthread_cancel(pthread_self()), 0);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	memset(&p, 0, sizeof(p));
	p.flags = cr->setup_flags;
	cr->setup_ret = t_ring_init(&r, 8, &p);
	if (cr->setup_ret)
		return NULL;
	cr->reg_ret = t_register(r.fd, IORING_REGISTER_FILES, cr->s, 2);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_RECV, cr->s[1], cr->buf, sizeof(cr->buf), 0,
		  1);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_SEND, cr->s[1], "pong", 4, 0, 2);
	cr->enter_ret = t_submit_and_wait(&r, 2);
	collect(&r, cr);
	cr->reached = true;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	t_ring_exit(&r); /* close() is a cancellation point */
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	pthread_testcancel();
	return NULL; /* not reached */
}

static void run(unsigned int setup_flags)
{
	struct cancel_run cr;
	pthread_t th;
	char buf[8];
	void *ret;

	memset(&cr, 0, sizeof(cr));
	cr.setup_flags = setup_flags;
	cr.res[0] = cr.res[1] = -1000;
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, cr.s), 0);
	T_ASSERT_EQ(write(cr.s[0], "ping", 4), 4);
	T_ASSERT_EQ(pthread_create(&th, NULL, cancel_thread, &cr), 0);
	T_ASSERT_EQ(pthread_join(th, &ret), 0);
	T_ASSERT(ret == PTHREAD_CANCELED);
	T_ASSERT_EQ(cr.setup_ret, 0);
	T_ASSERT(cr.reached);
	T_ASSERT_EQ(cr.reg_ret, 0);
	T_ASSERT_EQ(cr.enter_ret, 2);
	T_ASSERT_EQ(cr.res[0], 4);
	T_ASSERT_EQ(cr.res[1], 4);
	T_ASSERT_EQ(memcmp(cr.buf, "ping", 4), 0);
	T_ASSERT_EQ(read(cr.s[0], buf, sizeof(buf)), 4);
	T_ASSERT_EQ(memcmp(buf, "pong", 4), 0);
	close(cr.s[0]);
	close(cr.s[1]);
}

int main(void)
{
	t_require_engine();
	t_watchdog(20);
	run(0);
	run(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	return T_EXIT_PASS;
}
