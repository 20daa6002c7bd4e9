/* SPDX-License-Identifier: MIT */
/*
 * nowait-bench engines and rings: the kernel's io_uring through raw system
 * calls, nowait through nowait_*(), and one ring set-up for both that maps
 * the rings exactly as liburing does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nowait.h"
#include "bench.h"

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

const struct bench_engine bench_engine_kernel = {
	.name = "kernel",
	.setup = kernel_setup,
	.enter = kernel_enter,
	.reg = kernel_register,
};

const struct bench_engine bench_engine_user = {
	.name = "user",
	.setup = nowait_setup,
	.enter = nowait_enter,
	.reg = nowait_register,
};

/*
 * nowait with nowait-first issue switched off: the engine reads
 * NOWAIT_PUNT when a ring is set up, so the variable lives only around
 * that call and no other ring (or child) sees it.
 */
static int punt_setup(unsigned int entries, struct io_uring_params *p)
{
	int ret;

	setenv("NOWAIT_PUNT", "1", 1);
	ret = nowait_setup(entries, p);
	unsetenv("NOWAIT_PUNT");
	return ret;
}

const struct bench_engine bench_engine_user_punt = {
	.name = "user-punt",
	.setup = punt_setup,
	.enter = nowait_enter,
	.reg = nowait_register,
};

/*
 * Was this engine (or its punt flavour) chosen with --engine? A workload
 * with flavours checks ctx->flavour too (bench_ctx_has_flavour()).
 */
bool bench_ctx_has(const struct bench_ctx *ctx, const struct bench_engine *eng)
{
	int i;

	if (eng == &bench_engine_user_punt)
		eng = &bench_engine_user;
	for (i = 0; i < ctx->nr_engines; i++)
		if (ctx->engines[i] == eng)
			return true;
	return false;
}

/* Is the flavour `name` of engine `eng` to be measured? */
bool bench_ctx_has_flavour(const struct bench_ctx *ctx,
			   const struct bench_engine *eng, const char *name)
{
	if (ctx->flavour)
		return !strcmp(ctx->flavour, name);
	return bench_ctx_has(ctx, eng);
}

static void *map_region(int fd, size_t size, off_t off, int *err)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, fd, off);

	if (p == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	return p;
}

/* Point into the mapped rings at the offsets the engine gave. */
static void ring_point(struct bench_ring *r, const struct io_uring_params *p)
{
	char *sq = r->sq_ptr, *cq = r->cq_ptr;

	r->sq_khead = (unsigned int *)(sq + p->sq_off.head);
	r->sq_ktail = (unsigned int *)(sq + p->sq_off.tail);
	r->sq_kflags = (unsigned int *)(sq + p->sq_off.flags);
	r->sq_array = (unsigned int *)(sq + p->sq_off.array);
	r->sq_mask = *(unsigned int *)(sq + p->sq_off.ring_mask);
	r->sq_entries = *(unsigned int *)(sq + p->sq_off.ring_entries);
	r->sqe_head = r->sqe_tail = *r->sq_ktail;

	r->cq_khead = (unsigned int *)(cq + p->cq_off.head);
	r->cq_ktail = (unsigned int *)(cq + p->cq_off.tail);
	r->cq_kflags = NULL;
	if (p->cq_off.flags)
		r->cq_kflags = (unsigned int *)(cq + p->cq_off.flags);
	r->cq_mask = *(unsigned int *)(cq + p->cq_off.ring_mask);
	r->cq_entries = *(unsigned int *)(cq + p->cq_off.ring_entries);
	r->cqes = (struct io_uring_cqe *)(cq + p->cq_off.cqes);
}

