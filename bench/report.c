/* SPDX-License-Identifier: MIT */
/*
 * nowait-bench reporting: the clock, JSON lines (one object per workload,
 * variant and engine) and the human-readable error and ratio lines.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void json_quoted(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

void bench_json_begin(const char *bench, const char *engine)
{
	fputs("{\"bench\":", stdout);
	json_quoted(bench);
	fputs(",\"engine\":", stdout);
	json_quoted(engine);
}

void bench_json_str(const char *key, const char *val)
{
	putchar(',');
	json_quoted(key);
	putchar(':');
	json_quoted(val);
}

/* Large values and integers print as integers, the rest with 6 digits. */
void bench_json_num(const char *key, double val)
{
	putchar(',');
	json_quoted(key);
	if (!isfinite(val))
		printf(":null");
	else if (val == floor(val) || fabs(val) >= 1000)
		printf(":%.0f", val);
	else
		printf(":%.6g", val);
}

void bench_json_end(void)
{
	puts("}");
	fflush(stdout);
}

/*
 * An error line; key/val (may be NULL) name the variant or path, and the
 * human line then has the workloads' "  %-8s %-13s" columns.
 */
void bench_report_error_kv(const struct bench_ctx *ctx, const char *bench,
			   const char *engine, const char *key, const char *val,
			   const char *op, int err)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "%s: %s", op, strerror(-err));
	if (ctx->json) {
		bench_json_begin(bench, engine);
		if (key)
			bench_json_str(key, val);
		bench_json_str("error", msg);
		bench_json_end();
	} else {
		/* "skipped: ..." is not an error */
		if (key)
			printf("  %-8s %-13s", val, engine);
		else
			printf("  %-8s", engine);
		printf(" %s%s\n", strncmp(op, "skipped", 7) ? "error: " : "",
		       msg);
		fflush(stdout);
	}
}

void bench_report_error(const struct bench_ctx *ctx, const char *bench,
			const char *engine, const char *op, int err)
{
	bench_report_error_kv(ctx, bench, engine, NULL, NULL, op, err);
}

/*
 * A kernel whose io_uring is blocked or absent (seccomp, io_uring_disabled,
 * old kernel) is a skipped engine, not a failure: the user engine exists
 * for exactly that machine. The user engine must always set up.
 */
bool bench_setup_error_is_skip(const struct t_calls *eng, int err)
{
	if (eng != &t_calls_kernel)
		return false;
	return err == -EPERM || err == -ENOSYS || err == -EACCES;
}

/*
 * A ratio a/b named "user/floor" (what) of one workload and variant: a
 * text line, or a JSON object with "ratio" in place of "engine" that
 * the picture (tools/bench-plot) leaves out.
 */
void bench_report_ratio_to(const struct bench_ctx *ctx, const char *bench,
			   const char *variant, const char *what, double a,
			   double b)
{
	if (!(a > 0) || !(b > 0))
		return;
	if (!ctx->json) {
		printf("  ratio %s%s%s: %.2fx\n", what, variant ? " " : "",
		       variant ? variant : "", a / b);
		fflush(stdout);
		return;
	}
	fputs("{\"bench\":", stdout);
	json_quoted(bench);
	bench_json_str("ratio", what);
	if (variant)
		bench_json_str("variant", variant);
	bench_json_num("value", a / b);
	bench_json_num("getppid_ns", ctx->getppid_ns);
	bench_json_end();
}

/*
 * What one trivial system call costs on this machine now (getppid: glibc
 * does not cache it), the yardstick for every syscall-bound figure: the
 * fastest of a few batches, in ns.
 */
double bench_getppid_ns(bool smoke)
{
	int batch = smoke ? 2000 : 20000, rounds = smoke ? 3 : 10, i, k;
	double best = 0, t;

	for (k = 0; k < rounds; k++) {
		t = bench_now();
		for (i = 0; i < batch; i++)
			syscall(SYS_getppid);
		t = (bench_now() - t) / batch * 1e9;
		if (!best || t < best)
			best = t;
	}
	return best;
}

void bench_report_getppid(const struct bench_ctx *ctx, const char *bench)
{
	if (!ctx->json) {
		printf("getppid: %.0f ns per call on this machine, now\n",
		       ctx->getppid_ns);
		fflush(stdout);
		return;
	}
	bench_json_begin(bench, "getppid");
	bench_json_num("getppid_ns", ctx->getppid_ns);
	bench_json_end();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted samples. */
static double percentile(const double *v, size_t n, double pct)
{
	size_t rank = (size_t)ceil(pct / 100.0 * n);

	return v[rank ? rank - 1 : 0];
}

void bench_stats(double *v, size_t n, struct bench_stats *st)
{
	double sum = 0, sq = 0;
	size_t i;

	memset(st, 0, sizeof(*st));
	st->count = n;
	if (!n) {
		st->avg = st->stdev = st->min = st->max = NAN;
		st->p50 = st->p99 = NAN;
		return;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	st->avg = sum / n;
	for (i = 0; i < n; i++)
		sq += (v[i] - st->avg) * (v[i] - st->avg);
	st->stdev = n > 1 ? sqrt(sq / (n - 1)) : 0;
	st->min = v[0];
	st->max = v[n - 1];
	st->p50 = percentile(v, n, 50);
	st->p99 = percentile(v, n, 99);
}

/*
 * A measurement that makes no progress (an engine that lost a completion)
 * must not hang `make test`: SIGALRM names what was running and exits.
 */
static char watchdog_msg[160];

static void watchdog_fire(int sig)
{
	ssize_t n = write(STDERR_FILENO, watchdog_msg, strlen(watchdog_msg));

	(void)n;
	_exit(3);
}

/* Arm (seconds > 0) or disarm (0) the watchdog. */
void bench_watchdog(unsigned int seconds, const char *what)
{
	struct sigaction sa;

	if (!seconds) {
		alarm(0);
		return;
	}
	snprintf(watchdog_msg, sizeof(watchdog_msg),
		 "nowait-bench: %s: no result after %u s, giving up "
		 "(hang?)\n",
		 what, seconds);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watchdog_fire;
	sigaction(SIGALRM, &sa, NULL);
	alarm(seconds);
}
