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
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pressure.h"

#define NW_PRESSURE_INTERVAL_NS	  20000000ULL /* 20 ms */
#define NW_PRESSURE_BUSY_PERMILLE 200	      /* stalled 20% of the time */

enum { SRC_UNKNOWN, SRC_PSI, SRC_LOADAVG };

static pthread_mutex_t sample_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t sampled_ns; /* when the last sample was taken */
static uint64_t stall_us;   /* PSI "some" total then (under the lock) */
static int source;	    /* SRC_*, decided by the first sample (lock) */
static bool busy = true;    /* the verdict everyone reads */

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

/* The "some ... total=N" field of /proc/pressure/cpu, or -1. */
static long long psi_some_total(void)
{
	char buf[256], *p;

	if (read_proc("/proc/pressure/cpu", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "some");
	p = p ? strstr(p, "total=") : NULL;
	return p ? atoll(p + 6) : -1;
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

static void sample(uint64_t now, uint64_t last)
{
	long long total = -1;
	bool verdict = true;

	if (source != SRC_LOADAVG)
		total = psi_some_total();
	if (total >= 0) {
		/* The first PSI sample only sets the base. */
		if (source == SRC_PSI && now > last) {
			uint64_t stalled = ((uint64_t)total - stall_us) * 1000;

			verdict = stalled * 1000 >
				  (now - last) * NW_PRESSURE_BUSY_PERMILLE;
		}
		stall_us = (uint64_t)total;
		source = SRC_PSI;
	} else {
		source = SRC_LOADAVG;
		verdict = loadavg_excess() > 0;
	}
	__atomic_store_n(&busy, verdict, __ATOMIC_RELAXED);
}

bool nw_cpu_busy(uint64_t now_ns)
{
	uint64_t last = __atomic_load_n(&sampled_ns, __ATOMIC_RELAXED);

	if (now_ns - last >= NW_PRESSURE_INTERVAL_NS &&
	    !pthread_mutex_trylock(&sample_lock)) {
		last = sampled_ns;
		if (now_ns - last >= NW_PRESSURE_INTERVAL_NS) {
			sample(now_ns, last);
			__atomic_store_n(&sampled_ns, now_ns, __ATOMIC_RELAXED);
		}
		pthread_mutex_unlock(&sample_lock);
	}
	return __atomic_load_n(&busy, __ATOMIC_RELAXED);
}
