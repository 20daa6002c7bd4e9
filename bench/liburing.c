/* SPDX-License-Identifier: MIT */
/*
 * Workload "liburing": an unmodified program on liburing.so.2 (Debian's),
 * one io_uring_submit_and_wait per NOP request, the CQE taken by
 * io_uring_peek_cqe. Engines:
 *   kernel     that loop on the kernel's io_uring
 *   libnowait  the same request loop built against libnowait directly:
 *              the raw ring (test/rawring.h), flush and nowait_enter
 *   preload    the liburing loop in a child under libnowait-preload.so
 *              (NOWAIT_MODE=user): the preload's io_uring_submit_and_wait
 *              (preload/liburing.c), no trap
 *   trapped    the same child calling the library's own function (dlsym
 *              in liburing.so.2): its inline syscall, a SIGSYS trap each
 *              (NOWAIT_PATCH=0)
 *   patched    the same, NOWAIT_PATCH=1: the preload rewrites that
 *              syscall site at its first trap (preload/patch.c)
 * The children report the preload's trap count per request
 * (nowait_preload_traps). Needs the system liburing (HAVE_LIBURING).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "bench.h"

#define LU_CHILD_ENV "NOWAIT_BENCH_LIBURING_CHILD"
#define LU_ENTRIES   8
#define LU_CHECK     1024 /* requests between two looks at the clock */
#define LU_ROUNDS    5

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LU_SANITIZED 1
#else
#define LU_SANITIZED 0
#endif

struct lu_result {
	double ops_per_sec;
	double traps_per_op;
	unsigned long ops;
};

/* The libnowait loop: the raw ring, one flush and enter per request. */
static int lu_direct(const struct bench_ctx *ctx, struct lu_result *res)
{
	struct bench_ring r;
	unsigned long n = 0;
	double t0, t;
	int ret = bench_ring_open(&r, &t_calls_user, LU_ENTRIES, 0, 0);

	if (ret)
		return ret;
	t0 = bench_now();
	do {
		for (unsigned int i = 0; i < LU_CHECK; i++, n++) {
			struct io_uring_sqe *sqe = bench_get_sqe(&r);
			unsigned int head;

			memset(sqe, 0, sizeof(*sqe));
			sqe->opcode = IORING_OP_NOP;
			sqe->user_data = n;
			ret = bench_enter(&r, bench_flush_sq(&r), 1, 0);
			if (ret != 1 || !bench_cq_ready(&r, &head) ||
			    bench_cqe_at(&r, head)->user_data != n) {
				bench_ring_close(&r);
				return ret < 0 ? ret : -EPROTO;
			}
			bench_cq_advance(&r, 1);
		}
		t = bench_now() - t0;
	} while (t < ctx->seconds);
	bench_ring_close(&r);
	res->ops = n;
	res->ops_per_sec = (double)n / t;
	return 0;
}

#ifdef HAVE_LIBURING
#include <dlfcn.h>
#include <liburing.h>

typedef int (*lu_submit_wait_fn)(struct io_uring *, unsigned int);

/* The liburing loop: requests per second, and its trap count. */
static int lu_loop(double seconds, lu_submit_wait_fn submit_wait,
		   struct lu_result *res)
{
	unsigned long (*traps)(void) = (unsigned long (*)(void))dlsym(
		RTLD_DEFAULT, "nowait_preload_traps");
	unsigned long n = 0, tr0 = traps ? traps() : 0;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	double t0, t;
	int ret = io_uring_queue_init(LU_ENTRIES, &ring, 0);

	if (ret)
		return ret;
	t0 = bench_now();
	do {
		for (unsigned int i = 0; i < LU_CHECK; i++, n++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, n);
			ret = submit_wait(&ring, 1);
			if (ret != 1 || io_uring_peek_cqe(&ring, &cqe) ||
			    cqe->user_data != n) {
				io_uring_queue_exit(&ring);
				return ret < 0 ? ret : -EPROTO;
			}
			io_uring_cqe_seen(&ring, cqe);
		}
		t = bench_now() - t0;
	} while (t < seconds);
	res->traps_per_op = traps ? (double)(traps() - tr0) / (double)n : 0;
	io_uring_queue_exit(&ring);
	res->ops = n;
	res->ops_per_sec = (double)n / t;
	return 0;
}

/*
 * The child: "SECONDS own" calls liburing.so.2's own function, "SECONDS"
 * the one the loader binds (the preload's). One line on stdout.
 */
int bench_liburing_child(const char *arg)
{
	lu_submit_wait_fn fn = io_uring_submit_and_wait;
	struct lu_result res = {0};
	double seconds = strtod(arg, NULL);
	int ret;

	if (strstr(arg, "own")) {
		void *h = dlopen("liburing.so.2", RTLD_LAZY | RTLD_NOLOAD);

		fn = h ? (lu_submit_wait_fn)dlsym(h, "io_uring_submit_and_wait")
		       : NULL;
		if (!fn)
			return 3;
	}
	ret = lu_loop(seconds, fn, &res);
	if (ret) {
		printf("error %d\n", ret);
		return 1;
	}
	printf("%.1f %.4f %lu\n", res.ops_per_sec, res.traps_per_op, res.ops);
	return 0;
}

/* This program again under the preload, in child mode; its line. */
static int lu_spawn(const struct bench_ctx *ctx, bool own, const char *patch,
		    struct lu_result *res)
{
	char so[PATH_MAX + 32], arg[64], buf[256] = {0};
	int pfd[2], status, ret = bench_preload_path(so, sizeof(so));
	pid_t pid;
	ssize_t n;

