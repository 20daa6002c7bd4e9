/* SPDX-License-Identifier: MIT */
/*
 * Does other runnable work want the CPUs? The question every spin-before-
 * sleep policy must ask: a thread that spins while tasks wait for a CPU
 * delays them, and on a small machine the task it delays is usually the
 * very peer it waits for (the 2018 pipe busy-wait RFC lost up to 100% on
 * hackbench with many groups for this reason).
 *
 * The answer comes from the kernel's pressure stall information: the
 * "some" line of /proc/pressure/cpu counts, in microseconds, the time at
 * least one runnable task waited for a CPU. Its growth over the last
 * interval, divided by the interval, is the share of time the CPUs were
 * oversubscribed. It is sampled by whichever thread of the process asks
 * first after NW_PRESSURE_INTERVAL_NS (one open/pread/close, shared by all
 * threads); everyone else reads the cached verdict. Without PSI (kernels
 * built without it, psi=0) the runnable count of /proc/loadavg stands in:
 * busy when more tasks are runnable than there are CPUs.
 *
 * Until two samples exist the verdict is "busy": a policy starts by not
 * spinning and only spins once it knows the CPUs are free.
 *
 * The state can live in a shared page (nw_pressure_share, which the
 * preload library's pipe spinner calls through nowait_hook_pressure_share
 * of include/nowait-hook.h before the program forks), so that a family of
 * forked processes (hackbench's hundreds) takes one sample per interval
 * between them instead of one each: every sample costs a process its
 * first-touch faults on the code and data it needs, expensive on a VM.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "pressure.h"

#ifndef NW_PRESSURE_INTERVAL_NS
#define NW_PRESSURE_INTERVAL_NS 20000000ULL /* 20 ms */
#endif
#ifndef NW_PRESSURE_BUSY_PERMILLE
#define NW_PRESSURE_BUSY_PERMILLE 200 /* stalled 20% of the time */
#endif

enum { SRC_UNKNOWN, SRC_PSI, SRC_LOADAVG };

struct nw_pressure {
	uint64_t sampled_ns; /* when the last sample was taken */
	uint64_t sampling;   /* 0, or when the sampler in charge started */
	uint64_t stall_us;   /* PSI "some" total at the last sample */
	long stall_ewma;     /* stalled permille, moving average */
	int source;	     /* SRC_*, decided by the first sample */
	bool busy;	     /* the verdict everyone reads */
};

static struct nw_pressure local = {.stall_ewma = 1000, .busy = true};
static struct nw_pressure *ps = &local;

/* Read a small /proc file into buf (NUL-terminated); bytes or -1. */
static ssize_t read_proc(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, len - 1, 0);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* "12.34" -> 1234 (hundredths), without the locale machinery of strtod. */
static long hundredths(const char *p)
{
	long v = 0;
	int frac = -1;

	for (; (*p >= '0' && *p <= '9') || (*p == '.' && frac < 0); p++) {
		if (*p == '.') {
			frac = 0;
			continue;
		}
		if (frac >= 2)
			break;
		v = v * 10 + (*p - '0');
		if (frac >= 0)
			frac++;
	}
	for (frac = frac < 0 ? 0 : frac; frac < 2; frac++)
		v *= 10;
	return v;
}

/*
 * The "some" line of /proc/pressure/cpu: its total= (microseconds, or -1)
 * and its avg10= in hundredths of a percent.
 */
static long long psi_some(long *avg10)
{
	char buf[256], *p, *a;
	long long total = 0;

	if (read_proc("/proc/pressure/cpu", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "some");
	a = p ? strstr(p, "avg10=") : NULL;
	*avg10 = a ? hundredths(a + 6) : 0;
	p = p ? strstr(p, "total=") : NULL;
	if (!p)
		return -1;
	for (p += 6; *p >= '0' && *p <= '9'; p++)
		total = total * 10 + (*p - '0');
	return total;
}

/* Runnable tasks minus CPUs, from the "R/T" field of /proc/loadavg. */
static int loadavg_excess(void)
{
	char buf[128], *p;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (read_proc("/proc/loadavg", buf, sizeof(buf)) < 0)
		return 0;
	p = strchr(buf, '/');
	while (p && p > buf && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return p ? atoi(p) - (n > 0 ? (int)n : 1) : 0;
}

/* One sample; the caller is the sampler in charge. */
static void sample(uint64_t now, uint64_t last)
{
	long long total = -1;
	bool verdict = true;
	long avg10 = 0;

	if (ps->source != SRC_LOADAVG)
		total = psi_some(&avg10);
	if (total >= 0) {
		/*
		 * The first PSI sample only sets the base. The kernel folds
		 * per-CPU stall time into the total in lumps, so one 20 ms
		 * window says little: a moving average of the windows (about
		 * four of them) decides, and the kernel's own 10 s average
		 * keeps a machine that has been busy from looking idle in a
		 * lull.
		 */
		if (ps->source == SRC_PSI && now > last) {
			uint64_t stalled =
				((uint64_t)total - ps->stall_us) * 1000;
			uint64_t pm = stalled * 1000 / (now - last);

			ps->stall_ewma += ((long)(pm > 10000 ? 10000 : pm) -
					   ps->stall_ewma) /
					  4;
			verdict = ps->stall_ewma > NW_PRESSURE_BUSY_PERMILLE ||
				  avg10 > NW_PRESSURE_BUSY_PERMILLE * 10;
		}
		ps->stall_us = (uint64_t)total;
		ps->source = SRC_PSI;
	} else {
		ps->source = SRC_LOADAVG;
		verdict = loadavg_excess() > 0;
	}
	__atomic_store_n(&ps->busy, verdict, __ATOMIC_RELAXED);
}

void nw_pressure_share(void)
{
	struct nw_pressure *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	*p = local;
	ps = p;
}

bool nw_cpu_busy_cached(void)
{
	return __atomic_load_n(&ps->busy, __ATOMIC_RELAXED);
}

bool nw_cpu_busy(uint64_t now_ns)
{
	uint64_t last = __atomic_load_n(&ps->sampled_ns, __ATOMIC_ACQUIRE);
	uint64_t owner = __atomic_load_n(&ps->sampling, __ATOMIC_RELAXED);

	if (now_ns - last < NW_PRESSURE_INTERVAL_NS)
		return nw_cpu_busy_cached();
	/* Take charge; a sampler that died in charge is replaced after 1 s. */
	if ((owner && now_ns - owner < 1000000000ULL) ||
	    !__atomic_compare_exchange_n(&ps->sampling, &owner, now_ns, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return nw_cpu_busy_cached();
	last = __atomic_load_n(&ps->sampled_ns, __ATOMIC_RELAXED);
	if (now_ns - last >= NW_PRESSURE_INTERVAL_NS) {
		sample(now_ns, last);
		__atomic_store_n(&ps->sampled_ns, now_ns, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&ps->sampling, 0, __ATOMIC_RELEASE);
	return nw_cpu_busy_cached();
}
