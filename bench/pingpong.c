/* SPDX-License-Identifier: MIT */
/*
 * Workload "pingpong": two threads pass a 1-byte token back and forth over
 * a pair of pipes, each through its own ring, after the 2018 pipe busy-wait
 * RFC (spin before sleeping when the peer answers quickly):
 *   ping  [WRITE p1][READ p2] submitted together, waits for both CQEs
 *   pong  [READ p1] parked; when it completes: [WRITE p2][READ p1]
 * Each side sleeps in io_uring_enter(GETEVENTS) with a read parked on an
 * empty pipe, so the round-trip time is two wake-ups. Measured per round
 * trip on the ping side; the median is reported, and the process CPU time
 * over the wall time of the measurement (how much the spinning costs).
 * The user engine runs once per NOWAIT_SPIN_US value (read at ring set-up,
 * so the variable is set around the two set-ups only); the kernel once.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static long pp_rounds = 20000;

static const struct bench_param pp_params[] = {
	{"rounds", 'r', "round trips per variant", &pp_rounds},
	{NULL, 0, NULL, NULL},
};

#define PP_WARMUP    200
#define SMOKE_ROUNDS 300
#define UD_WRITE     1
#define UD_READ	     2

/* The user engine's variants: NOWAIT_SPIN_US values. */
static const char *const pp_spins[] = {"0", "5", "10", "adaptive"};

#define NR_PP_SPINS (int)(sizeof(pp_spins) / sizeof(pp_spins[0]))
#define PP_KERNEL   "none" /* the "spin" of the kernel's row */

/* One side of the ping-pong: its ring and the pipe ends it uses. */
struct pp_side {
	struct bench_ring ring;
	int rfd, wfd; /* reads rfd, writes wfd */
	unsigned char rbuf, wbuf;
	const char *err_op;
	int err;
};

struct pp_run {
	const struct bench_ctx *ctx;
	const struct t_calls *eng;
	struct pp_side ping, pong;
	int p1[2], p2[2];
	pthread_t pong_thr;
	int pong_ready; /* 1 set up, -1 failed (pong: release) */
	unsigned long rounds;
	double *rtt; /* ns per round trip, after the warm-up */
	double wall, cpu;
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

static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static int side_fail(struct pp_side *s, const char *op, int err)
{
	s->err_op = op;
	s->err = err;
	return err;
}

static int side_open(struct pp_run *pr, struct pp_side *s)
{
	const struct bench_ctx *ctx = pr->ctx;
	int ret;

	ret = bench_ring_open(&s->ring, pr->eng, 8, ctx->plain_setup ? 0 : 16,
			      ctx->plain_setup ? 0 : BENCH_FAST_FLAGS);
	if (ret)
		return side_fail(s, s->ring.err_op, ret);
	return 0;
}

static int side_queue(struct pp_side *s, int op, uint64_t ud)
{
	struct io_uring_sqe *sqe = bench_get_sqe(&s->ring);

	if (!sqe)
		return side_fail(s, "SQ ring full", -EOVERFLOW);
	if (op == IORING_OP_WRITE)
		bench_prep_rw(sqe, op, s->wfd, &s->wbuf, 1, 0, ud);
	else
		bench_prep_rw(sqe, op, s->rfd, &s->rbuf, 1, 0, ud);
	return 0;
}

/* Submit what is queued, waiting for `wait` CQEs; all must be taken. */
static int side_submit(struct pp_side *s, unsigned int wait)
{
	unsigned int n = bench_flush_sq(&s->ring);
	int ret = bench_enter(&s->ring, n, wait, 0);

	if (ret == -EINTR && !n)
		return 0;
	if (ret < 0)
		return side_fail(s, "io_uring_enter", ret);
	if ((unsigned int)ret != n)
		return side_fail(s, "io_uring_enter (short submit)", -EPROTO);
	return 0;
}

/*
 * Reap CQEs until the read completed (waiting in GETEVENTS for one at a
 * time); writes must have written their byte. Returns the read's result.
 */
static int side_reap_read(struct pp_side *s)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n, i;
	int ret, res = -EINPROGRESS;

