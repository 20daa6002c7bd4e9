/* SPDX-License-Identifier: MIT */
/*
 * Workload "hackbench": the 2018 pipe busy-wait RFC's measurement, for
 * blocking programs. rt-tests' hackbench in pipe mode
 * (`hackbench -p -g G -l LOOPS`) runs under libnowait-preload.so with
 * NOWAIT_PIPE_SPIN_US = 0, 5, 10 and adaptive, for each group count; each
 * setting runs `runs` times, interleaved (repetition r of every setting
 * runs before repetition r+1 of any, so that a noisy moment hits them all
 * alike), and the median of hackbench's "Time:" is reported with its
 * change against spin 0, as the RFC's tables did.
 *
 * The preload library is found next to this binary (build/). No io_uring
 * engine is involved: the column is "spin", not "engine".
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define HACKBENCH_BIN "/usr/bin/hackbench"
#define MAX_GROUPS    8
#define MAX_RUNS      64
#define NR_SPINS      4

static long hb_groups[MAX_GROUPS] = {1, 2, 4, 8};
static long hb_nr_groups = 4;
static long hb_max_groups = 8; /* --groups=N: 1, 2, 4... up to N */
static long hb_loops = 400;
static long hb_runs = 5;

static const struct bench_param hackbench_params[] = {
	{"groups", 'g', "group counts 1, 2, 4, ... up to this", &hb_max_groups},
	{"loops", 'l', "hackbench -l: messages per sender and receiver",
	 &hb_loops},
	{"runs", 'n', "repetitions per setting (median reported)", &hb_runs},
	{NULL, 0, NULL, NULL},
};

static const char *const hb_spins[NR_SPINS] = {"0", "5", "10", "adaptive"};

#define SMOKE_LOOPS 20

