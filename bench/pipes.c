/* SPDX-License-Identifier: MIT */
/*
 * Workload "pipes": the benchmark of Jens Axboe's "Add FMODE_NOWAIT support
 * to pipes" (2023) re-created. One ring, `pipes` blocking pipes; a round
 * queues a `size`-byte read on every read end and writes `size` bytes to
 * every write end with write(2) from the same thread, then waits for all
 * the read completions. Variant "empty" submits the reads before the
 * writes, "data" writes first. A run is `rounds` rounds, timed in ms;
 * `runs` runs, the first discarded; Avg/Stdev/Min/Max as the patch gave.
 *
 * Engines: kernel, kernel-async (IOSQE_ASYNC on the reads: io-wq), user,
 * user-async (IOSQE_ASYNC: nowait's workers), user-punt (nowait with
 * nowait-first issue off, the "before the patch" shape) and floor: no
 * ring, the system calls nowait's engine makes per read in a bare loop
 * (strace -f -c of the user engine): for "data" one RWF_NOWAIT preadv2
 * that reads, for "empty" first the RWF_NOWAIT attempt that finds the
 * pipe empty (EAGAIN), then after the writes the preadv2 that reads. The
 * writes are the workload's own, the same for every engine. What the
 * engine makes per round on top is its overhead over the floor: on a
 * plain ring (--flags=none) the epoll_pwait2 that learns the pipes
 * became readable; on the default DEFER_TASKRUN ring none, as the
 * "empty" reads park unwatched and GETEVENTS tries them again
 * (src/pollverify.c), but the fstat of the wait's ring lookup.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/uio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static long pipes_nr = 128;
static long pipes_rounds = 256;
static long pipes_runs = 10;
static long pipes_size = 16;

static const struct bench_param pipes_params[] = {
	{"pipes", 'p', "pipes, one read each per round", &pipes_nr},
	{"rounds", 'r', "rounds per run", &pipes_rounds},
	{"runs", 'n', "runs (the first is discarded)", &pipes_runs},
	{"size", 'b', "bytes read and written per pipe and round", &pipes_size},
	{NULL, 0, NULL, NULL},
};

#define SMOKE_ROUNDS 8
#define SMOKE_RUNS   3
#define PIPES_MIN_SQ 256

struct pipes_engine {
	const char *name;
	const struct t_calls *eng;
	bool async; /* IOSQE_ASYNC on the reads */
};

static const struct pipes_engine pipes_engines[] = {
	{"kernel", &t_calls_kernel, false},
	{"kernel-async", &t_calls_kernel, true},
	{"user", &t_calls_user, false},
	{"user-async", &t_calls_user, true},
	{"user-punt", &bench_calls_user_punt, false},
	{"floor", NULL, false}, /* no ring: the user engine's system calls */
};

#define NR_PIPES_ENGINES (int)(sizeof(pipes_engines) / sizeof(pipes_engines[0]))

static const char *const pipes_variants[] = {"empty", "data"};

enum {
	ENG_KERNEL,
	ENG_KERNEL_ASYNC,
	ENG_USER,
	ENG_USER_ASYNC,
	ENG_PUNT,
	ENG_FLOOR
};

struct pipes_run {
	struct bench_ring ring;
	int (*fds)[2];
	char *rbuf; /* pipes * size: where read i lands */
	char *wbuf; /* size bytes to write */
	unsigned int npipes, size, rounds, runs;
	bool data;  /* variant "data": writes before the reads */
	bool async; /* IOSQE_ASYNC on the reads */
	bool floor; /* no ring: floor_round() */
	double *ms; /* time of each run */
	const char *err_op;
	int err;
	bool skipped; /* engine lacks IORING_OP_READ, or no io_uring */
};

static int pipes_fail(struct pipes_run *pr, const char *op, int err)
{
	pr->err_op = op;
	pr->err = err;
	return err;
}

static int pipes_open(struct pipes_run *pr)
{
	unsigned int i;

	for (i = 0; i < pr->npipes; i++)
		pr->fds[i][0] = pr->fds[i][1] = -1;
	for (i = 0; i < pr->npipes; i++)
		if (pipe2(pr->fds[i], 0))
			return pipes_fail(pr, "pipe2", -errno);
	return 0;
}

static void pipes_close(struct pipes_run *pr)
{
	unsigned int i;

	for (i = 0; i < pr->npipes; i++) {
		if (pr->fds[i][0] >= 0)
			close(pr->fds[i][0]);
		if (pr->fds[i][1] >= 0)
			close(pr->fds[i][1]);
	}
}