/* Map the three regions at the kernel's offsets and point into them. */
static int ring_map(struct bench_ring *r, const struct io_uring_params *p)
{
	size_t cqe_size = sizeof(struct io_uring_cqe);
	size_t sqe_size = sizeof(struct io_uring_sqe);
	int err = 0;

	if (p->flags & IORING_SETUP_CQE32)
		cqe_size *= 2;
	if (p->flags & IORING_SETUP_SQE128)
		sqe_size *= 2;
	r->sq_size = p->sq_off.array + p->sq_entries * sizeof(unsigned int);
	r->cq_size = p->cq_off.cqes + p->cq_entries * cqe_size;
	r->sqes_size = p->sq_entries * sqe_size;

	r->sq_ptr = map_region(r->fd, r->sq_size, IORING_OFF_SQ_RING, &err);
	if (!r->sq_ptr)
		return err;
	r->cq_ptr = map_region(r->fd, r->cq_size, IORING_OFF_CQ_RING, &err);
	if (!r->cq_ptr)
		return err;
	r->sqes = map_region(r->fd, r->sqes_size, IORING_OFF_SQES, &err);
	if (!r->sqes)
		return err;

	ring_point(r, p);
	return 0;
}

static int ring_setup(struct bench_ring *r, unsigned int entries,
		      unsigned int cq_entries, unsigned int flags,
		      struct io_uring_params *p)
{
	memset(p, 0, sizeof(*p));
	p->flags = flags;
	if (cq_entries) {
		p->flags |= IORING_SETUP_CQSIZE;
		p->cq_entries = cq_entries;
	}
	return r->eng->setup(entries, p);
}

/*
 * Create and map a ring. flags are extra setup flags (BENCH_FAST_FLAGS or
 * 0); cq_entries, when non-zero, asks for IORING_SETUP_CQSIZE. An engine
 * that rejects the flags with -EINVAL gets a plain set-up instead. Returns
 * 0 or -errno with r->err_op naming the call that failed.
 */
int bench_ring_open(struct bench_ring *r, const struct bench_engine *eng,
		    unsigned int entries, unsigned int cq_entries,
		    unsigned int flags)
{
	struct io_uring_params p;
	int fd, err;

	memset(r, 0, sizeof(*r));
	r->eng = eng;
	r->fd = -1;
	r->err_op = "io_uring_setup";
	fd = ring_setup(r, entries, cq_entries, flags, &p);
	if (fd == -EINVAL && (flags || cq_entries))
		fd = ring_setup(r, entries, 0, 0, &p);
	if (fd < 0)
		return fd;
	r->fd = fd;
	r->flags = p.flags;
	r->features = p.features;
	r->err_op = "mmap";
	err = ring_map(r, &p);
	if (err) {
		bench_ring_close(r);
		return err;
	}
	r->err_op = NULL;
	return 0;
}

void bench_ring_close(struct bench_ring *r)
{
	if (r->sqes)
		munmap(r->sqes, r->sqes_size);
	if (r->cq_ptr)
		munmap(r->cq_ptr, r->cq_size);
	if (r->sq_ptr)
		munmap(r->sq_ptr, r->sq_size);
	if (r->fd >= 0)
		close(r->fd);
	r->sqes = NULL;
	r->cq_ptr = r->sq_ptr = NULL;
	r->fd = -1;
}

/*
 * Does the ring's engine implement this opcode? Asked through
 * IORING_REGISTER_PROBE, as programs do; an engine without the probe
 * is assumed to have it.
 */
bool bench_ring_has_op(struct bench_ring *r, unsigned int op)
{
	struct {
		struct io_uring_probe hdr;
		struct io_uring_probe_op ops[256];
	} probe;
	int ret;

	memset(&probe, 0, sizeof(probe));
	ret = r->eng->reg(r->fd, IORING_REGISTER_PROBE, &probe, 256);
	if (ret < 0)
		return true;
	if (op > probe.hdr.last_op)
		return false;
	return probe.ops[op].flags & IO_URING_OP_SUPPORTED;
}

/* A short name for the set-up flags a ring got, for the reports. */
const char *bench_setup_name(unsigned int flags)
{
	unsigned int fast = flags & BENCH_FAST_FLAGS;

	if (fast == BENCH_FAST_FLAGS)
		return "defer";
	if (fast == IORING_SETUP_SINGLE_ISSUER)
		return "single";
	return "none";
}
