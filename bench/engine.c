/* SPDX-License-Identifier: MIT */
/*
 * nowait-bench engines and rings: the kernel's io_uring through raw system
 * calls and nowait through nowait_*() (test/rawring.c's), nowait with
 * punting, and one ring set-up for both that maps the rings exactly as
 * liburing does (test/rawring.c again).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nowait.h"
#include "bench.h"

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

const struct t_calls bench_calls_user_punt = {
	.name = "user-punt",
	.setup = punt_setup,
	.enter = nowait_enter,
	.reg = nowait_register,
};

/*
 * Was this engine (or its punt flavour) chosen with --engine? A workload
 * with flavours checks ctx->flavour too (bench_ctx_has_flavour()).
 */
bool bench_ctx_has(const struct bench_ctx *ctx, const struct t_calls *eng)
{
	int i;

	if (eng == &bench_calls_user_punt)
		eng = &t_calls_user;
	for (i = 0; i < ctx->nr_engines; i++)
		if (ctx->engines[i] == eng)
			return true;
	return false;
}

/*
 * Is the floor `name` (floor, epoll, pread, preadv2, libuv, minimal: no
 * engine of io_uring's, the yardstick next to the user engine) to be
 * measured?
 * When both engines are (the default), or when named with --engine.
 */
bool bench_ctx_has_floor(const struct bench_ctx *ctx, const char *name)
{
	if (ctx->flavour)
		return !strcmp(ctx->flavour, name);
	return ctx->nr_engines == BENCH_MAX_ENGINES;
}

/* Is the flavour `name` of engine `eng` to be measured? */
bool bench_ctx_has_flavour(const struct bench_ctx *ctx,
			   const struct t_calls *eng, const char *name)
{
	if (ctx->flavour)
		return !strcmp(ctx->flavour, name);
	return bench_ctx_has(ctx, eng);
}

/* Copy what the hot paths read out of the mapping. */
static void ring_point(struct bench_ring *r)
{
	const struct t_ring *m = &r->map;

	r->sq_khead = m->sq_head;
	r->sq_ktail = m->sq_tail;
	r->sq_array = m->sq_array;
	r->sq_mask = *m->sq_mask;
	r->sq_entries = *m->sq_entries;
	r->sqe_head = r->sqe_tail = *r->sq_ktail;
	r->sqes = m->sqes;

	r->cq_khead = m->cq_head;
	r->cq_ktail = m->cq_tail;
	r->cq_mask = *m->cq_mask;
	r->cq_entries = *m->cq_entries;
	r->cqes = m->cqes;
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
int bench_ring_open(struct bench_ring *r, const struct t_calls *eng,
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
	err = t_ring_map_apart(&r->map, fd, &p);
	if (err) {
		bench_ring_close(r);
		return err;
	}
	ring_point(r);
	r->err_op = NULL;
	return 0;
}

void bench_ring_close(struct bench_ring *r)
{
	t_ring_unmap(&r->map);
	if (r->fd >= 0)
		close(r->fd);
	r->sqes = NULL;
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

/* The preload library next to /proc/self/exe (hackbench, liburing). */
int bench_preload_path(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return -errno;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	if ((size_t)snprintf(out, len, "%s/libnowait-preload.so", exe) >= len)
		return -ENAMETOOLONG;
	return access(out, R_OK) ? -errno : 0;
}
