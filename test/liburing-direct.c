/* SPDX-License-Identifier: MIT */
/*
 * liburing.so.2's submit and wait functions under the preload: the
 * preload defines them (preload/liburing.c), so a program on the shared
 * library reaches the engine with no SIGSYS trap per enter. The same calls
 * run on the kernel plainly (the kernel run) and re-executed under
 * libnowait-preload.so with NOWAIT_MODE=user, where the preload's trap
 * count (nowait_preload_traps) must not move across them for liburing 2.3
 * and 2.15, the versions it knows: io_uring_submit, _and_wait,
 * _and_get_events, _and_wait_timeout, io_uring_wait_cqes,
 * io_uring_wait_cqe_timeout, __io_uring_get_cqe (wait_cqe, peek_cqe),
 * io_uring_get_events, io_uring_peek_batch_cqe (with an overflowed CQ),
 * __io_uring_sqring_wait, io_uring_enter/enter2 with their errors, on a
 * plain, a registered-fd and an SQPOLL ring. Results are the kernel's.
 * A third run, NOWAIT_MODE=kernel under the preload where the kernel's
 * io_uring works, checks that kernel rings go to the library's own code.
 * Needs the system liburing (HAVE_LIBURING).
 */
#include <stdio.h>
#include <stdlib.h>

#ifndef HAVE_LIBURING
int main(void)
{
	printf("skip: built without liburing\n");
	return 77;
}
#else

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>
#include <liburing.h>
#include "helpers.h"

#define CHILD_ENV "NOWAIT_TEST_LIBURING_DIRECT_CHILD"

static bool want_nowait; /* rings must be nowait's */
static bool want_direct; /* and no trap per call */
static unsigned long (*trap_count)(void);

/* 2.3 (no version functions, io_uring_get_events) or 2.15. */
static bool known_liburing(void)
{
	int (*major)(void) =
		(int (*)(void))dlsym(RTLD_DEFAULT, "io_uring_major_version");
	int (*minor)(void) =
		(int (*)(void))dlsym(RTLD_DEFAULT, "io_uring_minor_version");

	if (!major)
		return dlsym(RTLD_DEFAULT, "io_uring_get_events") != NULL;
	return major() == 2 && minor && minor() == 15;
}

static unsigned long traps(void)
{
	return trap_count ? trap_count() : 0;
}

static void queue_nops(struct io_uring *ring, unsigned int n, uint64_t ud)
{
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		T_ASSERT(sqe != NULL);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, ud + i);
	}
}

/* One io_uring_submit_and_wait per NOP, then the CQE by peek. */
static void one_by_one(struct io_uring *ring, unsigned int n)
{
	struct io_uring_cqe *cqe;

	for (unsigned int i = 0; i < n; i++) {
		queue_nops(ring, 1, 100 + i);
		T_ASSERT_EQ(io_uring_submit_and_wait(ring, 1), 1);
		T_ASSERT_EQ(io_uring_peek_cqe(ring, &cqe), 0);
		T_ASSERT_EQ(cqe->user_data, 100 + i);
		T_ASSERT_EQ(cqe->res, 0);
		io_uring_cqe_seen(ring, cqe);
	}
	T_ASSERT_EQ(io_uring_peek_cqe(ring, &cqe), -EAGAIN);
}

/* Batches, timeouts and the events calls. */
static void batches(struct io_uring *ring)
{
	struct __kernel_timespec ts = {.tv_nsec = 2000000};
	struct io_uring_cqe *cqe, *cqes[8];

	queue_nops(ring, 4, 10);
	T_ASSERT_EQ(io_uring_submit(ring), 4);
	T_ASSERT_EQ(io_uring_wait_cqes(ring, &cqe, 4, NULL, NULL), 0);
	T_ASSERT_EQ(io_uring_peek_batch_cqe(ring, cqes, 8), 4);
	for (unsigned int i = 0; i < 4; i++)
		T_ASSERT_EQ(cqes[i]->user_data, 10 + i);
	io_uring_cq_advance(ring, 4);
	T_ASSERT_EQ(io_uring_peek_batch_cqe(ring, cqes, 8), 0);
	T_ASSERT_EQ(io_uring_wait_cqe_timeout(ring, &cqe, &ts), -ETIME);
	T_ASSERT_EQ(io_uring_wait_cqes(ring, &cqe, 2, &ts, NULL), -ETIME);
	T_ASSERT_EQ(io_uring_submit_and_wait_timeout(ring, &cqe, 1, &ts, NULL),
		    -ETIME);
	queue_nops(ring, 1, 20);
	T_ASSERT_EQ(io_uring_submit_and_wait_timeout(ring, &cqe, 1, &ts, NULL),
		    1);
	T_ASSERT_EQ(cqe->user_data, 20);
	io_uring_cqe_seen(ring, cqe);
	queue_nops(ring, 2, 30);
	T_ASSERT_EQ(io_uring_submit_and_get_events(ring), 2);
	T_ASSERT_EQ(io_uring_cq_ready(ring), 2);
	io_uring_cq_advance(ring, 2);
	T_ASSERT_EQ(io_uring_get_events(ring), 0);
	queue_nops(ring, 1, 40);
	T_ASSERT_EQ(io_uring_submit(ring), 1);
	T_ASSERT_EQ(io_uring_wait_cqe(ring, &cqe), 0);
	T_ASSERT_EQ(cqe->user_data, 40);
	io_uring_cqe_seen(ring, cqe);
}

