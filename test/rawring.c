/* SPDX-License-Identifier: MIT */
/*
 * The raw ring (rawring.h): the kernel's three calls as raw system calls,
 * nowait's, and a ring mapped at the kernel's offsets (SQ ring, CQ ring
 * and SQEs, each its own map unless one serves both rings).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <nowait.h>
#include "nowait-abi.h"
#include "rawring.h"

static int kernel_setup(unsigned int entries, struct io_uring_params *p)
{
	long ret = syscall(__NR_io_uring_setup, entries, p);

	return ret < 0 ? -errno : (int)ret;
}

static int kernel_enter(int fd, unsigned int to_submit,
			unsigned int min_complete, unsigned int flags,
			const void *arg, size_t argsz)
{
	long ret = syscall(__NR_io_uring_enter, fd, to_submit, min_complete,
			   flags, arg, argsz);

	return ret < 0 ? -errno : (int)ret;
}

static int kernel_register(int fd, unsigned int opcode, void *arg,
			   unsigned int nr_args)
{
	long ret = syscall(__NR_io_uring_register, fd, opcode, arg, nr_args);

	return ret < 0 ? -errno : (int)ret;
}

const struct t_calls t_calls_kernel = {
	.name = "kernel",
	.setup = kernel_setup,
	.enter = kernel_enter,
	.reg = kernel_register,
};

const struct t_calls t_calls_user = {
	.name = "user",
	.setup = nowait_setup,
	.enter = nowait_enter,
	.reg = nowait_register,
};

static void *t_map(int fd, size_t sz, off_t off)
{
	void *ptr = mmap(NULL, sz, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, fd, off);

	return ptr == MAP_FAILED ? NULL : ptr;
}

static int t_ring_map_rings(struct t_ring *r, int fd,
			    const struct io_uring_params *p, bool one_map)
{
	int err;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->p = *p;

	r->sq_sz = p->sq_off.array + p->sq_entries * sizeof(unsigned int);
	r->cq_sz = p->cq_off.cqes + ((size_t)p->cq_entries << t_cqe_shift(r)) *
					    sizeof(struct io_uring_cqe);
	r->sqes_sz = ((size_t)p->sq_entries << t_sqe_shift(r)) *
		     sizeof(struct io_uring_sqe);

	if (one_map) {
		if (r->cq_sz > r->sq_sz)
			r->sq_sz = r->cq_sz;
		r->cq_sz = r->sq_sz;
	}
	r->sq_ptr = t_map(fd, r->sq_sz, IORING_OFF_SQ_RING);
	if (!r->sq_ptr)
		goto fail;
	if (one_map) {
		r->cq_ptr = r->sq_ptr;
	} else {
		r->cq_ptr = t_map(fd, r->cq_sz, IORING_OFF_CQ_RING);
		if (!r->cq_ptr)
			goto fail;
	}
	r->sqes = t_map(fd, r->sqes_sz, IORING_OFF_SQES);
	if (!r->sqes)
		goto fail;

	r->sq_head = (unsigned int *)((char *)r->sq_ptr + p->sq_off.head);
	r->sq_tail = (unsigned int *)((char *)r->sq_ptr + p->sq_off.tail);
	r->sq_mask = (unsigned int *)((char *)r->sq_ptr + p->sq_off.ring_mask);
	r->sq_entries =
		(unsigned int *)((char *)r->sq_ptr + p->sq_off.ring_entries);
	r->sq_flags = (unsigned int *)((char *)r->sq_ptr + p->sq_off.flags);
	r->sq_dropped = (unsigned int *)((char *)r->sq_ptr + p->sq_off.dropped);
	/* NO_SQARRAY: none (sq_off.array is 0, the SQ head's offset). */
	r->sq_array =
		(p->flags & IORING_SETUP_NO_SQARRAY)
			? NULL
			: (unsigned int *)((char *)r->sq_ptr + p->sq_off.array);

	r->cq_head = (unsigned int *)((char *)r->cq_ptr + p->cq_off.head);
	r->cq_tail = (unsigned int *)((char *)r->cq_ptr + p->cq_off.tail);
	r->cq_mask = (unsigned int *)((char *)r->cq_ptr + p->cq_off.ring_mask);
	r->cq_entries =
		(unsigned int *)((char *)r->cq_ptr + p->cq_off.ring_entries);
	r->cq_overflow =
		(unsigned int *)((char *)r->cq_ptr + p->cq_off.overflow);
	r->cq_flags = (unsigned int *)((char *)r->cq_ptr + p->cq_off.flags);
	r->cqes = (struct io_uring_cqe *)((char *)r->cq_ptr + p->cq_off.cqes);

	r->sqe_tail = __atomic_load_n(r->sq_tail, __ATOMIC_RELAXED);
	return 0;
fail:
	/* Leave the fd to the caller: unmap only what was mapped here. */
	err = errno ? -errno : -ENOMEM;
	t_ring_unmap(r);
	return err;
}

int t_ring_map(struct t_ring *r, int fd, const struct io_uring_params *p)
{
	/* One map for both rings only when the engine says they alias. */
	return t_ring_map_rings(r, fd, p,
				p->features & IORING_FEAT_SINGLE_MMAP);
}

int t_ring_map_apart(struct t_ring *r, int fd, const struct io_uring_params *p)
{
	return t_ring_map_rings(r, fd, p, false);
}

void t_ring_unmap(struct t_ring *r)
{
	if (r->sqes)
		munmap(r->sqes, r->sqes_sz);
	if (r->cq_ptr && r->cq_ptr != r->sq_ptr)
		munmap(r->cq_ptr, r->cq_sz);
	if (r->sq_ptr)
		munmap(r->sq_ptr, r->sq_sz);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

void t_ring_exit(struct t_ring *r)
{
	int fd = r->fd;

	t_ring_unmap(r);
	if (fd >= 0)
		close(fd);
}
