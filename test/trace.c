/* SPDX-License-Identifier: MIT */
/*
 * NOWAIT_TRACE: every request appears exactly once in the trace, with its
 * opcode, its result and the path that served it: an OPENAT, READ and
 * WRITE that complete inline, a pipe READ that parks, a TIMEOUT that
 * fires, a READ cancelled by ASYNC_CANCEL; the setup call has a line too;
 * and NOWAIT_STATS=json, printed at exit, counts the same requests by
 * opcode and path. The requests run in a child, whose exit prints them:
 * once on a ring of the library's (nowait_setup), and once (plain build,
 * with liburing) as a liburing program under `nowait-run --user --trace=F
 * --stats=json`, as a user runs one.
 * The user engine only: the kernel has no such trace.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "helpers.h"

static char trace_path[] = "/tmp/nowait-trace-XXXXXX";
static char stats_path[] = "/tmp/nowait-stats-XXXXXX";
static int open_res; /* what the OPENAT returned (the child's) */

static void prep(struct io_uring_sqe *s, int op, int fd, const void *addr,
		 unsigned int len, uint64_t off, uint64_t ud)
{
	t_prep_rw(s, op, fd, addr, len, off, ud);
}

/* The one line of the trace for user_data ud (it must be exactly one). */
static const char *line_of(const char *text, uint64_t ud)
{
	static char found[512];
	char key[32];
	const char *p = text, *hit = NULL;
	int n = 0;

	snprintf(key, sizeof(key), " ud=0x%llx ", (unsigned long long)ud);
	for (p = strstr(p, key); p; p = strstr(p + 1, key)) {
		hit = p;
		n++;
	}
	T_ASSERT_EQ(n, 1);
	while (hit > text && hit[-1] != '\n')
		hit--;
	snprintf(found, sizeof(found), "%.*s", (int)strcspn(hit, "\n"), hit);
	return found;
}

static void expect(const char *text, uint64_t ud, const char *op, int res,
		   const char *path)
{
	const char *l = line_of(text, ud);
	char want[96];

	snprintf(want, sizeof(want), " %s(", op);
	if (!strstr(l, want))
		fprintf(stderr, "line for %llu: %s\n", (unsigned long long)ud,
			l);
	T_ASSERT(strstr(l, want));
	snprintf(want, sizeof(want), ") = %d ", res);
	T_ASSERT(strstr(l, want));
	/* "a|b": either (a buffered write may need a worker, per file system) */
	snprintf(want, sizeof(want), " path=%.*s", (int)strcspn(path, "|"),
		 path);
	if (!strstr(l, want) && strchr(path, '|'))
		snprintf(want, sizeof(want), " path=%s", strchr(path, '|') + 1);
	if (!strstr(l, want))
		fprintf(stderr, "line for %llu: %s\n", (unsigned long long)ud,
			l);
	T_ASSERT(strstr(l, want));
}

static void run_requests(struct t_ring *r, const char *file)
{
	struct __kernel_timespec ts = {0, 1000000};
	struct io_uring_sqe *s;
	char buf[16];
	int p[2], q[2], fd;

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(pipe(q), 0);
	s = t_get_sqe(r);
	prep(s, IORING_OP_OPENAT, AT_FDCWD, file, 0, 0, 1);
	s->open_flags = O_RDWR;
	fd = open_res = t_run(r, 1);
	T_ASSERT_GE(fd, 0);
	prep(t_get_sqe(r), IORING_OP_READ, fd, buf, 5, 0, 2);
	T_ASSERT_EQ(t_run(r, 2), 5);
	prep(t_get_sqe(r), IORING_OP_WRITE, fd, "abc", 3, 5, 3);
	T_ASSERT_EQ(t_run(r, 3), 3);
	/* A read of an empty pipe parks; the data comes after the submit. */
	prep(t_get_sqe(r), IORING_OP_READ, p[0], buf, sizeof(buf), -1, 4);
	T_ASSERT_EQ(t_submit(r), 1);
	T_ASSERT_EQ(write(p[1], "hi", 2), 2);
	t_expect_cqe(r, 4, 2);
	prep(t_get_sqe(r), IORING_OP_TIMEOUT, -1, &ts, 1, 0, 5);
	T_ASSERT_EQ(t_run(r, 5), -ETIME);
	prep(t_get_sqe(r), IORING_OP_READ, q[0], buf, sizeof(buf), -1, 6);
	T_ASSERT_EQ(t_submit(r), 1);
	t_expect_no_cqe(r, 10);
	s = t_get_sqe(r);
	memset(s, 0, sizeof(*s));
	s->opcode = IORING_OP_ASYNC_CANCEL;
	s->fd = -1;
	s->addr = 6;
	s->user_data = 7;
	T_ASSERT_EQ(t_submit(r), 1);
	for (int i = 0; i < 2; i++) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		T_ASSERT_EQ(cqe.res, cqe.user_data == 6 ? -ECANCELED : 0);
	}
	close(fd);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

