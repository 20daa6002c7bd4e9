/* SPDX-License-Identifier: MIT */
/*
 * Workload "nop": the bare cost of a request, in the shape of fio's
 * t/io_uring -N1. Keep `depth` NOPs in flight; each round prepares up to
 * `submit-batch` SQEs, makes one enter call that also waits for
 * `complete-batch` CQEs once that many are in flight, then reaps every CQE
 * there is and hands the CQ slots back once.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

static long nop_batch = 32;
static long nop_depth = 32;
static long nop_cbatch = 32;

static const struct bench_param nop_params[] = {
	{"submit-batch", 's', "NOP SQEs prepared per enter", &nop_batch},
	{"depth", 'd', "NOPs kept in flight", &nop_depth},
	{"complete-batch", 'c', "CQEs waited for per enter", &nop_cbatch},
	{NULL, 0, NULL, NULL},
};

struct nop_run {
	struct bench_ring ring;
	unsigned int batch, depth, cbatch;
	unsigned int inflight;
	uint64_t seq;	      /* user_data of the last NOP prepared */
	uint64_t pending_sum; /* sum of the user_data still in flight */
	uint64_t done;	      /* CQEs reaped */
	const char *err_op;
	int err;
	double ops_per_sec;
};

static int nop_fail(struct nop_run *nr, const char *op, int err)
{
	nr->err_op = op;
	nr->err = err;
	return err;
}

static unsigned int nop_prep(struct nop_run *nr)
{
	unsigned int want = nr->depth - nr->inflight, i;
	struct io_uring_sqe *sqe;

	if (want > nr->batch)
		want = nr->batch;
	for (i = 0; i < want; i++) {
		sqe = bench_get_sqe(&nr->ring);
		if (!sqe)
			break;
		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = IORING_OP_NOP;
		sqe->fd = -1;
		sqe->user_data = ++nr->seq;
		nr->pending_sum += nr->seq;
	}
	return i;
}

/* Reap every CQE there is; each must be one of ours and have res 0. */
static int nop_reap(struct nop_run *nr)
{
	struct bench_ring *r = &nr->ring;
	unsigned int head, n, i;
	struct io_uring_cqe *cqe;

	n = bench_cq_ready(r, &head);
	for (i = 0; i < n; i++) {
		cqe = bench_cqe_at(r, head + i);
		if (cqe->res != 0)
			return nop_fail(nr, "NOP completion",
					cqe->res < 0 ? cqe->res : -EPROTO);
		if (cqe->user_data == 0 || cqe->user_data > nr->seq)
			return nop_fail(nr, "NOP user_data", -EPROTO);
		nr->pending_sum -= cqe->user_data;
	}
	if (n > nr->inflight)
		return nop_fail(nr, "NOP completion count", -EPROTO);
	if (n)
		bench_cq_advance(r, n);
	nr->inflight -= n;
	nr->done += n;
	return 0;
}

/* One round: prepare, one enter, reap. */
static int nop_round(struct nop_run *nr)
{
	unsigned int to_submit, min_complete = 0;
	int ret;

	nop_prep(nr);
	to_submit = bench_flush_sq(&nr->ring);
	if (nr->inflight + to_submit >= nr->cbatch)
		min_complete = nr->cbatch;
	ret = bench_enter(&nr->ring, to_submit, min_complete, 0);
	if (ret < 0)
		return nop_fail(nr, "io_uring_enter", ret);
	if ((unsigned int)ret != to_submit)
		return nop_fail(nr, "io_uring_enter (short submit)", -EPROTO);
	nr->inflight += to_submit;
	return nop_reap(nr);
}

/* Wait for what is still in flight, then check nothing was lost. */
static int nop_drain(struct nop_run *nr)
{
	int ret;

	while (nr->inflight) {
		ret = bench_enter(&nr->ring, 0, nr->inflight, 0);
		if (ret < 0)
			return nop_fail(nr, "io_uring_enter", ret);
		ret = nop_reap(nr);
		if (ret)
			return ret;
	}
	if (nr->pending_sum != 0 || nr->done != nr->seq)
		return nop_fail(nr, "NOP completions (lost or duplicated)",
				-EPROTO);
	return 0;
}

