/* SPDX-License-Identifier: MIT */
/*
 * nowait-bench: the kernel's io_uring and nowait's user-space engine
 * measured side by side, in one run, by the same ring code.
 *
 *   nowait-bench WORKLOAD [options] [--json]
 *   nowait-bench all [common options]
 *   nowait-bench --smoke
 *
 * A workload is one entry of the table below and one file.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const struct bench_workload *const workloads[] = {
	&bench_nop,	 &bench_pipes, &bench_latency,	&bench_hackbench,
	&bench_pingpong, &bench_echo,  &bench_fileread, &bench_liburing,
};

#define NR_WORKLOADS  (sizeof(workloads) / sizeof(workloads[0]))
#define MAX_PARAMS    16
#define SMOKE_SECONDS 0.1 /* per engine: about 0.2 s per workload */

enum {
	OPT_ENGINE = 256,
	OPT_FLAGS,
	OPT_JSON,
	OPT_SMOKE,
	OPT_PARAM, /* OPT_PARAM + i: the workload's parameter i */
};

static const struct option common_opts[] = {
	{"seconds", required_argument, NULL, 't'},
	{"engine", required_argument, NULL, OPT_ENGINE},
	{"flags", required_argument, NULL, OPT_FLAGS},
	{"json", no_argument, NULL, OPT_JSON},
	{"smoke", no_argument, NULL, OPT_SMOKE},
	{"help", no_argument, NULL, 'h'},
};

#define NR_COMMON (sizeof(common_opts) / sizeof(common_opts[0]))

static void usage_params(FILE *f, const struct bench_workload *w)
{
	const struct bench_param *p;
	char opt[64];

	if (!w->params || !w->params[0].name)
		return;
	fprintf(f, "\n%s options:\n", w->name);
	for (p = w->params; p->name; p++) {
		if (p->short_opt)
			snprintf(opt, sizeof(opt), "-%c, --%s=N", p->short_opt,
				 p->name);
		else
			snprintf(opt, sizeof(opt), "    --%s=N", p->name);
		fprintf(f, "  %-24s %s (default %ld)\n", opt, p->help, *p->val);
	}
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: nowait-bench WORKLOAD [options] [--json]\n"
		   "       nowait-bench all [common options]\n"
		   "       nowait-bench --smoke\n"
		   "\nWorkloads:\n");
	for (i = 0; i < NR_WORKLOADS; i++)
		fprintf(f, "  %-10s %s\n", workloads[i]->name,
			workloads[i]->desc);
	fprintf(f,
		"  %-10s every workload above with its defaults\n"
		"\nCommon options:\n"
		"  -t, --seconds=S          measuring time per engine "
		"(default 3)\n"
		"      --engine=E           kernel, user or both (default both;"
		" kernel runs first);\n"
		"                           kernel-async, user-async, "
		"user-punt, or a floor\n"
		"                           (floor, epoll, pread, preadv2, "
		"minimal): "
		"that one only\n"
		"      --flags=F            ring set-up: default (SINGLE_ISSUER"
		" | DEFER_TASKRUN,\n"
		"                           CQSIZE; plain when refused) or "
		"none\n"
		"      --json               one JSON object per line per "
		"workload, variant, engine\n"
		"      --smoke              a short run of each workload "
		"(all if none named)\n"
		"  -h, --help               this text\n",
		"all");
	for (i = 0; i < NR_WORKLOADS; i++)
		usage_params(f, workloads[i]);
}

static const struct bench_workload *find_workload(const char *name)
{
	size_t i;

	for (i = 0; i < NR_WORKLOADS; i++)
		if (!strcmp(workloads[i]->name, name))
			return workloads[i];
	return NULL;
}

/*
 * A flavour (kernel-async, user-async, user-punt, or a floor) selects its
 * base engine and, in the workloads that have flavours, that flavour alone.
 */
static const char *const engine_flavours[] = {
	"kernel-async",
	"user-async",
	"user-punt",
	/* the floors: measured beside the user engine, they go with it */
	"floor",
	"epoll",
	"pread",
	"preadv2",
	"libuv",
	"minimal",
};

static int parse_engine(struct bench_ctx *ctx, const char *arg)
{
	size_t i;

	ctx->nr_engines = 0;
	ctx->flavour = NULL;
	for (i = 0; i < sizeof(engine_flavours) / sizeof(*engine_flavours); i++)
		if (!strcmp(arg, engine_flavours[i])) {
			ctx->flavour = engine_flavours[i];
			arg = strncmp(arg, "kernel", 6) ? "user" : "kernel";
		}
	if (!strcmp(arg, "kernel") || !strcmp(arg, "both"))
		ctx->engines[ctx->nr_engines++] = &t_calls_kernel;
	if (!strcmp(arg, "user") || !strcmp(arg, "both"))
		ctx->engines[ctx->nr_engines++] = &t_calls_user;
	return ctx->nr_engines ? 0 : -EINVAL;
}

static int parse_flags(struct bench_ctx *ctx, const char *arg)
{
	if (!strcmp(arg, "none"))
		ctx->plain_setup = true;
	else if (!strcmp(arg, "default"))
		ctx->plain_setup = false;
	else
		return -EINVAL;
	return 0;
}

