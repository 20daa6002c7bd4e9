/* SPDX-License-Identifier: MIT */
/*
 * A ring mapped by liburing's io_uring_queue_mmap() and driven by its inline
 * helpers (get_sqe, prep_nop, peek/for_each_cqe, cq_advance). Only the
 * submit goes through t_enter: io_uring_submit would make the real system
 * call. Needs the system liburing (HAVE_LIBURING), else skips.
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

#include <unistd.h>
#include <liburing.h>
#include <nowait.h>
#include "helpers.h"

/* Set up with t_setup and let liburing map the fd. */
static void ring_open(struct io_uring *ring, unsigned int entries,
		      struct io_uring_params *p)
{
	int fd = t_setup(entries, p);

	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(io_uring_queue_mmap(fd, p, ring), 0);
	T_ASSERT_EQ(ring->ring_fd, fd);
}

/*
 * Publish liburing's local SQ tail as __io_uring_flush_sq does, filling the
 * index array for the new slots (liburing 2.3's queue_mmap leaves it to
 * the caller), then enter. Returns enter's result.
 */
static int ring_submit(struct io_uring *ring, unsigned int wait_nr)
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned int tail = sq->sqe_tail, pending, t;

	for (t = *sq->ktail; t != tail; t++)
		sq->array[t & sq->ring_mask] = t & sq->ring_mask;
	sq->sqe_head = tail;
	io_uring_smp_store_release(sq->ktail, tail);
	pending = tail - io_uring_smp_load_acquire(sq->khead);
	return t_enter(ring->ring_fd, pending, wait_nr,
		       wait_nr ? IORING_ENTER_GETEVENTS : 0, NULL, 0);
}

static void test_layout(void)
{
	struct io_uring_params p;
	struct io_uring ring;

	memset(&p, 0, sizeof(p));
	ring_open(&ring, 16, &p);
	T_ASSERT_EQ(ring.sq.ring_entries, 16);
	T_ASSERT_EQ(ring.sq.ring_mask, 15);
	T_ASSERT_EQ(ring.cq.ring_entries, 32);
	T_ASSERT_EQ(ring.cq.ring_mask, 31);
	T_ASSERT_EQ(*ring.sq.kring_entries, 16);
	T_ASSERT_EQ(*ring.cq.kring_entries, 32);
	T_ASSERT_EQ(io_uring_sq_space_left(&ring), 16);
	T_ASSERT_EQ(io_uring_sq_ready(&ring), 0);
	T_ASSERT_EQ(io_uring_cq_ready(&ring), 0);
	T_ASSERT(!io_uring_cq_has_overflow(&ring));
	/* One mapping for both rings (IORING_FEAT_SINGLE_MMAP). */
	T_ASSERT(p.features & IORING_FEAT_SINGLE_MMAP);
	T_ASSERT(ring.sq.ring_ptr == ring.cq.ring_ptr);
	T_ASSERT_EQ(ring.sq.ring_sz, ring.cq.ring_sz);
	io_uring_queue_exit(&ring);
}

static void test_nops(void)
{
	struct io_uring_params p;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	unsigned int i, head, seen;

	memset(&p, 0, sizeof(p));
	ring_open(&ring, 8, &p);
	for (i = 0; i < 8; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		T_ASSERT(sqe != NULL);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, 1000 + i);
	}
	T_ASSERT(io_uring_get_sqe(&ring) == NULL);
	T_ASSERT_EQ(io_uring_sq_ready(&ring), 8);
	T_ASSERT_EQ(ring_submit(&ring, 8), 8);
	T_ASSERT_EQ(io_uring_sq_ready(&ring), 0);
	T_ASSERT_EQ(io_uring_cq_ready(&ring), 8);

	seen = 0;
	io_uring_for_each_cqe(&ring, head, cqe)
	{
		T_ASSERT_EQ(io_uring_cqe_get_data64(cqe), 1000 + seen);
		T_ASSERT_EQ(cqe->res, 0);
		T_ASSERT_EQ(cqe->flags, 0);
		seen++;
	}
	T_ASSERT_EQ(seen, 8);
	io_uring_cq_advance(&ring, seen);
	T_ASSERT_EQ(io_uring_cq_ready(&ring), 0);

	/* Pointer user_data and peek/seen, many times round the rings. */
	for (i = 0; i < 2000; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		T_ASSERT(sqe != NULL);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data(sqe, &ring.sq.array[i % 8]);
		if (i % 3 == 0 || i % 8 == 7) {
			unsigned int n = io_uring_sq_ready(&ring);

			T_ASSERT_EQ(ring_submit(&ring, 0), n);
			T_ASSERT_EQ(io_uring_cq_ready(&ring), n);
			while (n--) {
				T_ASSERT_EQ(io_uring_peek_cqe(&ring, &cqe), 0);
				T_ASSERT(io_uring_cqe_get_data(cqe) != NULL);
				T_ASSERT_EQ(cqe->res, 0);
				io_uring_cqe_seen(&ring, cqe);
			}
		}
	}
	if (io_uring_sq_ready(&ring)) {
		unsigned int n = io_uring_sq_ready(&ring);

		T_ASSERT_EQ(ring_submit(&ring, n), n);
		io_uring_cq_advance(&ring, n);
	}
	T_ASSERT_EQ(io_uring_cq_ready(&ring), 0);
	T_ASSERT_EQ(*ring.sq.kdropped, 0);
	T_ASSERT_EQ(*ring.cq.koverflow, 0);
	io_uring_queue_exit(&ring);
}

/* liburing sees the overflow flag and the in-order flush. */
static void test_overflow(void)
{
	struct io_uring_params p;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	unsigned int i, head, n, next = 0;

	memset(&p, 0, sizeof(p));
	ring_open(&ring, 4, &p);
	for (i = 0; i < 12; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		T_ASSERT(sqe != NULL);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, i);
		if (io_uring_sq_space_left(&ring) == 0)
			T_ASSERT_EQ(ring_submit(&ring, 0), 4);
	}
	T_ASSERT_EQ(io_uring_cq_ready(&ring), 8);
	T_ASSERT(io_uring_cq_has_overflow(&ring));
	while (next < 12) {
		n = 0;
		io_uring_for_each_cqe(&ring, head, cqe)
		{
			T_ASSERT_EQ(io_uring_cqe_get_data64(cqe), next);
			next++;
			n++;
		}
		T_ASSERT_GT(n, 0);
		io_uring_cq_advance(&ring, n);
		if (next < 12) {
			T_ASSERT(io_uring_cq_has_overflow(&ring));
			T_ASSERT_EQ(t_enter(ring.ring_fd, 0, 0,
					    IORING_ENTER_GETEVENTS, NULL, 0),
				    0);
		}
	}
	T_ASSERT(!io_uring_cq_has_overflow(&ring));
	io_uring_queue_exit(&ring);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_layout();
	test_nops();
	test_overflow();
	return T_EXIT_PASS;
}
#endif
