/* SPDX-License-Identifier: MIT */
/*
 * Workload "latency": the completion latency of a pipe read by the path it
 * took, after Olivier Langlois' "io_uring: reduce latency by reissueing the
 * operation" (2021):
 *   inline   data in the pipe at issue: write, then submit the read and wait
 *   reissue  a second thread writes right as the read is submitted, so that
 *            the data races in while the read is being parked; only the
 *            rounds in which the engine's reissue counter moved count
 *   worker   data in the pipe, IOSQE_ASYNC on the read (io-wq / workers)
 *   async    the read parks on an empty pipe; a second thread writes after
 *            `delay-us`; measured from that write to the reaped CQE
 * inline, reissue and worker are measured from the enter call to the reaped
 * CQE. The reissue path is only observable on the user engine.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nowait-hook.h>
#include "bench.h"

static long lat_rounds = 10000;
static long lat_race_rounds = 50000;
static long lat_delay_us = 50;
static long lat_race_ns = 4000;

static const struct bench_param lat_params[] = {
	{"rounds", 'r', "reads per path (inline, worker, async)", &lat_rounds},
	{"race-rounds", 'R', "reads raced by a writer (reissue)",
	 &lat_race_rounds},
	{"delay-us", 'd', "async: the write comes this long after the read",
	 &lat_delay_us},
	{"race-ns", 'w', "reissue: the write offset sweeps -this/2..this (ns)",
	 &lat_race_ns},
	{NULL, 0, NULL, NULL},
};

#define LAT_SIZE     16
#define LAT_WARMUP   64
#define SMOKE_ROUNDS 300
#define SMOKE_RACE   3000
#define RACE_STEPS   64
#define WRITER_STOP  (~0U)

/*
 * A smoke run starts no round after this long in a cell: on a loaded
 * machine (2 cores, many runnable tasks) each of the writer's hand-offs
 * may wait a time slice, and 3000 reissue rounds then outlast the 20 s
 * watchdog that is there to catch a hang, not a slow machine.
 */
#define SMOKE_BUDGET_NS 5000000000ULL

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ volatile("yield" ::: "memory")
#else
#define cpu_relax() __asm__ volatile("" ::: "memory")
#endif

/* The second thread: writes LAT_SIZE bytes once per `go`. */
struct lat_writer {
	pthread_t thr;
	int fd;
	unsigned int go;   /* sequence to write for (main: release) */
	unsigned int done; /* last sequence written (writer: release) */
	long delay_ns;	   /* spin this long after go, then write */
	uint64_t t_write;  /* clock at the write */
	int err;
};

struct lat_run {
	struct bench_ring ring;
	int fds[2];
	struct lat_writer w;
	bool has_writer;
	char buf[LAT_SIZE];
	double *lat; /* samples, ns */
	size_t n;
	unsigned long rounds, hits;
	uint64_t until_ns; /* start no round after this (0: no limit) */
	const char *err_op;
	int err;
	bool skipped;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Spin for ns nanoseconds. */
static void spin_ns(long ns)
{
	uint64_t until = now_ns() + ns;

	while (ns > 0 && now_ns() < until)
		cpu_relax();
}

static void *writer_main(void *arg)
{
	struct lat_writer *w = arg;
	char buf[LAT_SIZE] = {0};
	unsigned int seen = 0, go;

	for (;;) {
		while ((go = __atomic_load_n(&w->go, __ATOMIC_ACQUIRE)) == seen)
			cpu_relax();
		if (go == WRITER_STOP)
			return NULL;
		seen = go;
		spin_ns(w->delay_ns);
		w->t_write = now_ns();
		if (write(w->fd, buf, sizeof(buf)) != sizeof(buf))
			w->err = -errno ?: -EIO;
		__atomic_store_n(&w->done, go, __ATOMIC_RELEASE);
	}
}

/* Let the writer go for the next sequence number; returns it. */
static unsigned int writer_kick(struct lat_writer *w, long delay_ns)
{
	unsigned int go = w->go + 1;

	w->delay_ns = delay_ns;
	__atomic_store_n(&w->go, go, __ATOMIC_RELEASE);
	return go;
}

static int writer_wait(struct lat_writer *w, unsigned int go)
{
	while (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE) != go)
		cpu_relax();
	return w->err;
}