static int parse_seconds(struct bench_ctx *ctx, const char *arg)
{
	char *end;
	double s = strtod(arg, &end);

	if (end == arg || *end || !isfinite(s) || s <= 0 || s > 86400)
		return -EINVAL;
	ctx->seconds = s;
	return 0;
}

static int parse_param(const struct bench_param *p, const char *arg)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 0);
	if (end == arg || *end || errno || v <= 0 || v > (1L << 24))
		return -EINVAL;
	*p->val = v;
	return 0;
}

/* The common options plus the workload's parameters, for getopt_long(). */
static int build_opts(const struct bench_workload *w, struct option *opts,
		      char *shorts, size_t shorts_len)
{
	size_t n = NR_COMMON, len;
	int i;

	memcpy(opts, common_opts, sizeof(common_opts));
	snprintf(shorts, shorts_len, "t:h");
	for (i = 0; w && w->params && w->params[i].name; i++) {
		if (i >= MAX_PARAMS)
			return -E2BIG;
		opts[n].name = w->params[i].name;
		opts[n].has_arg = required_argument;
		opts[n].flag = NULL;
		opts[n].val = OPT_PARAM + i;
		n++;
		len = strlen(shorts);
		if (w->params[i].short_opt && len + 3 < shorts_len)
			snprintf(shorts + len, shorts_len - len,
				 "%c:", w->params[i].short_opt);
	}
	memset(&opts[n], 0, sizeof(opts[n]));
	return 0;
}

static const struct bench_param *short_param(const struct bench_workload *w,
					     int c)
{
	const struct bench_param *p;

	for (p = w ? w->params : NULL; p && p->name; p++)
		if (p->short_opt == c)
			return p;
	return NULL;
}

/* Handle one option; 1 for --help, 0 when fine, -EINVAL on a bad value. */
static int handle_opt(struct bench_ctx *ctx, const struct bench_workload *w,
		      int c, const char *arg)
{
	const struct bench_param *p;

	switch (c) {
	case 't':
		return parse_seconds(ctx, arg);
	case 'h':
		return 1;
	case OPT_ENGINE:
		return parse_engine(ctx, arg);
	case OPT_FLAGS:
		return parse_flags(ctx, arg);
	case OPT_JSON:
		ctx->json = true;
		return 0;
	case OPT_SMOKE:
		ctx->smoke = true;
		return 0;
	}
	if (c >= OPT_PARAM && c < OPT_PARAM + MAX_PARAMS)
		return parse_param(&w->params[c - OPT_PARAM], arg);
	p = short_param(w, c);
	if (p)
		return parse_param(p, arg);
	return -EINVAL;
}

/*
 * argv[1] names the workload (or "all") unless it is an option. Returns
 * 0 to run, 1 to exit 0 (help printed), 2 on a usage error.
 */
static int parse_args(int argc, char **argv, struct bench_ctx *ctx,
		      const struct bench_workload **w, bool *all)
{
	struct option opts[NR_COMMON + MAX_PARAMS + 1];
	char shorts[64];
	int c, ret;

	*w = NULL;
	*all = false;
	optind = 1;
	if (argc > 1 && argv[1][0] != '-') {
		*all = !strcmp(argv[1], "all");
		*w = find_workload(argv[1]);
		if (!*w && !*all) {
			fprintf(stderr, "nowait-bench: unknown workload '%s'\n",
				argv[1]);
			return 2;
		}
		optind = 2;
	}
	if (build_opts(*w, opts, shorts, sizeof(shorts)))
		return 2;
	while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		if (c == '?')
			return 2;
		ret = handle_opt(ctx, *w, c, optarg);
		if (ret == 1) {
			usage(stdout);
			return 1;
		}
		if (ret) {
			fprintf(stderr, "nowait-bench: bad value '%s' for %s\n",
				optarg, argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nowait-bench: unexpected '%s'\n",
			argv[optind]);
		return 2;
	}
	if (!*w && !*all && !ctx->smoke) {
		usage(stderr);
		return 2;
	}
	if (!*w)
		*all = true;
	return 0;
}

/* A workload, after this moment's getppid cost. */
static int run_one(struct bench_ctx *ctx, const struct bench_workload *w)
{
	ctx->getppid_ns = bench_getppid_ns(ctx->smoke);
	bench_report_getppid(ctx, w->name);
	return w->run(ctx);
}

int main(int argc, char **argv)
{
	struct bench_ctx ctx = {.seconds = 3.0};
	const struct bench_workload *w;
	bool all;
	size_t i;
	int ret, status = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
#ifdef HAVE_LIBURING
	if (getenv("NOWAIT_BENCH_LIBURING_CHILD"))
		return bench_liburing_child(
			getenv("NOWAIT_BENCH_LIBURING_CHILD"));
#endif
	parse_engine(&ctx, "both");
	ret = parse_args(argc, argv, &ctx, &w, &all);
	if (ret)
		return ret == 1 ? 0 : 2;
	if (ctx.smoke)
		ctx.seconds = SMOKE_SECONDS;
	if (!all)
		return run_one(&ctx, w);
	for (i = 0; i < NR_WORKLOADS; i++)
		if (run_one(&ctx, workloads[i]))
			status = 1;
	return status;
}
