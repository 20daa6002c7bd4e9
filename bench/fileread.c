/* SPDX-License-Identifier: MIT */
/*
 * Workload "fileread": 4 KiB reads at random 4 KiB-aligned offsets of a
 * file that is in the page cache, `depth` of them in flight, by four
 * engines in one run on the same file and the same offsets:
 *   kernel  the kernel's io_uring: IORING_OP_READ on a ring
 *   user    nowait, the same ring code (regular-file reads are tried with
 *           RWF_NOWAIT first, so cached data completes inline)
 *   libuv   uv_fs_read() on a uv loop with `depth` requests outstanding:
 *           libuv's thread pool (UV_THREADPOOL_SIZE, default 4 threads;
 *           UV_USE_IO_URING=0 for a libuv that would use io_uring instead)
 *   pread   a plain synchronous pread() loop, one read at a time
 *   preadv2 the system call nowait makes per read, in a bare loop: one
 *           preadv2() of one iovec with RWF_NOWAIT (the kernel's vectored
 *           path costs more than pread64's), into the same buffer as pread
 * A ring round submits every free slot and waits for one CQE, then reaps
 * all there are. Every read must return 4096 bytes and the block number
 * the file holds there. The file (`size` MiB in $TMPDIR, else /tmp) is
 * written, unlinked at once (so it goes at exit, however that comes) and
 * read through once to have it all cached; in --smoke mode it is 16 MiB at
 * most. libuv, pread and preadv2 run with --engine=both (the default)
 * only, or alone when named. libuv is measured only when the bench was built with it
 * (HAVE_LIBUV, libuv1-dev), and reported as skipped otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#ifdef HAVE_LIBUV
#include <uv.h>
#endif

#include "bench.h"

static long fr_depth = 32;
static long fr_size_mib = 256;

static const struct bench_param fr_params[] = {
	{"depth", 'd', "reads in flight (rings, libuv)", &fr_depth},
	{"size", 's', "file size in MiB", &fr_size_mib},
	{NULL, 0, NULL, NULL},
};

#define FR_BS	     4096
#define FR_CHUNK     (1U << 20) /* write and warm-up I/O size */
#define FR_SMOKE_MIB 16
#define FR_MAX_DEPTH 4096

enum { FR_KERNEL, FR_USER, FR_LIBUV, FR_PREAD, FR_PREADV2, FR_NR };

static const char *const fr_names[FR_NR] = {"kernel", "user", "libuv", "pread",
					    "preadv2"};

/* The file and what one engine's measurement needs. */
struct fr_run {
	const struct bench_ctx *ctx;
	int fd;
	uint64_t blocks;
	unsigned int depth;
	uint64_t rng;
	unsigned char *bufs; /* depth blocks */
	uint64_t *offs;	     /* the offset each slot reads */
	unsigned int *free;  /* free slots, a stack */
	unsigned int nr_free;
	uint64_t done;
	double end; /* bench_now() */
	double iops;
	const char *setup;
	const char *err_op;
	int err;
	bool skipped;
};

static int fr_fail(struct fr_run *fr, const char *op, int err)
{
	if (!fr->err) {
		fr->err_op = op;
		fr->err = err;
	}
	return err;
}

/* xorshift64*: the same sequence of offsets for every engine. */
static uint64_t fr_next_off(struct fr_run *fr)
{
	uint64_t x = fr->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	fr->rng = x;
	return (x * 0x2545F4914F6CDD1DULL) % fr->blocks * FR_BS;
}

/* Each block starts with its own number. */
static int fr_check(struct fr_run *fr, const unsigned char *buf, long res,
		    uint64_t off)
{
	uint64_t blk;

	if (res != FR_BS)
		return fr_fail(fr, "read", res < 0 ? (int)res : -EPROTO);
	memcpy(&blk, buf, sizeof(blk));
	if (blk != off / FR_BS)
		return fr_fail(fr, "read data", -EPROTO);
	return 0;
}

/* ---- the file ---- */

