/* SPDX-License-Identifier: MIT */
/*
 * nowait-bench reporting: the clock, JSON lines (one object per workload,
 * variant and engine) and the human-readable error and ratio lines.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

void bench_report_error(const struct bench_ctx *ctx, const char *bench,
			const char *engine, const char *op, int err)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "%s: %s", op, strerror(-err));
	if (ctx->json) {
		bench_json_begin(bench, engine);
		bench_json_str("error", msg);
		bench_json_end();
	} else {
		printf("  %-8s error: %s\n", engine, msg);
		fflush(stdout);
	}
}

/*
 * A kernel whose io_uring is blocked or absent (seccomp, io_uring_disabled,
 * old kernel) is a skipped engine, not a failure: the user engine exists
 * for exactly that machine. The user engine must always set up.
 */
bool bench_setup_error_is_skip(const struct bench_engine *eng, int err)
{
	if (eng != &bench_engine_kernel)
		return false;
	return err == -EPERM || err == -ENOSYS || err == -EACCES;
}

void bench_report_ratio(const struct bench_ctx *ctx, const char *what,
			double user, double kernel)
{
	if (ctx->json || !(user > 0) || !(kernel > 0))
		return;
	printf("  ratio user/kernel (%s): %.2fx\n", what, user / kernel);
	fflush(stdout);
}