	for (;;) {
		n = bench_cq_ready(&s->ring, &head);
		for (i = 0; i < n; i++) {
			cqe = bench_cqe_at(&s->ring, head + i);
			if (cqe->user_data == UD_READ)
				res = cqe->res;
			else if (cqe->res != 1)
				side_fail(s, "write completion",
					  cqe->res < 0 ? cqe->res : -EPROTO);
		}
		bench_cq_advance(&s->ring, n);
		if (s->err)
			return s->err;
		if (res != -EINPROGRESS)
			return res;
		ret = bench_enter(&s->ring, 0, 1, 0);
		if (ret < 0 && ret != -EINTR)
			return side_fail(s, "io_uring_enter", ret);
	}
}

/*
 * The pong thread: echo every byte until the ping side closes its end
 * (the read returns 0). On a failure it closes its write end so that the
 * ping side sees EOF instead of waiting forever.
 */
static void *pong_main(void *arg)
{
	struct pp_run *pr = arg;
	struct pp_side *s = &pr->pong;
	int ret;

	ret = side_open(pr, s);
	__atomic_store_n(&pr->pong_ready, ret ? -1 : 1, __ATOMIC_RELEASE);
	if (ret || side_queue(s, IORING_OP_READ, UD_READ) || side_submit(s, 0))
		goto out;
	for (;;) {
		ret = side_reap_read(s);
		if (ret == 0)
			break; /* the ping side is done */
		if (ret != 1) {
			side_fail(s, "read completion",
				  ret < 0 ? ret : -EPROTO);
			break;
		}
		s->wbuf = s->rbuf;
		if (side_queue(s, IORING_OP_WRITE, UD_WRITE) ||
		    side_queue(s, IORING_OP_READ, UD_READ) || side_submit(s, 2))
			break;
	}
out:
	close(s->wfd);
	s->wfd = -1;
	return NULL;
}

/* One round trip on the ping side; *ns its time. */
static int ping_round(struct pp_run *pr, unsigned long i, double *ns)
{
	struct pp_side *s = &pr->ping;
	uint64_t t0;
	int ret;

	s->wbuf = (unsigned char)i;
	t0 = now_ns();
	if (side_queue(s, IORING_OP_WRITE, UD_WRITE) ||
	    side_queue(s, IORING_OP_READ, UD_READ) || side_submit(s, 2))
		return s->err;
	ret = side_reap_read(s);
	*ns = now_ns() - t0;
	if (ret == 0)
		return side_fail(s, "pong thread",
				 pr->pong.err ? pr->pong.err : -EPIPE);
	if (ret < 0)
		return s->err ? s->err : side_fail(s, "read completion", ret);
	if (ret != 1 || s->rbuf != s->wbuf)
		return side_fail(s, "echoed token", -EPROTO);
	return 0;
}

static int ping_loop(struct pp_run *pr)
{
	unsigned long i, n = 0;
	double ns = 0, t0 = 0, c0 = 0;
	int ret;

	for (i = 0; i < pr->rounds + PP_WARMUP; i++) {
		if (i == PP_WARMUP) {
			c0 = cpu_seconds();
			t0 = bench_now();
		}
		ret = ping_round(pr, i, &ns);
		if (ret)
			return ret;
		if (i >= PP_WARMUP)
			pr->rtt[n++] = ns;
	}
	pr->wall = bench_now() - t0;
	pr->cpu = cpu_seconds() - c0;
	return 0;
}

/* Set NOWAIT_SPIN_US (spin != NULL) around the two set-ups. */
struct pp_env {
	char *saved;
	bool set;
};

static void env_set(struct pp_env *e, const char *spin)
{
	const char *old = getenv("NOWAIT_SPIN_US");

	e->saved = old ? strdup(old) : NULL;
	e->set = spin != NULL;
	if (spin)
		setenv("NOWAIT_SPIN_US", spin, 1);
}

static void env_restore(struct pp_env *e)
{
	if (!e->set)
		return;
	if (e->saved)
		setenv("NOWAIT_SPIN_US", e->saved, 1);
	else
		unsetenv("NOWAIT_SPIN_US");
	free(e->saved);
	e->saved = NULL;
	e->set = false;
}

static int pp_fail(struct pp_run *pr, const char *op, int err)
{
	pr->err_op = op;
	pr->err = err;
	return err;
}