static char *slurp(const char *path)
{
	static char bufs[2][65536];
	static int which;
	char *text = bufs[which++ % 2];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	T_ASSERT_GE(fd, 0);
	n = read(fd, text, sizeof(bufs[0]) - 1);
	T_ASSERT_GT(n, 0);
	text[n] = '\0';
	close(fd);
	return text;
}

/* The number that follows "key": in the JSON line (-1: not there). */
static long json_num(const char *json, const char *op, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":{", op);
	p = strstr(json, pat);
	if (!p)
		return -1;
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(p, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

/*
 * The path where it crosses a page boundary, 12 bytes before it: the
 * trace copies it whole (it once cut it at the boundary, and the
 * OPENAT's line lost its path whenever the stack put it there).
 */
static const char *across_pages(const char *file)
{
	char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	T_ASSERT(m != MAP_FAILED);
	return strcpy(m + 4096 - 12, file);
}

static void child(const char *file)
{
	struct t_ring r;

	/* Read by the engine once, at its first setup. */
	setenv("NOWAIT_TRACE", trace_path, 1);
	setenv("NOWAIT_STATS", "json", 1);
	setenv("NOWAIT_STATS_FILE", stats_path, 1);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	run_requests(&r, across_pages(file));
	t_ring_exit(&r);
	exit(0); /* the statistics are printed now */
}

static void check_stats(const char *text, const char *json)
{
	static const char *const ops[] = {"OPENAT", "READ", "WRITE", "TIMEOUT",
					  "ASYNC_CANCEL"};

	for (unsigned int i = 0; i < 5; i++) {
		char pat[32];
		long lines = 0;

		snprintf(pat, sizeof(pat), " %s(", ops[i]);
		for (const char *p = strstr(text, pat); p;
		     p = strstr(p + 1, pat))
			lines++;
		T_ASSERT_EQ(json_num(json, ops[i], "n"), lines);
	}
	/* ud 4 parked and completed, ud 6 parked and was cancelled */
	T_ASSERT_EQ(json_num(json, "READ", "parked"), 2);
	T_ASSERT_EQ(json_num(json, "READ", "inline"), 1);
	T_ASSERT(strstr(json, "\"parks\":2,"));
	T_ASSERT_GE(json_num(json, "TIMEOUT", "p50_ns"), 1000000 * 9 / 10);
}

#ifdef HAVE_LIBURING
#include <liburing.h>

/* The same requests, by liburing (its syscalls trapped by the preload). */
static void liburing_child(const char *file)
{
	struct __kernel_timespec ts = {0, 1000000};
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	char buf[16];
	int p[2], q[2], fd, got;

	T_ASSERT_EQ(io_uring_queue_init(8, &ring, 0), 0);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(pipe(q), 0);
#define RUN(prep, ud)                                               \
	do {                                                        \
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring); \
		prep;                                               \
		sqe->user_data = ud;                                \
		T_ASSERT_EQ(io_uring_submit(&ring), 1);             \
	} while (0)
#define REAP(out)                                               \
	do {                                                    \
		T_ASSERT_EQ(io_uring_wait_cqe(&ring, &cqe), 0); \
		out = cqe->res;                                 \
		io_uring_cqe_seen(&ring, cqe);                  \
	} while (0)
	RUN(io_uring_prep_openat(sqe, AT_FDCWD, file, O_RDWR, 0), 1);
	REAP(fd);
	T_ASSERT_GE(fd, 0);
	RUN(io_uring_prep_read(sqe, fd, buf, 5, 0), 2);
	REAP(got); /* results: checked in the trace */
	RUN(io_uring_prep_write(sqe, fd, "abc", 3, 5), 3);
	REAP(got);
	RUN(io_uring_prep_read(sqe, p[0], buf, sizeof(buf), -1), 4);
	T_ASSERT_EQ(write(p[1], "hi", 2), 2);
	REAP(got);
	RUN(io_uring_prep_timeout(sqe, &ts, 0, 0), 5);
	REAP(got);
	RUN(io_uring_prep_read(sqe, q[0], buf, sizeof(buf), -1), 6);
	usleep(10000);
	RUN(io_uring_prep_cancel64(sqe, 6, 0), 7);
	REAP(got);
	REAP(got);
	(void)got;
	io_uring_queue_exit(&ring);
	exit(0);
}
#endif