static int fr_tmpfile(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "%s/nowait-bench-fileread.XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

/* Write the file, then read it through once so that it is all cached. */
static int fr_fill(struct fr_run *fr, unsigned char *chunk)
{
	uint64_t off, b, size = fr->blocks * FR_BS;
	ssize_t n;

	for (off = 0; off < size; off += FR_CHUNK) {
		for (b = 0; b < FR_CHUNK / FR_BS; b++) {
			uint64_t blk = off / FR_BS + b;

			memcpy(chunk + b * FR_BS, &blk, sizeof(blk));
		}
		n = pwrite(fr->fd, chunk, FR_CHUNK, (off_t)off);
		if (n != FR_CHUNK)
			return fr_fail(fr, "write the file",
				       n < 0 ? -errno : -ENOSPC);
	}
	for (off = 0; off < size; off += FR_CHUNK) {
		n = pread(fr->fd, chunk, FR_CHUNK, (off_t)off);
		if (n != FR_CHUNK)
			return fr_fail(fr, "read the file",
				       n < 0 ? -errno : -EIO);
	}
	return 0;
}

static int fr_file(struct fr_run *fr, long mib)
{
	unsigned char *chunk;
	int ret;

	fr->fd = fr_tmpfile();
	if (fr->fd < 0)
		return fr_fail(fr, "create the file", fr->fd);
	fr->blocks = (uint64_t)mib * (1U << 20) / FR_BS;
	chunk = malloc(FR_CHUNK);
	if (!chunk)
		return fr_fail(fr, "malloc", -ENOMEM);
	ret = fr_fill(fr, chunk);
	free(chunk);
	return ret;
}

/* ---- the rings: kernel and user ---- */

static void fr_ring_prep(struct fr_run *fr, struct bench_ring *r)
{
	struct io_uring_sqe *sqe;
	unsigned int slot;

	while (fr->nr_free) {
		sqe = bench_get_sqe(r);
		if (!sqe)
			break;
		slot = fr->free[--fr->nr_free];
		fr->offs[slot] = fr_next_off(fr);
		bench_prep_rw(sqe, IORING_OP_READ, fr->fd,
			      fr->bufs + (size_t)slot * FR_BS, FR_BS,
			      fr->offs[slot], slot);
	}
}

static int fr_ring_reap(struct fr_run *fr, struct bench_ring *r)
{
	unsigned int head, n, k, slot;
	struct io_uring_cqe *cqe;

	n = bench_cq_ready(r, &head);
	for (k = 0; k < n; k++) {
		cqe = bench_cqe_at(r, head + k);
		slot = (unsigned int)cqe->user_data;
		if (cqe->user_data >= fr->depth)
			return fr_fail(fr, "CQE user_data", -EPROTO);
		if (fr_check(fr, fr->bufs + (size_t)slot * FR_BS, cqe->res,
			     fr->offs[slot]))
			return fr->err;
		fr->free[fr->nr_free++] = slot;
	}
	bench_cq_advance(r, n);
	fr->done += n;
	return 0;
}

/* Keep every slot busy until the time is up, then wait for the rest. */
static int fr_ring_loop(struct fr_run *fr, struct bench_ring *r)
{
	unsigned int to_submit, unsubmitted = 0;
	bool stopping = false;
	int ret;

	for (;;) {
		stopping = stopping || bench_now() >= fr->end;
		if (!stopping)
			fr_ring_prep(fr, r);
		else if (fr->nr_free == fr->depth)
			break; /* nothing queued or in flight */
		to_submit = unsubmitted + bench_flush_sq(r);
		ret = bench_enter(r, to_submit, 1, 0);
		if (ret == -EINTR)
			ret = 0;
		if (ret < 0)
			return fr_fail(fr, "io_uring_enter", ret);
		unsubmitted = to_submit - (unsigned int)ret;
		if (fr_ring_reap(fr, r))
			return fr->err;
	}
	return 0;
}

static int fr_ring(struct fr_run *fr, const struct t_calls *eng)
{
	const struct bench_ctx *ctx = fr->ctx;
	struct bench_ring r;
	double t0;
	int ret;

	ret = bench_ring_open(&r, eng, fr->depth,
			      ctx->plain_setup ? 0 : 2 * fr->depth,
			      ctx->plain_setup ? 0 : BENCH_FAST_FLAGS);
	if (ret) {
		fr->skipped = bench_setup_error_is_skip(eng, ret);
		return fr_fail(fr, r.err_op, ret);
	}
	fr->setup = bench_setup_name(r.flags);
	t0 = bench_now();
	fr->end = t0 + ctx->seconds;
	ret = fr_ring_loop(fr, &r);
	fr->iops = fr->done / (bench_now() - t0);
	bench_ring_close(&r);
	return ret;
}

/* ---- libuv's thread pool ---- */

#ifdef HAVE_LIBUV
struct fr_uv {
	struct fr_run *fr;
	uv_loop_t loop;
	uv_fs_t *reqs;
};

static void fr_uv_done(uv_fs_t *req);

static int fr_uv_issue(struct fr_uv *u, unsigned int slot)
{
	struct fr_run *fr = u->fr;
	uv_buf_t buf =
		uv_buf_init((char *)fr->bufs + (size_t)slot * FR_BS, FR_BS);
	int ret;

	fr->offs[slot] = fr_next_off(fr);
	u->reqs[slot].data = u;
	ret = uv_fs_read(&u->loop, &u->reqs[slot], fr->fd, &buf, 1,
			 (int64_t)fr->offs[slot], fr_uv_done);
	return ret ? fr_fail(fr, "uv_fs_read", ret) : 0;
}

static void fr_uv_done(uv_fs_t *req)
{
	struct fr_uv *u = req->data;
	struct fr_run *fr = u->fr;
	unsigned int slot = (unsigned int)(req - u->reqs);
	long res = (long)req->result;

	uv_fs_req_cleanup(req);
	if (fr_check(fr, fr->bufs + (size_t)slot * FR_BS, res, fr->offs[slot]))
		return;
	fr->done++;
	if (!fr->err && bench_now() < fr->end)
		fr_uv_issue(u, slot);
}

static int fr_libuv(struct fr_run *fr)
{
	struct fr_uv u = {.fr = fr};
	unsigned int i;
	double t0;
	int ret;

	/* libuv >= 1.45 reads files through io_uring unless told not to */
	setenv("UV_USE_IO_URING", "0", 0);
	u.reqs = calloc(fr->depth, sizeof(*u.reqs));
	if (!u.reqs)
		return fr_fail(fr, "calloc", -ENOMEM);
	ret = uv_loop_init(&u.loop);
	if (ret) {
		free(u.reqs);
		return fr_fail(fr, "uv_loop_init", ret);
	}
	t0 = bench_now();
	fr->end = t0 + fr->ctx->seconds;
	for (i = 0; i < fr->depth && !fr->err; i++)
		fr_uv_issue(&u, i);
	uv_run(&u.loop, UV_RUN_DEFAULT);
	fr->iops = fr->done / (bench_now() - t0);
	ret = uv_loop_close(&u.loop);
	free(u.reqs);
	if (ret && !fr->err)
		fr_fail(fr, "uv_loop_close", ret);
	return fr->err;
}
#else
static int fr_libuv(struct fr_run *fr)
{
	fr->skipped = true;
	return fr_fail(fr, "skipped: built without libuv (libuv1-dev)",
		       -EOPNOTSUPP);
}
#endif

/* ---- a plain pread() loop, and nowait's own system call in one ---- */

static ssize_t fr_read_one(struct fr_run *fr, bool vectored, uint64_t off)
{
	struct iovec iov = {.iov_base = fr->bufs, .iov_len = FR_BS};

	if (vectored)
		return preadv2(fr->fd, &iov, 1, (off_t)off, RWF_NOWAIT);
	return pread(fr->fd, fr->bufs, FR_BS, (off_t)off);
}

static int fr_pread(struct fr_run *fr, bool vectored)
{
	double t0 = bench_now(), now = t0;
	uint64_t off, i;
	ssize_t n;

	fr->end = t0 + fr->ctx->seconds;
	for (i = 0;; i++) {
		if (!(i & 63) && (now = bench_now()) >= fr->end)
			break;
		off = fr_next_off(fr);
		n = fr_read_one(fr, vectored, off);
		if (fr_check(fr, fr->bufs, n < 0 ? -errno : n, off))
			return fr->err;
		fr->done++;
	}
	fr->iops = fr->done / (now - t0);
	return 0;
}

/* ---- driver ---- */

static int fr_alloc(struct fr_run *fr)
{
	fr->bufs = aligned_alloc(FR_BS, (size_t)fr->depth * FR_BS);
	fr->offs = calloc(fr->depth, sizeof(*fr->offs));
	fr->free = calloc(fr->depth, sizeof(*fr->free));
	if (!fr->bufs || !fr->offs || !fr->free)
		return fr_fail(fr, "malloc", -ENOMEM);
	return 0;
}

/* Ready for the next engine: same offsets, every slot free. */
static void fr_reset(struct fr_run *fr)
{
	unsigned int i;

	fr->rng = 0x9E3779B97F4A7C15ULL;
	for (i = 0; i < fr->depth; i++)
		fr->free[i] = fr->depth - 1 - i;
	fr->nr_free = fr->depth;
	fr->done = 0;
	fr->iops = 0;
	fr->setup = NULL;
	fr->err_op = NULL;
	fr->err = 0;
	fr->skipped = false;
}

static int fr_measure(struct fr_run *fr, int e)
{
	switch (e) {
	case FR_KERNEL:
		return fr_ring(fr, &t_calls_kernel);
	case FR_USER:
		return fr_ring(fr, &t_calls_user);
	case FR_LIBUV:
		return fr_libuv(fr);
	case FR_PREAD:
		return fr_pread(fr, false);
	default:
		return fr_pread(fr, true);
	}
}

static void fr_report(const struct fr_run *fr, int e, long mib)
{
	if (fr->ctx->json) {
		bench_json_begin("fileread", fr_names[e]);
		bench_json_num("iops", fr->iops);
		bench_json_num("depth",
			       e >= FR_PREAD ? 1 : fr->depth); /* no ring */
		bench_json_num("file_mib", mib);
		if (fr->setup)
			bench_json_str("setup", fr->setup);
		bench_json_end();
		return;
	}
	printf("  %-8s %10.0f %9.0f", fr_names[e], fr->iops,
	       fr->iops * FR_BS / (1 << 20));
	if (fr->setup)
		printf("   setup %s", fr->setup);
	putchar('\n');
	fflush(stdout);
}

/*
 * Is engine e to be measured? libuv and pread are when both rings are
 * (--engine=both, the default), so that --engine=user runs nowait alone.
 */
static bool fr_wanted(const struct bench_ctx *ctx, int e)
{
	if (e == FR_KERNEL)
		return bench_ctx_has_flavour(ctx, &t_calls_kernel, "kernel");
	if (e == FR_USER)
		return bench_ctx_has_flavour(ctx, &t_calls_user, "user");
	return bench_ctx_has_floor(ctx, fr_names[e]);
}

static void fr_summary(const struct bench_ctx *ctx, const double *iops)
{
	bench_report_ratio_to(ctx, "fileread", NULL, "user/kernel",
			      iops[FR_USER], iops[FR_KERNEL]);
	bench_report_ratio_to(ctx, "fileread", NULL, "user/pread",
			      iops[FR_USER], iops[FR_PREAD]);
	bench_report_ratio_to(ctx, "fileread", NULL, "user/preadv2",
			      iops[FR_USER], iops[FR_PREADV2]);
	bench_report_ratio_to(ctx, "fileread", NULL, "user/libuv",
			      iops[FR_USER], iops[FR_LIBUV]);
}

static int fr_engines(struct fr_run *fr, long mib)
{
	const struct bench_ctx *ctx = fr->ctx;
	double iops[FR_NR] = {0};
	char what[64];
	int e, status = 0;

	for (e = 0; e < FR_NR; e++) {
		if (!fr_wanted(ctx, e))
			continue;
		fr_reset(fr);
		snprintf(what, sizeof(what), "fileread %s", fr_names[e]);
		bench_watchdog((unsigned int)ctx->seconds +
				       (ctx->smoke ? 20 : 120),
			       what);
		if (fr_measure(fr, e)) {
			bench_report_error(ctx, "fileread", fr_names[e],
					   fr->err_op, fr->err);
			status |= !fr->skipped;
		} else {
			iops[e] = fr->iops;
			fr_report(fr, e, mib);
		}
		bench_watchdog(0, NULL);
	}
	fr_summary(ctx, iops);
	return status;
}

static int fr_run(const struct bench_ctx *ctx)
{
	long mib = fr_size_mib;
	struct fr_run fr;
	int status;

	if (ctx->smoke && mib > FR_SMOKE_MIB)
		mib = FR_SMOKE_MIB;
	if (fr_depth > FR_MAX_DEPTH || mib > (1L << 20)) {
		fprintf(stderr,
			"nowait-bench fileread: depth at most %d, size at "
			"most 1 TiB\n",
			FR_MAX_DEPTH);
		return 1;
	}
	memset(&fr, 0, sizeof(fr));
	fr.ctx = ctx;
	fr.depth = (unsigned int)fr_depth;
	if (!ctx->json)
		printf("fileread: 4 KiB random reads of a cached %ld MiB file,"
		       " depth %u; %.1f s per engine\n"
		       "  %-8s %10s %9s\n",
		       mib, fr.depth, ctx->seconds, "engine", "IOPS", "MiB/s");
	bench_watchdog(ctx->smoke ? 20 : 300, "fileread: writing the file");
	if (fr_alloc(&fr) || fr_file(&fr, mib)) {
		bench_watchdog(0, NULL);
		bench_report_error(ctx, "fileread", "all", fr.err_op, fr.err);
		status = 1;
	} else {
		bench_watchdog(0, NULL);
		status = fr_engines(&fr, mib);
	}
	if (fr.fd > 0)
		close(fr.fd);
	free(fr.bufs);
	free(fr.offs);
	free(fr.free);
	return status;
}

const struct bench_workload bench_fileread = {
	.name = "fileread",
	.desc = "4 KiB random reads of a page-cached file: kernel, user, libuv,"
		" pread, preadv2 (IOPS)",
	.run = fr_run,
	.params = fr_params,
};