	if (ret)
		return ret;
	snprintf(arg, sizeof(arg), "%g%s", ctx->seconds, own ? " own" : "");
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		setenv("LD_PRELOAD", so, 1);
		setenv("NOWAIT_MODE", "user", 1);
		setenv("NOWAIT_PATCH", patch, 1);
		setenv(LU_CHILD_ENV, arg, 1);
		execl("/proc/self/exe", "nowait-bench", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	n = read(pfd[0], buf, sizeof(buf) - 1);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    sscanf(buf, "%lf %lf %lu", &res->ops_per_sec, &res->traps_per_op,
		   &res->ops) != 3)
		return -EPROTO;
	return 0;
}

static int lu_kernel(const struct bench_ctx *ctx, struct lu_result *res)
{
	return lu_loop(ctx->seconds, io_uring_submit_and_wait, res);
}
#endif /* HAVE_LIBURING */

static void lu_report(const struct bench_ctx *ctx, const char *engine,
		      const struct lu_result *res, double base)
{
	if (ctx->json) {
		bench_json_begin("liburing", engine);
		bench_json_num("ops_per_sec", res->ops_per_sec);
		bench_json_num("traps_per_op", res->traps_per_op);
		bench_json_num("ops", (double)res->ops);
		if (base > 0)
			bench_json_num("vs_libnowait", res->ops_per_sec / base);
		bench_json_end();
		return;
	}
	printf("  %-10s %8.3f M/s %9.1f ns/op  %6.3f traps/op", engine,
	       res->ops_per_sec / 1e6, 1e9 / res->ops_per_sec,
	       res->traps_per_op);
	if (base > 0)
		printf("  %.3fx libnowait", res->ops_per_sec / base);
	printf("\n");
	fflush(stdout);
}

/* The user-side engines, measured in interleaved rounds. */
enum { LU_DIRECT, LU_PRELOAD, LU_TRAPPED, LU_PATCHED, LU_NR };

static const char *const lu_names[LU_NR] = {"libnowait", "preload", "trapped",
					    "patched"};

/* One round of engine e: 0, or -errno. */
static int lu_round(const struct bench_ctx *sub, int e, struct lu_result *res)
{
	memset(res, 0, sizeof(*res));
	if (e == LU_DIRECT)
		return lu_direct(sub, res);
#ifdef HAVE_LIBURING
	return lu_spawn(sub, e >= LU_TRAPPED, e == LU_PATCHED ? "1" : "0", res);
#else
	return -ENOSYS;
#endif
}

/*
 * The children exist with liburing and outside the sanitizers (an
 * instrumented preload library cannot go into them).
 */
static int lu_nr_engines(const struct bench_ctx *ctx)
{
#ifdef HAVE_LIBURING
	if (!LU_SANITIZED)
		return LU_NR;
	if (!ctx->json)
		printf("  preload, trapped, patched: skipped in a sanitizer "
		       "build\n");
#else
	if (!ctx->json)
		printf("  preload, trapped, patched: skipped, built without "
		       "liburing\n");
#endif
	return 1;
}

/*
 * LU_ROUNDS rounds of every engine in turn, each a fifth of the time, so
 * that a noisy moment of a shared machine hits them alike; the median
 * round is reported. 1 when one failed.
 */
static int lu_user(const struct bench_ctx *ctx)
{
	struct bench_ctx sub = *ctx;
	struct lu_result res[LU_NR][LU_ROUNDS], med;
	double v[LU_NR][LU_ROUNDS], base = 0;
	int nr = lu_nr_engines(ctx), ok[LU_NR] = {0}, failed = 0;
	struct bench_stats st;

	sub.seconds = ctx->seconds / LU_ROUNDS;
	for (int r = 0; r < LU_ROUNDS; r++)
		for (int e = 0; e < nr; e++) {
			int ret = lu_round(&sub, e, &res[e][ok[e]]);

			if (ret) {
				if (r == 0)
					bench_report_error(ctx, "liburing",
							   lu_names[e], "loop",
							   ret);
				failed = 1;
				continue;
			}
			v[e][ok[e]] = res[e][ok[e]].ops_per_sec;
			ok[e]++;
		}
	for (int e = 0; e < nr; e++) {
		if (!ok[e])
			continue;
		bench_stats(v[e], (size_t)ok[e], &st);
		/* the round nearest the median, for its trap count */
		med = res[e][0];
		for (int i = 1; i < ok[e]; i++)
			if (fabs(res[e][i].ops_per_sec - st.p50) <
			    fabs(med.ops_per_sec - st.p50))
				med = res[e][i];
		med.ops_per_sec = st.p50;
		lu_report(ctx, lu_names[e], &med, e == LU_DIRECT ? 0 : base);
		if (e == LU_DIRECT)
			base = st.p50;
	}
	return failed;
}

static int lu_run(const struct bench_ctx *ctx)
{
	int failed = 0;

	if (!ctx->json)
		printf("liburing: one io_uring_submit_and_wait per NOP "
		       "(user side: median of %d interleaved rounds)\n",
		       LU_ROUNDS);
#ifdef HAVE_LIBURING
	if (bench_ctx_has(ctx, &t_calls_kernel)) {
		struct lu_result res = {0};
		int ret = lu_kernel(ctx, &res);

		if (ret && !bench_setup_error_is_skip(&t_calls_kernel, ret)) {
			bench_report_error(ctx, "liburing", "kernel", "loop",
					   ret);
			failed = 1;
		} else if (!ret) {
			lu_report(ctx, "kernel", &res, 0);
		}
	}
#endif
	if (bench_ctx_has(ctx, &t_calls_user))
		failed |= lu_user(ctx);
	return failed;
}

const struct bench_workload bench_liburing = {
	.name = "liburing",
	.desc = "liburing.so.2, one submit_and_wait per NOP: kernel, "
		"libnowait, preload, trapped, patched",
	.run = lu_run,
	.params = NULL,
};
