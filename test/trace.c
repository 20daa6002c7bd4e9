/* SPDX-License-Identifier: MIT */
/*
 * NOWAIT_TRACE: every request appears exactly once in the trace, with its
 * opcode, its result and the path that served it: an OPENAT, READ and
 * WRITE that complete inline, a pipe READ that parks, a TIMEOUT that
 * fires, a READ cancelled by ASYNC_CANCEL; the setup call has a line too;
 * NOWAIT_TRACE_OPS would filter (checked by the line count per opcode).
 * The user engine only: the kernel has no such trace.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

static char trace_path[] = "/tmp/nowait-trace-XXXXXX";
static int open_res; /* what the OPENAT returned */

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
	static char text[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	T_ASSERT_GE(fd, 0);
	n = read(fd, text, sizeof(text) - 1);
	T_ASSERT_GT(n, 0);
	text[n] = '\0';
	close(fd);
	return text;
}

int main(void)
{
	char file[] = "/tmp/nowait-trace-data-XXXXXX";
	struct t_ring r;
	const char *text;
	int fd;

	t_require_engine();
	if (t_engine() == T_ENGINE_KERNEL) {
		puts("skip: the kernel has no NOWAIT_TRACE");
		return T_EXIT_SKIP;
	}
	t_watchdog(30);
	fd = mkstemp(trace_path);
	T_ASSERT_GE(fd, 0);
	close(fd);
	fd = mkstemp(file);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(write(fd, "hello", 5), 5);
	close(fd);
	/* Read by the engine once, at its first setup. */
	setenv("NOWAIT_TRACE", trace_path, 1);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	run_requests(&r, file);
	t_ring_exit(&r);
	text = slurp(trace_path);
	T_ASSERT(strstr(text, " io_uring_setup(8, flags=0x0, sq=8, cq=16) = "));
	expect(text, 1, "OPENAT", open_res, "inline");
	T_ASSERT(strstr(line_of(text, 1), file));
	expect(text, 2, "READ", 5, "inline");
	expect(text, 3, "WRITE", 3, "inline|worker");
	expect(text, 4, "READ", 2, "parked");
	expect(text, 5, "TIMEOUT", -ETIME, "timer");
	T_ASSERT(strstr(line_of(text, 5), "ETIME"));
	expect(text, 6, "READ", -ECANCELED, "cancelled");
	expect(text, 7, "ASYNC_CANCEL", 0, "inline");
	unlink(trace_path);
	unlink(file);
	return T_EXIT_PASS;
}