/* One write(2) of `size` bytes to every pipe; byte 0 tags pipe and round. */
static int pipes_write_all(struct pipes_run *pr, unsigned int round)
{
	unsigned int i;
	ssize_t n;

	for (i = 0; i < pr->npipes; i++) {
		pr->wbuf[0] = (char)(i + round);
		n = write(pr->fds[i][1], pr->wbuf, pr->size);
		if (n != (ssize_t)pr->size)
			return pipes_fail(pr, "write", n < 0 ? -errno : -EIO);
	}
	return 0;
}

static int pipes_queue_reads(struct pipes_run *pr)
{
	struct io_uring_sqe *sqe;
	unsigned int i;

	for (i = 0; i < pr->npipes; i++) {
		sqe = bench_get_sqe(&pr->ring);
		if (!sqe)
			return pipes_fail(pr, "SQ ring full", -EOVERFLOW);
		/* offset 0, as the original: a pipe has no position */
		bench_prep_rw(sqe, IORING_OP_READ, pr->fds[i][0],
			      pr->rbuf + (size_t)i * pr->size, pr->size, 0, i);
		if (pr->async)
			sqe->flags |= IOSQE_ASYNC;
	}
	return 0;
}

/* Reap `n` read completions, waiting when there are none. */
static int pipes_reap(struct pipes_run *pr, unsigned int n, unsigned int round)
{
	struct bench_ring *r = &pr->ring;
	unsigned int head, ready, i, got = 0;
	struct io_uring_cqe *cqe;
	int ret;

	while (got < n) {
		ready = bench_cq_ready(r, &head);
		if (!ready) {
			ret = bench_enter(r, 0, n - got, 0);
			if (ret < 0 && ret != -EINTR)
				return pipes_fail(pr, "io_uring_enter", ret);
			continue;
		}
		for (i = 0; i < ready; i++) {
			cqe = bench_cqe_at(r, head + i);
			if (cqe->user_data >= pr->npipes)
				return pipes_fail(pr, "read user_data",
						  -EPROTO);
			if (cqe->res != (int)pr->size)
				return pipes_fail(pr, "read completion",
						  cqe->res < 0 ? cqe->res
							       : -EPROTO);
			if (pr->rbuf[cqe->user_data * pr->size] !=
			    (char)(cqe->user_data + round))
				return pipes_fail(pr, "read data", -EPROTO);
		}
		bench_cq_advance(r, ready);
		got += ready;
	}
	return 0;
}

static int pipes_round(struct pipes_run *pr, unsigned int round)
{
	unsigned int n;
	int ret;

	if (pr->data && pipes_write_all(pr, round))
		return pr->err;
	if (pipes_queue_reads(pr))
		return pr->err;
	n = bench_flush_sq(&pr->ring);
	/* with data there, submit and wait in one call */
	ret = bench_enter(&pr->ring, n, pr->data ? n : 0, 0);
	if (ret < 0)
		return pipes_fail(pr, "io_uring_enter", ret);
	if ((unsigned int)ret != n)
		return pipes_fail(pr, "io_uring_enter (short submit)", -EPROTO);
	if (!pr->data && pipes_write_all(pr, round))
		return pr->err;
	return pipes_reap(pr, n, round);
}

/* One RWF_NOWAIT preadv2 per pipe, as the engine issues a read. */
static int floor_reads(struct pipes_run *pr, unsigned int round, bool full)
{
	struct iovec iov = {.iov_len = pr->size};
	unsigned int i;
	ssize_t n;

	for (i = 0; i < pr->npipes; i++) {
		iov.iov_base = pr->rbuf + (size_t)i * pr->size;
		n = preadv2(pr->fds[i][0], &iov, 1, -1, RWF_NOWAIT);
		if (!full && !(n < 0 && errno == EAGAIN))
			return pipes_fail(pr, "preadv2 (empty pipe)",
					  n < 0 ? -errno : -EPROTO);
		if (full && n != (ssize_t)pr->size)
			return pipes_fail(pr, "preadv2",
					  n < 0 ? -errno : -EPROTO);
		if (full && pr->rbuf[(size_t)i * pr->size] != (char)(i + round))
			return pipes_fail(pr, "read data", -EPROTO);
	}
	return 0;
}

/* The floor's round: the engine's system calls, no ring. */
static int floor_round(struct pipes_run *pr, unsigned int round)
{
	if (!pr->data && floor_reads(pr, round, false))
		return pr->err;
	if (pipes_write_all(pr, round))
		return pr->err;
	return floor_reads(pr, round, true);
}

