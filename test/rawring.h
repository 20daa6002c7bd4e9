/* SPDX-License-Identifier: MIT */
/*
 * The raw ring the tests and nowait-bench share, independent of liburing:
 * the two engines' three calls (the kernel's as raw system calls, nowait's
 * as nowait_*()), and a ring mapped at the kernel's mmap offsets. Its names
 * are those of the tests' harness (t_), which nowait-bench borrows.
 */
#ifndef NW_TEST_RAWRING_H
#define NW_TEST_RAWRING_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/io_uring.h>

/* An engine: the three calls with the kernel's results (>= 0, or -errno). */
struct t_calls {
	const char *name;
	int (*setup)(unsigned int entries, struct io_uring_params *p);
	int (*enter)(int fd, unsigned int to_submit, unsigned int min_complete,
		     unsigned int flags, const void *arg, size_t argsz);
	int (*reg)(int fd, unsigned int opcode, void *arg,
		   unsigned int nr_args);
};

/* "kernel": io_uring_setup/enter/register as raw system calls. */
extern const struct t_calls t_calls_kernel;
/* "user": nowait_setup/enter/register (include/nowait.h). */
extern const struct t_calls t_calls_user;

/* A raw ring mapped the way liburing maps it (separate SQ and CQ maps). */
struct t_ring {
	int fd;
	struct io_uring_params p;
	unsigned int *sq_head, *sq_tail, *sq_mask, *sq_entries, *sq_flags;
	unsigned int *sq_dropped, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask, *cq_entries, *cq_overflow;
	unsigned int *cq_flags;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	unsigned int sqe_tail; /* local tail, published by t_ring_flush */
	void *sq_ptr, *cq_ptr;
	size_t sq_sz, cq_sz, sqes_sz;
};

/* log2 of an SQE's and a CQE's size in 64- and 16-byte units. */
static inline unsigned int t_sqe_shift(const struct t_ring *r)
{
	return (r->p.flags & IORING_SETUP_SQE128) ? 1 : 0;
}

static inline unsigned int t_cqe_shift(const struct t_ring *r)
{
	return (r->p.flags & IORING_SETUP_CQE32) ? 1 : 0;
}

/*
 * Map an already set-up ring fd (p as setup returned it): 0 or -errno,
 * and then nothing is mapped and the fd is left to the caller. One map
 * serves both rings when the engine says they alias
 * (IORING_FEAT_SINGLE_MMAP), as liburing does.
 */
int t_ring_map(struct t_ring *r, int fd, const struct io_uring_params *p);
/* The same with the SQ and CQ rings always mapped apart. */
int t_ring_map_apart(struct t_ring *r, int fd, const struct io_uring_params *p);
/* Unmap what t_ring_map mapped and clear *r (fd -1); the fd stays open. */
void t_ring_unmap(struct t_ring *r);
/* Unmap and close the ring fd. */
void t_ring_exit(struct t_ring *r);

#endif