static int lat_fail(struct lat_run *lr, const char *op, int err)
{
	lr->err_op = op;
	lr->err = err;
	return err;
}

static int lat_fill(struct lat_run *lr)
{
	char buf[LAT_SIZE] = {0};

	if (write(lr->fds[1], buf, sizeof(buf)) != sizeof(buf))
		return lat_fail(lr, "write", -errno ?: -EIO);
	return 0;
}

/* Queue one read of the pipe and make the enter call. */
static int lat_submit(struct lat_run *lr, unsigned int sqe_flags,
		      unsigned int wait)
{
	struct io_uring_sqe *sqe = bench_get_sqe(&lr->ring);
	int ret;

	if (!sqe)
		return lat_fail(lr, "SQ ring full", -EOVERFLOW);
	bench_prep_rw(sqe, IORING_OP_READ, lr->fds[0], lr->buf, LAT_SIZE, 0, 1);
	sqe->flags |= sqe_flags;
	ret = bench_enter(&lr->ring, bench_flush_sq(&lr->ring), wait, 0);
	if (ret < 0)
		return lat_fail(lr, "io_uring_enter", ret);
	if (ret != 1)
		return lat_fail(lr, "io_uring_enter (short submit)", -EPROTO);
	return 0;
}

/* Wait for and reap the one read completion. */
static int lat_reap(struct lat_run *lr)
{
	struct io_uring_cqe *cqe;
	unsigned int head;
	int ret;

	while (!bench_cq_ready(&lr->ring, &head)) {
		ret = bench_enter(&lr->ring, 0, 1, 0);
		if (ret < 0 && ret != -EINTR)
			return lat_fail(lr, "io_uring_enter", ret);
	}
	cqe = bench_cqe_at(&lr->ring, head);
	ret = cqe->res;
	bench_cq_advance(&lr->ring, 1);
	if (ret != LAT_SIZE)
		return lat_fail(lr, "read completion", ret < 0 ? ret : -EPROTO);
	return 0;
}

/* inline and worker: data there; from the enter call to the reaped CQE. */
static int lat_ready_round(struct lat_run *lr, unsigned int sqe_flags,
			   double *ns)
{
	uint64_t t0;

	if (lat_fill(lr))
		return lr->err;
	t0 = now_ns();
	if (lat_submit(lr, sqe_flags, 1) || lat_reap(lr))
		return lr->err;
	*ns = now_ns() - t0;
	return 1;
}

static int lat_inline_round(struct lat_run *lr, unsigned long i, double *ns)
{
	return lat_ready_round(lr, 0, ns);
}

static int lat_worker_round(struct lat_run *lr, unsigned long i, double *ns)
{
	return lat_ready_round(lr, IOSQE_ASYNC, ns);
}

/*
 * reissue: the writer is let go just before the enter call. The offset
 * sweeps -race-ns/2..race-ns: positive, the writer waits that long;
 * negative, the submitter does, so that some writes land between the
 * engine's EAGAIN and the parking. A sample only when the engine's
 * reissue counter moved.
 */
static int lat_reissue_round(struct lat_run *lr, unsigned long i, double *ns)
{
	long off = lat_race_ns * 3 / 2 * (long)(i % RACE_STEPS) / RACE_STEPS -
		   lat_race_ns / 2;
	unsigned long before = nowait_hook_reissue_count();
	unsigned int go;
	uint64_t t0;

	go = writer_kick(&lr->w, off > 0 ? off : 0);
	spin_ns(-off);
	t0 = now_ns();
	if (lat_submit(lr, 0, 1) || lat_reap(lr))
		return lr->err;
	*ns = now_ns() - t0;
	if (writer_wait(&lr->w, go))
		return lat_fail(lr, "write (writer thread)", lr->w.err);
	if (nowait_hook_reissue_count() == before)
		return 0;
	return 1;
}

/* async: parked on an empty pipe; from the write to the reaped CQE. */
static int lat_async_round(struct lat_run *lr, unsigned long i, double *ns)
{
	unsigned int go;
	uint64_t t1;

	if (lat_submit(lr, 0, 0))
		return lr->err;
	go = writer_kick(&lr->w, lat_delay_us * 1000);
	if (lat_reap(lr))
		return lr->err;
	t1 = now_ns();
	if (writer_wait(&lr->w, go))
		return lat_fail(lr, "write (writer thread)", lr->w.err);
	*ns = t1 > lr->w.t_write ? (double)(t1 - lr->w.t_write) : 0;
	return 1;
}

