/* SPDX-License-Identifier: MIT */
/*
 * io_uring_enter(GETEVENTS) with min_wait_usec (IORING_FEAT_MIN_TIMEOUT),
 * IORING_ENTER_ABS_TIMER on the clock IORING_REGISTER_CLOCK chose, and
 * IORING_ENTER_NO_IOWAIT. min_wait: wait for min_complete until it has
 * passed; then, with no general timeout or with CQEs there, the wait is
 * over, else the first new CQE ends it. Cases that would otherwise wait
 * out a minute-long timeout fail through the watchdog, not a clock.
 * Semantics: io_uring/wait.c io_cqring_wait, io_cqring_min_timer_wakeup;
 * register.c io_register_clock. Plain and DEFER_TASKRUN rings.
 */
#include <poll.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

#define GETEV_EXT (IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG)

static unsigned int cur_flags;

static void ring_init(struct t_ring *r)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = cur_flags;
	T_ASSERT_EQ(t_ring_init(r, 8, &p), 0);
	T_ASSERT(p.features & IORING_FEAT_MIN_TIMEOUT);
	T_ASSERT(p.features & IORING_FEAT_NO_IOWAIT);
}

/* GETEVENTS with an EXT_ARG of min_wait (us) and ts (NULL: none). */
static int enter_ext(struct t_ring *r, unsigned int to_submit,
		     unsigned int min_complete, unsigned int flags,
		     unsigned int min_us, struct __kernel_timespec *ts)
{
	struct io_uring_getevents_arg arg;

	memset(&arg, 0, sizeof(arg));
	NW_GETEVENTS_MIN_WAIT(arg) = min_us;
	arg.ts = (uint64_t)(uintptr_t)ts;
	return t_enter(r->fd, to_submit, min_complete, GETEV_EXT | flags, &arg,
		       sizeof(arg));
}

#define wait_ext(r, min_complete, flags, min_us, ts) \
	enter_ext(r, 0, min_complete, flags, min_us, ts)

static void queue_nop(struct t_ring *r, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, ud);
}

static struct __kernel_timespec clock_ts(clockid_t clk, long long add_ms)
{
	struct timespec now;
	struct __kernel_timespec ts;
	long long ns;

	clock_gettime(clk, &now);
	ns = now.tv_sec * 1000000000LL + now.tv_nsec + add_ms * 1000000LL;
	ts.tv_sec = ns / 1000000000;
	ts.tv_nsec = ns % 1000000000;
	return ts;
}

static int reg_clock(struct t_ring *r, unsigned int clockid, unsigned int nr)
{
	struct nw_clock_register reg;

	memset(&reg, 0, sizeof(reg));
	reg.clockid = clockid;
	return t_register(r->fd, IORING_REGISTER_CLOCK, &reg, nr);
}

static void test_register_clock(void)
{
	struct nw_clock_register reg;
	struct t_ring r;

	ring_init(&r);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_CLOCK, NULL, 0), -EINVAL);
	T_ASSERT_EQ(reg_clock(&r, CLOCK_MONOTONIC, 1), -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_CLOCK, (void *)8, 0),
		    -EFAULT);
	T_ASSERT_EQ(reg_clock(&r, CLOCK_REALTIME, 0), -EINVAL);
	T_ASSERT_EQ(reg_clock(&r, CLOCK_MONOTONIC_RAW, 0), -EINVAL);
	memset(&reg, 0, sizeof(reg));
	reg.resv[2] = 1;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_CLOCK, &reg, 0), -EINVAL);
	T_ASSERT_EQ(reg_clock(&r, CLOCK_BOOTTIME, 0), 0);
	T_ASSERT_EQ(reg_clock(&r, CLOCK_MONOTONIC, 0), 0);
	t_ring_exit(&r);
}