/* The exported enter wrappers: results and errors as the kernel's. */
static void wrappers(struct io_uring *ring)
{
	struct io_uring_getevents_arg arg;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	memset(&arg, 0, sizeof(arg));
	T_ASSERT_EQ(io_uring_enter(ring->ring_fd, 0, 0, 0, NULL), 0);
	T_ASSERT_EQ(io_uring_enter(p[0], 0, 0, 0, NULL), -EOPNOTSUPP);
	T_ASSERT_EQ(io_uring_enter(9999, 0, 0, 0, NULL), -EBADF);
	T_ASSERT_EQ(
		io_uring_enter2(ring->ring_fd, 0, 0,
				IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
				(void *)&arg, sizeof(arg) + 8),
		-EINVAL);
	T_ASSERT_EQ(io_uring_enter2(ring->ring_fd, 0, 0, IORING_ENTER_EXT_ARG,
				    (void *)&arg, sizeof(arg)),
		    0);
	close(p[0]);
	close(p[1]);
}

/* A CQ of 8 with 16 NOPs in it: the batch peek flushes the overflow. */
static void overflow(void)
{
	struct io_uring_params params;
	struct io_uring_cqe *cqes[16];
	struct io_uring ring;

	memset(&params, 0, sizeof(params));
	params.flags = IORING_SETUP_CQSIZE;
	params.cq_entries = 8;
	T_ASSERT_EQ(io_uring_queue_init_params(8, &ring, &params), 0);
	for (unsigned int b = 0; b < 2; b++) {
		queue_nops(&ring, 8, 8 * b);
		T_ASSERT_EQ(io_uring_submit(&ring), 8);
	}
	T_ASSERT(io_uring_cq_has_overflow(&ring));
	for (unsigned int b = 0; b < 2; b++) {
		T_ASSERT_EQ(io_uring_peek_batch_cqe(&ring, cqes, 16), 8);
		for (unsigned int i = 0; i < 8; i++)
			T_ASSERT_EQ(cqes[i]->user_data, 8 * b + i);
		io_uring_cq_advance(&ring, 8);
	}
	T_ASSERT(!io_uring_cq_has_overflow(&ring));
	T_ASSERT_EQ(io_uring_peek_batch_cqe(&ring, cqes, 16), 0);
	io_uring_queue_exit(&ring);
}

static void sqpoll(void)
{
	struct io_uring_params params;
	struct io_uring_cqe *cqe;
	struct io_uring ring;

	memset(&params, 0, sizeof(params));
	params.flags = IORING_SETUP_SQPOLL;
	params.sq_thread_idle = 50;
	T_ASSERT_EQ(io_uring_queue_init_params(8, &ring, &params), 0);
	for (unsigned int i = 0; i < 32; i++) {
		int ret;

		queue_nops(&ring, 1, i);
		/*
		 * The SQEs the poller has not consumed: the last one's CQE
		 * may come before the SQ head moves past it.
		 */
		ret = io_uring_submit(&ring);
		T_ASSERT_GE(ret, 1);
		T_ASSERT_LE(ret, 2);
		T_ASSERT_EQ(io_uring_wait_cqe(&ring, &cqe), 0);
		T_ASSERT_EQ(cqe->user_data, i);
		io_uring_cqe_seen(&ring, cqe);
	}
	T_ASSERT_GE(io_uring_sqring_wait(&ring), 0);
	io_uring_queue_exit(&ring);
}

/* Setups and register calls trap; the calls between them must not. */
static void run_checks(void)
{
	struct io_uring ring;
	unsigned long t0;

	T_ASSERT_EQ(io_uring_queue_init(8, &ring, 0), 0);
	T_ASSERT_EQ(t_fd_is_nowait_ring(ring.ring_fd), want_nowait);
	if (want_direct)
		T_ASSERT_GT(traps(), 0); /* the setup */
	t0 = traps();
	one_by_one(&ring, 64);
	batches(&ring);
	wrappers(&ring);
	T_ASSERT_EQ(traps(), t0);
	T_ASSERT_EQ(io_uring_register_ring_fd(&ring), 1);
	t0 = traps();
	one_by_one(&ring, 16);
	batches(&ring);
	T_ASSERT_EQ(traps(), t0);
	io_uring_queue_exit(&ring);
	overflow();
	sqpoll();
}

static void child_main(const char *how)
{
	trap_count = (unsigned long (*)(void))dlsym(RTLD_DEFAULT,
						    "nowait_preload_traps");
	T_ASSERT(trap_count != NULL);
	want_nowait = !strcmp(how, "user");
	/* An unknown liburing keeps its own code: traps, and correct. */
	want_direct = want_nowait && known_liburing();
	if (!want_direct)
		trap_count = NULL;
	run_checks();
}

static void run_preloaded(const char *mode, const char *so)
{
	const char *const env[] = {"NOWAIT_MODE", mode, CHILD_ENV, mode, NULL};

	t_run_self(so, env, 40000);
}

int main(void)
{
	char so[PATH_MAX + 32];
	const char *how = getenv(CHILD_ENV);

	t_watchdog(50);
	if (how) {
		child_main(how);
		return T_EXIT_PASS;
	}
	t_require_engine();
	if (t_engine() == T_ENGINE_KERNEL) {
		run_checks();
		return T_EXIT_PASS;
	}
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("skip: the preload library is tested in the plain build\n");
	return T_EXIT_SKIP;
#endif
	if (!t_preload_path(so, sizeof(so))) {
		printf("skip: no %s\n", so);
		return T_EXIT_SKIP;
	}
	run_preloaded("user", so);
	{
		struct io_uring ring;

		/* The kernel's rings under the preload: the library's code. */
		if (!io_uring_queue_init(2, &ring, 0)) {
			io_uring_queue_exit(&ring);
			run_preloaded("kernel", so);
		}
	}
	return T_EXIT_PASS;
}
#endif