static int pipes_measure(struct pipes_run *pr)
{
	unsigned int run, round;
	double start;
	int ret;

	for (run = 0; run < pr->runs; run++) {
		start = bench_now();
		for (round = 0; round < pr->rounds; round++) {
			ret = pr->floor ? floor_round(pr, round)
					: pipes_round(pr, round);
			if (ret)
				return ret;
		}
		pr->ms[run] = (bench_now() - start) * 1e3;
	}
	return 0;
}

/* One (variant, engine): ring, pipes, the runs. */
static int pipes_one(const struct bench_ctx *ctx, const struct pipes_engine *pe,
		     struct pipes_run *pr)
{
	unsigned int flags = ctx->plain_setup ? 0 : BENCH_FAST_FLAGS;
	unsigned int entries =
		pr->npipes > PIPES_MIN_SQ ? pr->npipes : PIPES_MIN_SQ;
	int ret;

	if (pr->floor) {
		ret = pipes_open(pr);
		if (!ret)
			ret = pipes_measure(pr);
		pipes_close(pr);
		return ret;
	}
	ret = bench_ring_open(&pr->ring, pe->eng, entries,
			      ctx->plain_setup ? 0 : 2 * entries, flags);
	if (ret) {
		pr->skipped = bench_setup_error_is_skip(pe->eng, ret);
		return pipes_fail(pr, pr->ring.err_op, ret);
	}
	if (!bench_ring_has_op(&pr->ring, IORING_OP_READ)) {
		pr->skipped = true;
		ret = pipes_fail(pr, "skipped: IORING_OP_READ not supported",
				 -EOPNOTSUPP);
	} else if (pr->ring.sq_entries < pr->npipes) {
		ret = pipes_fail(pr, "SQ ring smaller than --pipes", -E2BIG);
	} else {
		ret = pipes_open(pr);
		if (!ret)
			ret = pipes_measure(pr);
		pipes_close(pr);
	}
	bench_ring_close(&pr->ring);
	return ret;
}

static int pipes_init(const struct bench_ctx *ctx, struct pipes_run *pr)
{
	memset(pr, 0, sizeof(*pr));
	pr->npipes = pipes_nr;
	pr->size = pipes_size;
	pr->rounds = pipes_rounds;
	pr->runs = pipes_runs < 2 ? 2 : pipes_runs;
	if (ctx->smoke) {
		if (pr->rounds > SMOKE_ROUNDS)
			pr->rounds = SMOKE_ROUNDS;
		if (pr->runs > SMOKE_RUNS)
			pr->runs = SMOKE_RUNS;
	}
	pr->fds = calloc(pr->npipes, sizeof(*pr->fds));
	pr->rbuf = calloc(pr->npipes, pr->size);
	pr->wbuf = calloc(1, pr->size);
	pr->ms = calloc(pr->runs, sizeof(*pr->ms));
	if (!pr->fds || !pr->rbuf || !pr->wbuf || !pr->ms)
		return -ENOMEM;
	return 0;
}

static void pipes_free(struct pipes_run *pr)
{
	free(pr->fds);
	free(pr->rbuf);
	free(pr->wbuf);
	free(pr->ms);
}

static void pipes_report(const struct bench_ctx *ctx, const char *variant,
			 const char *engine, const struct bench_stats *st)
{
	if (ctx->json) {
		bench_json_begin("pipes", engine);
		bench_json_str("variant", variant);
		bench_json_num("avg_ms", st->avg);
		bench_json_num("stdev_ms", st->stdev);
		bench_json_num("min_ms", st->min);
		bench_json_num("max_ms", st->max);
		bench_json_num("runs", st->count);
		bench_json_end();
		return;
	}
	printf("  %-8s %-13s Avg %8.2f  Stdev %7.2f  Min %8.2f  Max %8.2f "
	       "msec\n",
	       variant, engine, st->avg, st->stdev, st->min, st->max);
	fflush(stdout);
}