/* ABS_TIMER: a time already past on the ring's clock ends the wait. */
static void test_abs_timer(void)
{
	struct __kernel_timespec ts;
	struct io_uring_cqe cqe;
	struct t_ring r;

	ring_init(&r);
	/* Read as relative, this would be an uptime-long wait. */
	ts = clock_ts(CLOCK_MONOTONIC, -1);
	T_ASSERT_EQ(wait_ext(&r, 1, IORING_ENTER_ABS_TIMER, 0, &ts), -ETIME);
	ts.tv_sec = 0;
	ts.tv_nsec = 1;
	T_ASSERT_EQ(wait_ext(&r, 1, IORING_ENTER_ABS_TIMER, 0, &ts), -ETIME);
	/* A future deadline with a CQE coming: the CQE wins. */
	ts = clock_ts(CLOCK_MONOTONIC, 60000);
	queue_nop(&r, 1);
	t_ring_flush(&r);
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, 0, NULL, 0), 1);
	T_ASSERT_EQ(wait_ext(&r, 1, IORING_ENTER_ABS_TIMER, 0, &ts), 0);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 1);

	T_ASSERT_EQ(reg_clock(&r, CLOCK_BOOTTIME, 0), 0);
	ts = clock_ts(CLOCK_BOOTTIME, -1);
	T_ASSERT_EQ(wait_ext(&r, 1, IORING_ENTER_ABS_TIMER, 0, &ts), -ETIME);
	/* Relative timeouts are unchanged by the clock. */
	ts.tv_sec = 0;
	ts.tv_nsec = 1000000;
	T_ASSERT_EQ(wait_ext(&r, 1, 0, 0, &ts), -ETIME);
	/* NO_IOWAIT is accepted, with or without a wait. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 0,
			    IORING_ENTER_GETEVENTS | IORING_ENTER_NO_IOWAIT,
			    NULL, 0),
		    0);
	T_ASSERT_EQ(wait_ext(&r, 1, IORING_ENTER_NO_IOWAIT, 0, &ts), -ETIME);
	t_ring_exit(&r);
}

/* min_wait without a general timeout: the wait ends when it has passed. */
static void test_min_no_timeout(void)
{
	struct io_uring_cqe cqe;
	struct t_ring r;

	ring_init(&r);
	/* Nothing in flight: -ETIME at min_wait, not a wait forever. */
	T_ASSERT_EQ(wait_ext(&r, 1, 0, 10000, NULL), -ETIME);
	/* One CQE of the two asked for: 0 at min_wait. */
	queue_nop(&r, 1);
	t_ring_flush(&r);
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, 0, NULL, 0), 1);
	T_ASSERT_EQ(wait_ext(&r, 2, 0, 10000, NULL), 0);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
	/* min_complete reached before min_wait. */
	queue_nop(&r, 2);
	queue_nop(&r, 3);
	T_ASSERT_EQ(t_ring_flush(&r), 2);
	T_ASSERT_EQ(enter_ext(&r, 2, 2, 0, 1000000, NULL), 2);
	T_ASSERT_EQ(t_cq_ready(&r), 2);
	/* min_complete 0 never waits. */
	T_ASSERT_EQ(wait_ext(&r, 0, 0, 1000000, NULL), 0);
	t_ring_exit(&r);
}

/*
 * min_wait then a long general timeout: one CQE of the two asked for
 * ends the wait, whether it came before min_wait passed or after.
 */
static void test_min_then_timeout(void)
{
	struct __kernel_timespec ts = {60, 0};
	struct t_writer w;
	struct io_uring_cqe cqe;
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int fds[2];

	ring_init(&r);
	T_ASSERT_EQ(pipe(fds), 0);
	sqe = t_get_sqe(&r);
	t_prep_poll_add(sqe, fds[0], POLLIN, 0, 7);
	t_ring_flush(&r);
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, 0, NULL, 0), 1);
	t_writer_start(&w, fds[1], "x", 1, 50000);
	T_ASSERT_EQ(wait_ext(&r, 2, 0, 5000, &ts), 0);
	T_ASSERT_EQ(t_writer_join(&w), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 7);
	T_ASSERT_EQ(cqe.res & POLLIN, POLLIN);
	/* A general timeout shorter than min_wait: -ETIME all the same. */
	ts.tv_sec = 0;
	ts.tv_nsec = 1000000;
	T_ASSERT_EQ(wait_ext(&r, 1, 0, 20000, &ts), -ETIME);
	close(fds[0]);
	close(fds[1]);
	t_ring_exit(&r);
}

int main(void)
{
	static const unsigned int flags[] = {
		0, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};

	t_require_engine();
	t_watchdog(30);
	for (unsigned int i = 0; i < 2; i++) {
		cur_flags = flags[i];
		test_register_clock();
		test_abs_timer();
		test_min_no_timeout();
		test_min_then_timeout();
	}
	return T_EXIT_PASS;
}
