/* SPDX-License-Identifier: MIT */
/*
 * The CPU pressure verdict the adaptive spin obeys (src/pressure.c),
 * driven by a pressure file this test writes (NOWAIT_CPU_PRESSURE) and a
 * clock it makes up (nowait_hook_cpu_busy takes the time as an argument),
 * so that nothing depends on the machine's real load or speed:
 * - busy until two samples exist;
 * - free while tasks wait for a CPU less than a fifth of the time (from
 *   the start too: the first verdict, busy, decays like a load's);
 * - busy in the first window after the CPUs become oversubscribed, and
 *   busy all through the load;
 * - free again within 300 ms of the load ending (not avg10's 10-20 s),
 *   and not before the load's trace has decayed for a few windows;
 * - the file is read through one fd kept open in the engine's high range;
 *   closed behind the engine's back and its number reused by the program,
 *   the program's file stays open and the verdict follows the file again
 *   through a fresh fd;
 * - a missing file falls back to /proc/loadavg (either verdict) without
 *   failing.
 * The io_uring engine is not involved: both engine runs do the same.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include "helpers.h"
#include "nowait-hook.h"

#define MS	 1000000ULL
#define STEP_NS	 (5 * MS) /* how often the "program" asks */
#define LOAD_NS	 (2000 * MS)
#define FLIP_MAX (300 * MS)
#define FLIP_MIN (40 * MS)
#define T0	 (1000000 * MS) /* an arbitrary start of the made-up clock */

static char path[64];
static unsigned long long stall_us; /* the file's "some" total */

static void write_total(void)
{
	char buf[160];
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	int n = snprintf(buf, sizeof(buf),
			 "some avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n"
			 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
			 stall_us);

	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(write(fd, buf, n), n);
	close(fd);
}

/*
 * Advance the clock by dur ns in steps, the file's stall total by
 * permille/1000 of each step, asking for the verdict at each step. Returns
 * the offset of the first step whose verdict differs from the one before
 * it began (or -1), and leaves the last verdict in *last.
 */
static long long run(unsigned long long *now, unsigned long long dur,
		     unsigned int permille, bool *last)
{
	unsigned long long t, start = *now;
	long long flip = -1;
	bool was = *last, b;

	for (t = 0; t < dur; t += STEP_NS) {
		stall_us += STEP_NS / 1000 * permille / 1000;
		write_total();
		*now += STEP_NS;
		b = nowait_hook_cpu_busy(*now);
		if (b != was && flip < 0)
			flip = (long long)(*now - start);
		*last = b;
	}
	return flip;
}

/* The fd, other than skip, whose link names f; -1 if none, fails if two. */
static int fd_naming(const char *f, int skip)
{
	char link[64], target[PATH_MAX];
	struct dirent *de;
	int found = -1, n;
	DIR *d = opendir("/proc/self/fd");

	T_ASSERT(d != NULL);
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);
		ssize_t len;

		if (de->d_name[0] == '.' || fd == skip || fd == dirfd(d))
			continue;
		n = snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		T_ASSERT_LT(n, (int)sizeof(link));
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = 0;
		if (strcmp(target, f))
			continue;
		T_ASSERT_EQ(found, -1);
		found = fd;
	}
	closedir(d);
	return found;
}

/* The engine's fd range starts here (fdhigh.c); 0: no range. */
static int high_base(void)
{
	struct rlimit rl;

	T_ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur / 2 <= 3)
		return 0;
	return rl.rlim_cur / 2 > 65536 ? 65536 : (int)(rl.rlim_cur / 2);
}

int main(void)
{
	unsigned long long now = T0;
	long long flip;
	bool busy = true;
	char own[sizeof(path) + 32];
	int fd, kept;

	snprintf(path, sizeof(path), "/tmp/nowait-pressure-%d", (int)getpid());
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	T_ASSERT_GE(fd, 0);
	close(fd);
	setenv("NOWAIT_CPU_PRESSURE", path, 1);
	stall_us = 123456789;
	write_total();

	/* No sample yet: busy, and the first sample only sets the base. */
	T_ASSERT(nowait_hook_cpu_busy(now));
	T_ASSERT(nowait_hook_cpu_busy_cached());

	/* A quiet machine (5% stalled): free after the second sample. */
	flip = run(&now, 500 * MS, 50, &busy);
	T_ASSERT(!busy);
	T_ASSERT_GE(flip, 0);
	T_ASSERT_LE(flip, (long long)FLIP_MAX);

	/* Just under the threshold (15%) stays free. */
	T_ASSERT_EQ(run(&now, 500 * MS, 150, &busy), -1);
	T_ASSERT(!busy);

	/* One fd, kept open and high, reads the file for every sample. */
	kept = fd_naming(path, -1);
	T_ASSERT_GE(kept, high_base());

	/*
	 * A program that closes fds it did not open, then gets that number
	 * for a file of its own: the engine must not close it, and reads the
	 * pressure file again through a fresh fd (the load below is seen).
	 */
	T_ASSERT_EQ(close(kept), 0);
	snprintf(own, sizeof(own), "%s.own", path);
	fd = open(own, O_CREAT | O_EXCL | O_RDONLY | O_CLOEXEC, 0600);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(unlink(own), 0);
	strcat(own, " (deleted)");
	T_ASSERT_EQ(dup2(fd, kept), kept);
	close(fd);

	/* A load (100% stalled): busy within one 20 ms window, throughout. */
	flip = run(&now, LOAD_NS, 1000, &busy);
	T_ASSERT(busy);
	T_ASSERT_GE(flip, 0);
	T_ASSERT_LE(flip, 45 * MS);
	T_ASSERT_EQ(fd_naming(own, -1), kept);
	T_ASSERT_EQ(close(kept), 0);
	T_ASSERT_GE(fd_naming(path, kept), high_base());

	/* Load ends: free again within a few hundred ms, not at once. */
	flip = run(&now, 3000 * MS, 0, &busy);
	T_ASSERT(!busy);
	T_ASSERT_GE(flip, (long long)FLIP_MIN);
	T_ASSERT_LE(flip, (long long)FLIP_MAX);
	fprintf(stderr, "free again %lld ms after the load ended\n",
		flip / (long long)MS);

	/* A second burst of half-stalled load (50%) is busy as well. */
	flip = run(&now, 1000 * MS, 500, &busy);
	T_ASSERT(busy);
	T_ASSERT_LE(flip, 45 * MS);
	flip = run(&now, 3000 * MS, 0, &busy);
	T_ASSERT(!busy);
	T_ASSERT_LE(flip, (long long)FLIP_MAX);

	/* A long silence (nobody asked for 10 s) then a quiet window: free. */
	now += 10000 * MS;
	T_ASSERT_EQ(run(&now, 200 * MS, 0, &busy), -1);
	T_ASSERT(!busy);

	/* The file gone: the loadavg fallback answers, whatever it says. */
	T_ASSERT_EQ(unlink(path), 0);
	now += 100 * MS;
	(void)nowait_hook_cpu_busy(now);
	now += 100 * MS;
	T_ASSERT_EQ(nowait_hook_cpu_busy(now), nowait_hook_cpu_busy_cached());
	return T_EXIT_PASS;
}