static int nop_measure(struct nop_run *nr, double seconds)
{
	double start = bench_now(), end = start + seconds, now;
	unsigned long iter;
	int ret;

	for (iter = 0;; iter++) {
		/* a clock read is not free next to a user-engine round */
		if (!(iter & 15) && bench_now() >= end)
			break;
		ret = nop_round(nr);
		if (ret)
			return ret;
	}
	ret = nop_drain(nr);
	now = bench_now();
	nr->ops_per_sec = nr->done / (now - start);
	return ret;
}

static int nop_one(const struct bench_ctx *ctx, const struct t_calls *eng,
		   struct nop_run *nr)
{
	unsigned int flags = ctx->plain_setup ? 0 : BENCH_FAST_FLAGS;
	unsigned int cq_entries = ctx->plain_setup ? 0 : 2 * nr->depth;
	int ret;

	ret = bench_ring_open(&nr->ring, eng, nr->depth, cq_entries, flags);
	if (ret)
		return nop_fail(nr, nr->ring.err_op, ret);
	if (nr->batch > nr->ring.sq_entries)
		nr->batch = nr->ring.sq_entries;
	ret = nop_measure(nr, ctx->seconds);
	bench_ring_close(&nr->ring);
	return ret;
}

static void nop_report(const struct bench_ctx *ctx, const struct nop_run *nr,
		       const char *engine)
{
	const char *setup = bench_setup_name(nr->ring.flags);

	if (ctx->json) {
		bench_json_begin("nop", engine);
		bench_json_num("ops_per_sec", nr->ops_per_sec);
		bench_json_num("batch", nr->batch);
		bench_json_num("depth", nr->depth);
		bench_json_num("complete_batch", nr->cbatch);
		bench_json_num("nops", (double)nr->done);
		bench_json_str("setup", setup);
		bench_json_end();
		return;
	}
	printf("  %-8s %9.2f M/s %9.1f ns/op   setup %s\n", engine,
	       nr->ops_per_sec / 1e6, 1e9 / nr->ops_per_sec, setup);
	fflush(stdout);
}

static void nop_init(struct nop_run *nr)
{
	memset(nr, 0, sizeof(*nr));
	nr->depth = nop_depth;
	nr->batch = nop_batch < nop_depth ? nop_batch : nop_depth;
	/* waiting for more than can be in flight would never return */
	nr->cbatch = nop_cbatch < nop_depth ? nop_cbatch : nop_depth;
}

/* The engines in order; the minimal loop is a floor (no base). */
static const struct {
	const struct t_calls *eng, *base;
} nop_engines[] = {
	{&t_calls_kernel, &t_calls_kernel},
	{&t_calls_user, &t_calls_user},
	{&bench_calls_minimal, NULL},
};

#define NR_NOP_ENGINES (int)(sizeof(nop_engines) / sizeof(nop_engines[0]))

static int nop_run(const struct bench_ctx *ctx)
{
	double ops[NR_NOP_ENGINES] = {0};
	struct nop_run nr;
	int i, ret, status = 0;

	nop_init(&nr);
	if (!ctx->json)
		printf("nop: submit batch %u, depth %u, complete batch %u, "
		       "%.1f s per engine\n",
		       nr.batch, nr.depth, nr.cbatch, ctx->seconds);
	for (i = 0; i < NR_NOP_ENGINES; i++) {
		const struct t_calls *eng = nop_engines[i].eng;

		if (nop_engines[i].base
			    ? !bench_ctx_has_flavour(ctx, nop_engines[i].base,
						     eng->name)
			    : !bench_ctx_has_floor(ctx, eng->name))
			continue;
		nop_init(&nr);
		ret = nop_one(ctx, eng, &nr);
		if (ret) {
			bench_report_error(ctx, "nop", eng->name, nr.err_op,
					   nr.err);
			if (nr.ring.err_op == NULL ||
			    !bench_setup_error_is_skip(eng, ret))
				status = 1;
			continue;
		}
		nop_report(ctx, &nr, eng->name);
		ops[i] = nr.ops_per_sec;
	}
	bench_report_ratio_to(ctx, "nop", NULL, "user/kernel", ops[1], ops[0]);
	bench_report_ratio_to(ctx, "nop", NULL, "user/minimal", ops[1], ops[2]);
	return status;
}

const struct bench_workload bench_nop = {
	.name = "nop",
	.desc = "NOP requests, fio t/io_uring -N1 style (ops/s)",
	.run = nop_run,
	.params = nop_params,
};