struct lat_path {
	const char *name;
	int (*round)(struct lat_run *lr, unsigned long i, double *ns);
	bool writer;	/* needs the second thread */
	bool user_only; /* only observable on the user engine */
	bool race;	/* rounds: --race-rounds */
};

static const struct lat_path lat_paths[] = {
	{"inline", lat_inline_round, false, false, false},
	{"reissue", lat_reissue_round, true, true, true},
	{"worker", lat_worker_round, false, false, false},
	{"async", lat_async_round, true, false, false},
};

#define NR_LAT_PATHS (int)(sizeof(lat_paths) / sizeof(lat_paths[0]))

static int lat_loop(struct lat_run *lr, const struct lat_path *lp)
{
	unsigned long i;
	double ns;
	int ret;

	for (i = 0; i < lr->rounds + LAT_WARMUP; i++) {
		if (lr->until_ns && i > LAT_WARMUP && now_ns() > lr->until_ns) {
			lr->rounds = i - LAT_WARMUP; /* what was measured */
			break;
		}
		ret = lp->round(lr, i, &ns);
		if (ret < 0)
			return ret;
		if (i < LAT_WARMUP)
			continue;
		if (ret > 0) {
			lr->lat[lr->n++] = ns;
			lr->hits++;
		}
	}
	return 0;
}

static int lat_start_writer(struct lat_run *lr)
{
	int ret;

	memset(&lr->w, 0, sizeof(lr->w));
	lr->w.fd = lr->fds[1];
	ret = pthread_create(&lr->w.thr, NULL, writer_main, &lr->w);
	if (ret)
		return lat_fail(lr, "pthread_create", -ret);
	lr->has_writer = true;
	return 0;
}

static void lat_stop_writer(struct lat_run *lr)
{
	if (!lr->has_writer)
		return;
	__atomic_store_n(&lr->w.go, WRITER_STOP, __ATOMIC_RELEASE);
	pthread_join(lr->w.thr, NULL);
	lr->has_writer = false;
}

/* Pipe, writer and loop, on an open ring. */
static int lat_measure(struct lat_run *lr, const struct lat_path *lp)
{
	int ret;

	if (pipe2(lr->fds, 0))
		return lat_fail(lr, "pipe2", -errno);
	ret = lp->writer ? lat_start_writer(lr) : 0;
	if (!ret)
		ret = lat_loop(lr, lp);
	lat_stop_writer(lr);
	close(lr->fds[0]);
	close(lr->fds[1]);
	return ret;
}

static int lat_one(const struct bench_ctx *ctx, const struct t_calls *eng,
		   const struct lat_path *lp, struct lat_run *lr)
{
	unsigned int flags = ctx->plain_setup ? 0 : BENCH_FAST_FLAGS;
	int ret;

	ret = bench_ring_open(&lr->ring, eng, 8, ctx->plain_setup ? 0 : 16,
			      flags);
	if (ret) {
		lr->skipped = bench_setup_error_is_skip(eng, ret);
		return lat_fail(lr, lr->ring.err_op, ret);
	}
	if (!bench_ring_has_op(&lr->ring, IORING_OP_READ)) {
		lr->skipped = true;
		ret = lat_fail(lr, "skipped: IORING_OP_READ not supported",
			       -EOPNOTSUPP);
	} else {
		ret = lat_measure(lr, lp);
	}
	bench_ring_close(&lr->ring);
	return ret;
}