/*
 * Both rings are set up by the threads that use them (SINGLE_ISSUER),
 * one after the other, with the variable set; then the loop runs.
 */
static int pp_measure(struct pp_run *pr, const char *spin)
{
	struct pp_env env;
	int ret, ready;

	pr->ping.rfd = pr->p2[0];
	pr->ping.wfd = pr->p1[1];
	pr->pong.rfd = pr->p1[0];
	pr->pong.wfd = pr->p2[1];
	env_set(&env, spin);
	ret = pthread_create(&pr->pong_thr, NULL, pong_main, pr);
	if (ret) {
		env_restore(&env);
		close(pr->ping.wfd);
		close(pr->pong.wfd);
		pr->ping.wfd = pr->pong.wfd = -1;
		return pp_fail(pr, "pthread_create", -ret);
	}
	while (!(ready = __atomic_load_n(&pr->pong_ready, __ATOMIC_ACQUIRE)))
		usleep(100);
	ret = ready < 0 ? pr->pong.err : side_open(pr, &pr->ping);
	env_restore(&env);
	if (ret) {
		close(pr->ping.wfd); /* the pong thread, if up, sees EOF */
		pr->ping.wfd = -1;
		pthread_join(pr->pong_thr, NULL);
		pr->skipped = bench_setup_error_is_skip(pr->eng, ret);
		bench_ring_close(&pr->ping.ring);
		bench_ring_close(&pr->pong.ring);
		if (ready < 0)
			return pp_fail(pr, pr->pong.err_op, ret);
		return pp_fail(pr, pr->ping.err_op, ret);
	}
	if (!bench_ring_has_op(&pr->ping.ring, IORING_OP_READ) ||
	    !bench_ring_has_op(&pr->ping.ring, IORING_OP_WRITE)) {
		pr->skipped = true;
		pp_fail(pr, "skipped: IORING_OP_READ/WRITE not supported",
			-EOPNOTSUPP);
		ret = pr->err;
	} else {
		ret = ping_loop(pr);
	}
	close(pr->ping.wfd); /* EOF: the pong thread stops */
	pr->ping.wfd = -1;
	pthread_join(pr->pong_thr, NULL);
	if (ret && !pr->err)
		pp_fail(pr, pr->ping.err_op, pr->ping.err);
	if (!ret && pr->pong.err)
		ret = pp_fail(pr, pr->pong.err_op, pr->pong.err);
	bench_ring_close(&pr->ping.ring);
	bench_ring_close(&pr->pong.ring);
	return ret;
}

static int pp_one(struct pp_run *pr, const char *spin)
{
	int ret;

	if (pipe2(pr->p1, O_CLOEXEC))
		return pp_fail(pr, "pipe2", -errno);
	if (pipe2(pr->p2, O_CLOEXEC)) {
		ret = -errno;
		close(pr->p1[0]);
		close(pr->p1[1]);
		return pp_fail(pr, "pipe2", ret);
	}
	ret = pp_measure(pr, spin);
	/* The write ends were closed by their sides. */
	close(pr->p1[0]);
	close(pr->p2[0]);
	return ret;
}

struct pp_result {
	bool ok;
	double rtt, cpu_ratio;
};

static void pp_report(const struct bench_ctx *ctx, const char *engine,
		      const char *spin, const struct pp_run *pr,
		      const struct bench_stats *st, double cpu_ratio)
{
	if (ctx->json) {
		bench_json_begin("pingpong", engine);
		bench_json_str("spin", spin);
		bench_json_num("rtt_ns", st->p50);
		bench_json_num("cpu_ratio", cpu_ratio);
		bench_json_num("avg_ns", st->avg);
		bench_json_num("p99_ns", st->p99);
		bench_json_num("rounds", st->count);
		bench_json_str("setup", bench_setup_name(pr->ping.ring.flags));
		bench_json_end();
		return;
	}
	printf("  %-8s %-9s %9.0f %9.0f %9.0f %9.2f   setup %s\n", engine, spin,
	       st->p50, st->avg, st->p99, cpu_ratio,
	       bench_setup_name(pr->ping.ring.flags));
	fflush(stdout);
}