/* The liburing pass: nowait-run beside this build's tests, if any. */
static bool liburing_pass(const char *file)
{
#if defined(HAVE_LIBURING) && !defined(__SANITIZE_ADDRESS__) && \
	!defined(__SANITIZE_THREAD__)
	char exe[4096], run[4200], arg[4300], stats_env[96];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int status;
	pid_t pid;

	if (n <= 0)
		return false;
	exe[n] = '\0';
	snprintf(run, sizeof(run), "%.*s/../nowait-run",
		 (int)(strrchr(exe, '/') - exe), exe);
	if (access(run, X_OK))
		return false;
	snprintf(arg, sizeof(arg), "--trace=%s", trace_path);
	snprintf(stats_env, sizeof(stats_env), "%s", stats_path);
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (!pid) {
		setenv("NOWAIT_STATS_FILE", stats_env, 1);
		setenv("NOWAIT_TRACE_CHILD", file, 1);
		execl(run, run, "--user", arg, "--stats=json", "--", exe,
		      (char *)NULL);
		_exit(127);
	}
	T_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	T_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return true;
#else
	(void)file;
	return false;
#endif
}

/* Check the trace and the statistics one pass left behind. */
static void check_pass(const char *file)
{
	const char *text = slurp(trace_path), *json = slurp(stats_path);

	T_ASSERT(strstr(text, " io_uring_setup(8, flags=0x0, sq=8, cq=16) = "));
	/* The OPENAT's fd was the child's: any fd, read back from the line. */
	open_res = (int)strtol(strstr(line_of(text, 1), ") = ") + 4, NULL, 10);
	T_ASSERT_GE(open_res, 3);
	expect(text, 1, "OPENAT", open_res, "inline");
	if (!strstr(line_of(text, 1), file))
		fprintf(stderr, "no \"%s\" in: %s\n", file, line_of(text, 1));
	T_ASSERT(strstr(line_of(text, 1), file));
	expect(text, 2, "READ", 5, "inline");
	expect(text, 3, "WRITE", 3, "inline|worker");
	expect(text, 4, "READ", 2, "parked");
	expect(text, 5, "TIMEOUT", -ETIME, "timer");
	T_ASSERT(strstr(line_of(text, 5), "ETIME"));
	expect(text, 6, "READ", -ECANCELED, "cancelled");
	expect(text, 7, "ASYNC_CANCEL", 0, "inline");
	check_stats(text, json);
}

static void fresh(char *tmpl)
{
	int fd;

	strcpy(tmpl + strlen(tmpl) - 6, "XXXXXX");
	T_ASSERT_GE(fd = mkstemp(tmpl), 0);
	close(fd);
}

int main(void)
{
	char file[] = "/tmp/nowait-trace-data-XXXXXX";
	int fd, status;
	pid_t pid;

#ifdef HAVE_LIBURING
	if (getenv("NOWAIT_TRACE_CHILD"))
		liburing_child(getenv("NOWAIT_TRACE_CHILD"));
#endif
	t_require_engine();
	if (t_engine() == T_ENGINE_KERNEL) {
		puts("skip: the kernel has no NOWAIT_TRACE");
		return T_EXIT_SKIP;
	}
	t_watchdog(30);
	T_ASSERT_GE(fd = mkstemp(file), 0);
	T_ASSERT_EQ(write(fd, "hello", 5), 5);
	close(fd);
	fresh(trace_path);
	fresh(stats_path);
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (!pid)
		child(file);
	T_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	T_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	check_pass(file);
	unlink(trace_path);
	unlink(stats_path);
	fresh(trace_path);
	fresh(stats_path);
	if (liburing_pass(file))
		check_pass(file);
	else
		puts("liburing pass skipped (sanitizer build or no liburing)");
	unlink(trace_path);
	unlink(stats_path);
	unlink(file);
	return T_EXIT_PASS;
}
