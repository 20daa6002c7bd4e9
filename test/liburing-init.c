/* SPDX-License-Identifier: MIT */
/*
 * liburing end to end: io_uring_queue_init and io_uring_queue_init_params
 * make the system calls themselves (inline on x86-64), map the ring the
 * way the features tell them (one mapping with IORING_FEAT_SINGLE_MMAP),
 * and io_uring_submit_and_wait / io_uring_wait_cqe drive it: NOPs and file
 * reads round the rings, data checked, with CQSIZE, CQE32 and SQPOLL. The
 * user run re-executes this program under libnowait-preload.so with
 * NOWAIT_MODE=user, and checks that its rings are nowait's; the kernel run
 * calls liburing plainly. Needs the system liburing (HAVE_LIBURING).
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

#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>
#include <liburing.h>
#include "helpers.h"

#define CHILD_ENV "NOWAIT_TEST_LIBURING_INIT_CHILD"
#define FILE_LEN  32768

static int data_fd = -1;
static bool want_nowait; /* the preloaded run: rings must be nowait's */

static unsigned char pattern(size_t off)
{
	return (unsigned char)(off * 13 + off / 509);
}

static void make_data_file(void)
{
	char path[] = "/tmp/nowait-liburing-init.XXXXXX";
	unsigned char buf[FILE_LEN];

	for (size_t i = 0; i < FILE_LEN; i++)
		buf[i] = pattern(i);
	data_fd = mkstemp(path);
	T_ASSERT_GE(data_fd, 0);
	unlink(path);
	T_ASSERT_EQ(pwrite(data_fd, buf, FILE_LEN, 0), FILE_LEN);
}

static void ring_init(struct io_uring *ring, unsigned int entries,
		      struct io_uring_params *p)
{
	T_ASSERT_EQ(io_uring_queue_init_params(entries, ring, p), 0);
	T_ASSERT_EQ(t_fd_is_nowait_ring(ring->ring_fd), want_nowait);
	T_ASSERT(p->features & IORING_FEAT_SINGLE_MMAP);
	/* liburing mapped one region for both rings. */
	T_ASSERT(ring->sq.ring_ptr == ring->cq.ring_ptr);
	T_ASSERT_EQ(*ring->cq.kring_entries, p->cq_entries);
	T_ASSERT_EQ(*ring->sq.kring_entries, p->sq_entries);
}

/*
 * The next SQE. A poller may post a batch's CQEs before it moves the SQ
 * head past it (the kernel's io_submit_sqes does too): then wait for room
 * as liburing's users do.
 */
static struct io_uring_sqe *get_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	for (int i = 0; !sqe && i < 1000; i++) {
		T_ASSERT(ring->flags & IORING_SETUP_SQPOLL);
		T_ASSERT_GE(io_uring_sqring_wait(ring), 0);
		sqe = io_uring_get_sqe(ring);
	}
	T_ASSERT(sqe != NULL);
	return sqe;
}

/* Batches of NOPs and reads until the CQ went round twice. */
static void traffic(struct io_uring *ring, unsigned int cq_entries)
{
	static unsigned char bufs[16][256];
	unsigned int seq = 0, n = 16;
	struct io_uring_cqe *cqe;

	while (seq < 2 * cq_entries + n) {
		for (unsigned int i = 0; i < n; i++) {
			struct io_uring_sqe *sqe = get_sqe(ring);
			size_t off = ((seq + i) * 1031UL) % (FILE_LEN - 256);

			if (i & 1)
				io_uring_prep_read(sqe, data_fd, bufs[i], 256,
						   off);
			else
				io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, seq + i);
		}
		T_ASSERT_EQ(io_uring_submit_and_wait(ring, n), (int)n);
		for (unsigned int i = 0; i < n; i++) {
			uint64_t ud;
			size_t off;

			T_ASSERT_EQ(io_uring_wait_cqe(ring, &cqe), 0);
			ud = io_uring_cqe_get_data64(cqe);
			T_ASSERT_GE(ud, seq);
			T_ASSERT_LT(ud, seq + n);
			T_ASSERT_EQ(cqe->res, ((ud - seq) & 1) ? 256 : 0);
			off = (ud * 1031UL) % (FILE_LEN - 256);
			for (size_t k = 0; ((ud - seq) & 1) && k < 256; k += 17)
				T_ASSERT_EQ(bufs[ud - seq][k],
					    pattern(off + k));
			io_uring_cqe_seen(ring, cqe);
		}
		seq += n;
	}
	T_ASSERT_EQ(io_uring_cq_ready(ring), 0);
	T_ASSERT(!io_uring_cq_has_overflow(ring));
}

static void run_flags(unsigned int entries, unsigned int flags,
		      unsigned int cq_entries)
{
	struct io_uring_params p;
	struct io_uring ring;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	p.cq_entries = cq_entries;
	if (flags & IORING_SETUP_SQPOLL)
		p.sq_thread_idle = 100;
	ring_init(&ring, entries, &p);
	traffic(&ring, p.cq_entries);
	io_uring_queue_exit(&ring);
}

/* io_uring_queue_init itself, and an empty wait with a timeout. */
static void test_queue_init(void)
{
	struct __kernel_timespec ts = {.tv_nsec = 1000000};
	struct io_uring_cqe *cqe;
	struct io_uring ring;

	T_ASSERT_EQ(io_uring_queue_init(16, &ring, 0), 0);
	T_ASSERT_EQ(t_fd_is_nowait_ring(ring.ring_fd), want_nowait);
	T_ASSERT(ring.features & IORING_FEAT_SINGLE_MMAP);
	T_ASSERT(ring.sq.ring_ptr == ring.cq.ring_ptr);
	traffic(&ring, 32);
	T_ASSERT_EQ(io_uring_wait_cqe_timeout(&ring, &cqe, &ts), -ETIME);
	io_uring_queue_exit(&ring);
}

static void run_checks(void)
{
	make_data_file();
	test_queue_init();
	run_flags(16, IORING_SETUP_CQSIZE, 128);
	run_flags(16, IORING_SETUP_CQE32, 0);
	run_flags(16, IORING_SETUP_SQPOLL, 0);
	close(data_fd);
}

/* The user run: this program again, its io_uring calls trapped. */
static int run_preloaded(void)
{
	static const char *const env[] = {"NOWAIT_MODE", "user", CHILD_ENV, "1",
					  NULL};
	char so[PATH_MAX + 32];

	if (!t_preload_path(so, sizeof(so))) {
		printf("skip: no %s\n", so);
		return T_EXIT_SKIP;
	}
	t_run_self(so, env, 40000);
	return T_EXIT_PASS;
}

int main(void)
{
	t_watchdog(50);
	if (getenv(CHILD_ENV)) {
		want_nowait = true;
		run_checks();
		return T_EXIT_PASS;
	}
	t_require_engine();
	if (t_engine() == T_ENGINE_KERNEL) {
		run_checks();
		return T_EXIT_PASS;
	}
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* LD_PRELOAD of an instrumented library needs the sanitizer first. */
	printf("skip: the preload library is tested in the plain build\n");
	return T_EXIT_SKIP;
#endif
	return run_preloaded();
}
#endif