/* One (engine, spin) measured and reported; 1 on a failure. */
static int pp_cell(const struct bench_ctx *ctx, const struct t_calls *eng,
		   const char *spin, struct pp_result *res)
{
	const char *label = spin ? spin : PP_KERNEL;
	struct bench_stats st;
	struct pp_run pr;
	char what[64];
	int ret;

	memset(&pr, 0, sizeof(pr));
	pr.ctx = ctx;
	pr.eng = eng;
	pr.ping.wfd = pr.pong.wfd = -1;
	pr.ping.ring.fd = pr.pong.ring.fd = -1;
	pr.rounds = ctx->smoke && pp_rounds > SMOKE_ROUNDS ? SMOKE_ROUNDS
							   : pp_rounds;
	pr.rtt = calloc(pr.rounds, sizeof(*pr.rtt));
	if (!pr.rtt) {
		bench_report_error_kv(ctx, "pingpong", eng->name, "spin", label,
				      "calloc", -ENOMEM);
		return 1;
	}
	snprintf(what, sizeof(what), "pingpong %s spin %s", eng->name, label);
	bench_watchdog(ctx->smoke ? 20 : 120, what);
	ret = pp_one(&pr, spin);
	bench_watchdog(0, NULL);
	if (ret) {
		bench_report_error_kv(ctx, "pingpong", eng->name, "spin", label,
				      pr.err_op, pr.err);
	} else {
		bench_stats(pr.rtt, pr.rounds, &st);
		res->ok = true;
		res->rtt = st.p50;
		res->cpu_ratio = pr.wall > 0 ? pr.cpu / pr.wall : 0;
		pp_report(ctx, eng->name, label, &pr, &st, res->cpu_ratio);
	}
	free(pr.rtt);
	return ret && !pr.skipped;
}

static void pp_summary(const struct bench_ctx *ctx,
		       const struct pp_result *user,
		       const struct pp_result *kernel)
{
	const struct pp_result *s0 = &user[0], *ad = &user[NR_PP_SPINS - 1];

	if (ctx->json && s0->ok && ad->ok)
		bench_report_ratio_to(ctx, "pingpong", NULL,
				      "adaptive/spin0 (median rtt)", ad->rtt,
				      s0->rtt);
	else if (s0->ok && ad->ok && s0->rtt > 0)
		printf("  adaptive / spin 0 (median rtt): %.2f   (want <= "
		       "0.30: %s)\n",
		       ad->rtt / s0->rtt,
		       ad->rtt <= 0.3 * s0->rtt ? "met" : "NOT MET");
	if (kernel->ok && ad->ok)
		bench_report_ratio_to(ctx, "pingpong", NULL,
				      "user/kernel (median rtt, adaptive)",
				      ad->rtt, kernel->rtt);
	fflush(stdout);
}

static int pp_run_all(const struct bench_ctx *ctx)
{
	struct pp_result user[NR_PP_SPINS], kernel;
	int i, status = 0;

	memset(user, 0, sizeof(user));
	memset(&kernel, 0, sizeof(kernel));
	if (!ctx->json)
		printf("pingpong: 1-byte token over two pipes, two threads, "
		       "%ld round trips; rtt ns\n"
		       "  %-8s %-9s %9s %9s %9s %9s\n",
		       ctx->smoke && pp_rounds > SMOKE_ROUNDS
			       ? (long)SMOKE_ROUNDS
			       : pp_rounds,
		       "engine", "spin_us", "rtt_p50", "avg", "p99",
		       "cpu/wall");
	if (bench_ctx_has(ctx, &t_calls_kernel))
		status |= pp_cell(ctx, &t_calls_kernel, NULL, &kernel);
	if (bench_ctx_has(ctx, &t_calls_user))
		for (i = 0; i < NR_PP_SPINS; i++)
			status |= pp_cell(ctx, &t_calls_user, pp_spins[i],
					  &user[i]);
	pp_summary(ctx, user, &kernel);
	return status;
}

const struct bench_workload bench_pingpong = {
	.name = "pingpong",
	.desc = "token round trip between two threads' rings over two pipes,"
		" by NOWAIT_SPIN_US (ns)",
	.run = pp_run_all,
	.params = pp_params,
};