/* One hackbench run; its "Time:" in seconds, or -errno. */
static double run_once(const char *preload, const char *spin, long groups,
		       long loops, int *err)
{
	char g[24], l[24], buf[4096], *t;
	int pfd[2], status, devnull;
	size_t used = 0;
	pid_t pid;
	ssize_t n;

	*err = 0;
	snprintf(g, sizeof(g), "%ld", groups);
	snprintf(l, sizeof(l), "%ld", loops);
	if (pipe2(pfd, O_CLOEXEC)) {
		*err = -errno;
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		*err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, STDERR_FILENO);
		setenv("LD_PRELOAD", preload, 1);
		setenv("NOWAIT_PIPE_SPIN_US", spin, 1);
		/* the pipe spin alone: no io_uring probe, no seccomp trap */
		setenv("NOWAIT_MODE", "kernel", 1);
		unsetenv("NOWAIT_LOG");
		execl(HACKBENCH_BIN, "hackbench", "-p", "-g", g, "-l", l,
		      (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (used < sizeof(buf) - 1) {
		n = read(pfd[0], buf + used, sizeof(buf) - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	buf[used] = 0;
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	t = strstr(buf, "Time:");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !t) {
		*err = WIFEXITED(status) && WEXITSTATUS(status) == 127
			       ? -ENOENT
			       : -EPROTO;
		return -1;
	}
	return strtod(t + 5, NULL);
}

static void groups_from_max(void)
{
	long g;

	hb_nr_groups = 0;
	for (g = 1; g <= hb_max_groups && hb_nr_groups < MAX_GROUPS; g *= 2)
		hb_groups[hb_nr_groups++] = g;
}

static void report(const struct bench_ctx *ctx, long groups, int s,
		   double median, double base, int runs)
{
	if (ctx->json) {
		printf("{\"bench\":\"hackbench\",\"groups\":%ld,"
		       "\"spin\":\"%s\",\"seconds\":%.4f,\"runs\":%d}\n",
		       groups, hb_spins[s], median, runs);
		fflush(stdout);
		return;
	}
	printf("  %-6ld %-9s %9.3f", groups, hb_spins[s], median);
	if (s && base > 0)
		printf("   %+6.1f%%", (median / base - 1) * 100);
	putchar('\n');
	fflush(stdout);
}

static void report_error(const struct bench_ctx *ctx, long groups, int s,
			 const char *op, int err)
{
	char g[24];

	snprintf(g, sizeof(g), "%ld", groups);
	if (ctx->json) {
		char msg[160];

		snprintf(msg, sizeof(msg), "%s: %s", op, strerror(-err));
		printf("{\"bench\":\"hackbench\",\"groups\":%ld,"
		       "\"spin\":\"%s\",\"error\":",
		       groups, hb_spins[s]);
		printf("\"%s\"}\n", msg);
		fflush(stdout);
		return;
	}
	printf("  %-6s %-9s error: %s: %s\n", g, hb_spins[s], op,
	       strerror(-err));
	fflush(stdout);
}

static int hackbench_run(const struct bench_ctx *ctx)
{
	static double t[MAX_GROUPS][NR_SPINS][MAX_RUNS];
	int ok[MAX_GROUPS][NR_SPINS], gi, s, r, runs, err = 0, failed = 0;
	char preload[PATH_MAX];
	long loops = ctx->smoke ? SMOKE_LOOPS : hb_loops;
	struct bench_stats st;
	double base, v;

	groups_from_max();
	runs = ctx->smoke ? 1 : (int)(hb_runs > MAX_RUNS ? MAX_RUNS : hb_runs);
	if (!ctx->json)
		printf("hackbench: pipe mode, %ld loops, median of %d "
		       "run%s; NOWAIT_PIPE_SPIN_US through "
		       "libnowait-preload.so\n"
		       "  groups spin        seconds  vs spin 0\n",
		       loops, runs, runs > 1 ? "s" : "");
	err = bench_preload_path(preload, sizeof(preload));
	if (!err && access(HACKBENCH_BIN, X_OK))
		err = -errno;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* An instrumented preload library cannot go into hackbench. */
	if (ctx->smoke) {
		printf("  skipped in a sanitizer build\n");
		return 0;
	}
#endif
	if (err) {
		const char *op = access(HACKBENCH_BIN, X_OK)
					 ? HACKBENCH_BIN " (apt-get install "
							 "rt-tests)"
					 : "libnowait-preload.so";

		for (gi = 0; gi < hb_nr_groups; gi++)
			for (s = 0; s < NR_SPINS; s++)
				report_error(ctx, hb_groups[gi], s, op, err);
		return ctx->smoke ? 0 : 1;
	}
	memset(ok, 0, sizeof(ok));
	/* interleaved: every setting's run r before anyone's run r+1 */
	for (r = 0; r < runs; r++)
		for (gi = 0; gi < hb_nr_groups; gi++)
			for (s = 0; s < NR_SPINS; s++) {
				if (ok[gi][s] < 0)
					continue;
				v = run_once(preload, hb_spins[s],
					     hb_groups[gi], loops, &err);
				if (err) {
					report_error(ctx, hb_groups[gi], s,
						     "hackbench", err);
					ok[gi][s] = -1;
					failed = 1;
					continue;
				}
				t[gi][s][ok[gi][s]++] = v;
			}
	for (gi = 0; gi < hb_nr_groups; gi++) {
		base = 0;
		for (s = 0; s < NR_SPINS; s++) {
			if (ok[gi][s] <= 0)
				continue;
			bench_stats(t[gi][s], (size_t)ok[gi][s], &st);
			if (s == 0)
				base = st.p50;
			report(ctx, hb_groups[gi], s, st.p50, base, ok[gi][s]);
		}
	}
	return failed;
}

const struct bench_workload bench_hackbench = {
	.name = "hackbench",
	.desc = "rt-tests hackbench -p under the preload's pipe spin "
		"(0, 5, 10, adaptive)",
	.run = hackbench_run,
	.params = hackbench_params,
};