/* "a/b" with a target: ok when a/b <= max (max > 0) or >= -max. */
static void pipes_ratio(const char *name, const double *a, const double *b,
			double want)
{
	char cell[2][16];
	bool ok = true, any = false;
	int v;

	for (v = 0; v < 2; v++) {
		if (!(a[v] > 0) || !(b[v] > 0)) {
			snprintf(cell[v], sizeof(cell[v]), "-");
			continue;
		}
		any = true;
		snprintf(cell[v], sizeof(cell[v]), "%.2fx", a[v] / b[v]);
		if (want > 0 ? a[v] / b[v] > want : a[v] / b[v] < -want)
			ok = false;
	}
	printf("  %-26s %9s %9s", name, cell[0], cell[1]);
	if (want && any)
		printf("   (want %s %gx: %s)",
		       want > 0 ? "<=" : ">=", want > 0 ? want : -want,
		       ok ? "met" : "NOT MET");
	putchar('\n');
}

/* avg[engine][variant] in ms, 0 when not measured. */
static void pipes_ratios(const struct bench_ctx *ctx, double avg[][2])
{
	int v;

	if (ctx->json) {
		for (v = 0; v < 2; v++) {
			bench_report_ratio_to(ctx, "pipes", pipes_variants[v],
					      "user/kernel", avg[ENG_USER][v],
					      avg[ENG_KERNEL][v]);
			bench_report_ratio_to(ctx, "pipes", pipes_variants[v],
					      "user/floor", avg[ENG_USER][v],
					      avg[ENG_FLOOR][v]);
		}
		return;
	}
	printf("  ratios of Avg %18s %9s\n", "empty", "data");
	pipes_ratio("user / kernel", avg[ENG_USER], avg[ENG_KERNEL], 1.5);
	pipes_ratio("user / floor", avg[ENG_USER], avg[ENG_FLOOR], 1.15);
	pipes_ratio("user-async / kernel-async", avg[ENG_USER_ASYNC],
		    avg[ENG_KERNEL_ASYNC], 0);
	pipes_ratio("kernel-async / kernel", avg[ENG_KERNEL_ASYNC],
		    avg[ENG_KERNEL], 0);
	pipes_ratio("user-punt / user", avg[ENG_PUNT], avg[ENG_USER], -6);
	fflush(stdout);
}

/* One (variant, engine) measured and reported; 1 on a failure. */
static int pipes_cell(const struct bench_ctx *ctx, struct pipes_run *pr, int v,
		      int e, double *avg)
{
	const struct pipes_engine *pe = &pipes_engines[e];
	struct bench_stats st;
	char what[64];
	int ret;

	pr->data = v == 1;
	pr->async = pe->async;
	pr->floor = !pe->eng;
	pr->skipped = false;
	snprintf(what, sizeof(what), "pipes %s %s", pipes_variants[v],
		 pe->name);
	bench_watchdog(ctx->smoke ? 20 : 120, what);
	ret = pipes_one(ctx, pe, pr);
	bench_watchdog(0, NULL);
	if (ret) {
		bench_report_error_kv(ctx, "pipes", pe->name, "variant",
				      pipes_variants[v], pr->err_op, pr->err);
		return pr->skipped ? 0 : 1;
	}
	/* the first run is always a bit slower: discarded */
	bench_stats(pr->ms + 1, pr->runs - 1, &st);
	pipes_report(ctx, pipes_variants[v], pe->name, &st);
	*avg = st.avg;
	return 0;
}

static int pipes_run(const struct bench_ctx *ctx)
{
	double avg[NR_PIPES_ENGINES][2] = {{0}};
	struct pipes_run pr;
	int v, e, status = 0;

	if (pipes_init(ctx, &pr)) {
		pipes_free(&pr);
		bench_report_error(ctx, "pipes", "-", "calloc", -ENOMEM);
		return 1;
	}
	if (!ctx->json)
		printf("pipes: %u pipes x %u rounds x %u bytes, %u runs "
		       "(first discarded), set-up %s\n",
		       pr.npipes, pr.rounds, pr.size, pr.runs,
		       ctx->plain_setup ? "none" : "defer");
	for (v = 0; v < 2; v++)
		for (e = 0; e < NR_PIPES_ENGINES; e++)
			if (pipes_engines[e].eng
				    ? bench_ctx_has_flavour(
					      ctx, pipes_engines[e].eng,
					      pipes_engines[e].name)
				    : bench_ctx_has_floor(
					      ctx, pipes_engines[e].name))
				status |=
					pipes_cell(ctx, &pr, v, e, &avg[e][v]);
	pipes_ratios(ctx, avg);
	pipes_free(&pr);
	return status;
}

const struct bench_workload bench_pipes = {
	.name = "pipes",
	.desc = "128 pipes x 256 rounds of 16-byte read+write (ms/run)",
	.run = pipes_run,
	.params = pipes_params,
};
