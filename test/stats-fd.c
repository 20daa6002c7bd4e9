/* SPDX-License-Identifier: MIT */
/*
 * NOWAIT_STATS_FILE and the program's fd numbers: a ring's table is
 * written when the ring is released, which can be on an engine thread
 * (the reactor's teardown of a ring the program let go of) at any moment
 * of the program's. The report must not go through a fd at a number the
 * program may be given, or be closing: a report open at a low number is
 * closed by the engine when it is done, and a program that closed that
 * number meanwhile (a sweep of the fds it thinks it made, as the fuzz
 * harnesses do) and got it back from open() or accept() loses its fd
 * (the sqe-fuzz finding: "dup2(s, 213)" of an accepted socket failing).
 *
 * The report goes to a FIFO kept full, so that its write blocks and the
 * fd it writes through stays open while this thread looks at every fd
 * of the process: none at a low number may be the FIFO's but this
 * test's own two. Then the FIFO is drained and the released ring's table
 * must arrive (user engine; the kernel has no report, and must touch no
 * fd of the program either).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "helpers.h"

/* A ring's table in the report (stats.c), once it has its READ line. */
#define REPORT " READ "

static char fifo[64] = "/tmp/nowait-stats-fd-XXXXXX"; /* then /fifo */
static struct stat fifo_st;

/* An fd below limit, other than a and b, that is the FIFO: or -1. */
static int low_fifo_fd(int limit, int a, int b)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int found = -1;

	T_ASSERT(d != NULL);
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);
		struct stat st;

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd == a ||
		    fd == b || fd == dirfd(d) || fd >= limit)
			continue;
		if (!fstat(fd, &st) && st.st_dev == fifo_st.st_dev &&
		    st.st_ino == fifo_st.st_ino)
			found = fd;
	}
	closedir(d);
	return found;
}

/* A ring with a READ parked on an empty pipe, let go of unfinished. */
static void let_go_of_ring(void)
{
	static char buf[8];
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	t_prep_rw(t_get_sqe(&r), IORING_OP_READ, p[0], buf, sizeof(buf), -1ULL,
		  1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	t_ring_exit(&r);
	close(p[1]); /* the READ ends (cancelled, or at EOF) */
	close(p[0]);
}

/* Drain the FIFO for up to ms, watching the fds; what was read. */
static size_t drain(int rfd, int wfd, int limit, char *out, size_t len,
		    unsigned int ms, bool until_report)
{
	uint64_t end = t_now_us() + ms * 1000ULL;
	size_t got = 0;

	while (t_now_us() < end) {
		char chunk[4096];
		ssize_t n;

		T_ASSERT_EQ(low_fifo_fd(limit, rfd, wfd), -1);
		if (!until_report) {
			usleep(2000);
			continue;
		}
		n = read(rfd, chunk, sizeof(chunk));
		/* The padding's dots left out. */
		for (ssize_t i = 0; i < n && got < len - 1; i++)
			if (chunk[i] != '.')
				out[got++] = chunk[i];
		out[got] = 0;
		if (n <= 0)
			usleep(2000);
		if (strstr(out, REPORT))
			break;
	}
	return got;
}

int main(void)
{
	static char report[1 << 16];
	struct rlimit rl;
	int rfd, wfd, limit;
	char pad[4096];
	size_t got;

	t_require_engine();
	t_watchdog(30);
	/* The engine's fds live at or above half the soft limit. */
	T_ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	limit = rl.rlim_cur / 2 > 1024 ? 1024 : (int)(rl.rlim_cur / 2);
	T_ASSERT_NE(mkdtemp(fifo), NULL);
	strcat(fifo, "/fifo");
	T_ASSERT_EQ(mkfifo(fifo, 0600), 0);
	T_ASSERT_EQ(stat(fifo, &fifo_st), 0);
	T_ASSERT_GE(rfd = open(fifo, O_RDONLY | O_NONBLOCK), 0);
	T_ASSERT_GE(wfd = open(fifo, O_WRONLY | O_NONBLOCK), 0);
	/* Read by the engine at its first setup. */
	setenv("NOWAIT_STATS", "1", 1);
	setenv("NOWAIT_STATS_FILE", fifo, 1);
	memset(pad, '.', sizeof(pad));
	/* Full: the report's first write blocks, its fd held open. */
	while (write(wfd, pad, sizeof(pad)) > 0)
		;
	let_go_of_ring();
	drain(rfd, wfd, limit, report, sizeof(report), 300, false);
	/* The padding out, the report in (written by the engine thread). */
	got = drain(rfd, wfd, limit, report, sizeof(report),
		    t_engine() == T_ENGINE_USER ? 5000 : 300, true);
	if (t_engine() == T_ENGINE_USER) {
		if (!strstr(report, REPORT))
			fprintf(stderr, "%zu bytes, no report of the ring\n",
				got);
		T_ASSERT(strstr(report, "nowait stats: pid ") != NULL);
		T_ASSERT(strstr(report, REPORT) != NULL);
	}
	close(wfd);
	close(rfd);
	unlink(fifo);
	*strrchr(fifo, '/') = 0;
	rmdir(fifo);
	return T_EXIT_PASS;
}