static void lat_report(const struct bench_ctx *ctx, const struct lat_path *lp,
		       const char *engine, const struct lat_run *lr,
		       const struct bench_stats *st)
{
	if (ctx->json) {
		bench_json_begin("latency", engine);
		bench_json_str("path", lp->name);
		bench_json_num("count", st->count);
		bench_json_num("avg_ns", st->avg);
		bench_json_num("min_ns", st->min);
		bench_json_num("max_ns", st->max);
		bench_json_num("stddev_ns", st->stdev);
		bench_json_num("p50_ns", st->p50);
		bench_json_num("p99_ns", st->p99);
		if (lp->race)
			bench_json_num("rounds", lr->rounds);
		bench_json_end();
		return;
	}
	if (!st->count)
		printf("  %-8s %-13s %7zu %9s", lp->name, engine, st->count,
		       "-");
	else
		printf("  %-8s %-13s %7zu %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f",
		       lp->name, engine, st->count, st->avg, st->min, st->max,
		       st->stdev, st->p50, st->p99);
	if (lp->race)
		printf("   (%lu of %lu rounds hit the reissue path)", lr->hits,
		       lr->rounds);
	putchar('\n');
	fflush(stdout);
}

static unsigned long lat_nr_rounds(const struct bench_ctx *ctx,
				   const struct lat_path *lp)
{
	unsigned long n = lp->race ? lat_race_rounds : lat_rounds;
	unsigned long cap = lp->race ? SMOKE_RACE : SMOKE_ROUNDS;

	return ctx->smoke && n > cap ? cap : n;
}

/* One (path, engine) measured and reported; 1 on a failure. */
static int lat_cell(const struct bench_ctx *ctx, const struct lat_path *lp,
		    const struct t_calls *eng, double *avg)
{
	struct bench_stats st;
	struct lat_run lr;
	char what[64];
	int ret;

	memset(&lr, 0, sizeof(lr));
	lr.rounds = lat_nr_rounds(ctx, lp);
	lr.lat = calloc(lr.rounds, sizeof(*lr.lat));
	if (!lr.lat) {
		bench_report_error(ctx, "latency", eng->name, "calloc",
				   -ENOMEM);
		return 1;
	}
	snprintf(what, sizeof(what), "latency %s %s", lp->name, eng->name);
	if (ctx->smoke)
		lr.until_ns = now_ns() + SMOKE_BUDGET_NS;
	bench_watchdog(ctx->smoke ? 20 : 120, what);
	ret = lat_one(ctx, eng, lp, &lr);
	bench_watchdog(0, NULL);
	if (ret) {
		bench_report_error_kv(ctx, "latency", eng->name, "path",
				      lp->name, lr.err_op, lr.err);
	} else {
		bench_stats(lr.lat, lr.n, &st);
		lat_report(ctx, lp, eng->name, &lr, &st);
		*avg = st.avg;
	}
	free(lr.lat);
	return ret && !lr.skipped;
}

static void lat_summary(const struct bench_ctx *ctx, double reissue,
			double worker)
{
	if (ctx->json || !bench_ctx_has(ctx, &t_calls_user))
		return;
	if (!(reissue > 0))
		printf("  user reissue path never taken: no ratio to worker\n");
	else if (worker > 0)
		printf("  user reissue / user worker (avg): %.2f   (want < "
		       "0.33:"
		       " %s)\n",
		       reissue / worker,
		       reissue * 3 < worker ? "met" : "NOT MET");
	fflush(stdout);
}

static int lat_run(const struct bench_ctx *ctx)
{
	static const struct t_calls *const engs[] = {&t_calls_kernel,
						     &t_calls_user};
	double avg[NR_LAT_PATHS][2] = {{0}};
	int p, e, status = 0;

	if (!ctx->json)
		printf("latency: %d-byte pipe read, ns; async write after %ld "
		       "us, reissue write offsets -%ld..%ld ns\n"
		       "  %-8s %-13s %7s %9s %9s %9s %9s %9s %9s\n",
		       LAT_SIZE, lat_delay_us, lat_race_ns / 2, lat_race_ns,
		       "path", "engine", "count", "avg", "min", "max", "stddev",
		       "p50", "p99");
	for (p = 0; p < NR_LAT_PATHS; p++)
		for (e = 0; e < 2; e++) {
			if (!bench_ctx_has(ctx, engs[e]))
				continue;
			if (lat_paths[p].user_only && e == 0)
				continue;
			status |= lat_cell(ctx, &lat_paths[p], engs[e],
					   &avg[p][e]);
		}
	lat_summary(ctx, avg[1][1], avg[2][1]);
	return status;
}

const struct bench_workload bench_latency = {
	.name = "latency",
	.desc = "pipe read completion latency by path: inline, reissue, "
		"worker, async (ns)",
	.run = lat_run,
	.params = lat_params,
};
