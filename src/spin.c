/* SPDX-License-Identifier: MIT */
/*
 * When to spin before sleeping in a wait. The 2018 pipe busy-wait RFC
 * showed that a few microseconds of spinning saves the sleep and wakeup of
 * a quick handoff, but that no fixed time suits every workload, so it
 * shipped a tunable defaulting to 0. Here NOWAIT_SPIN_US=N is that tunable
 * and the default, adaptive, learns per ring:
 * - it spins about twice as long as recent waits took, capped at
 *   NW_SPIN_MAX_NS, so a wait that usually ends quickly ends while spinning
 *   and a long one (a slow peer, a timer) does not spin at all;
 * - when spins mostly fail (the hit rate falls below a quarter) it stops
 *   spinning for a while, then probes again;
 * - on a single CPU it never spins: the event it waits for needs the CPU,
 *   and likewise while other tasks wait for a CPU (pressure.c: the
 *   machine's PSI, and the waiting thread's own run-queue delay).
 * Waits measured while sleeping feed the same average, so the policy comes
 * back to spinning when waits get short again.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "pressure.h"
#include "spin.h"

#define NW_SPIN_MAX_NS	 50000LL
#define NW_SPIN_START_NS 10000LL /* first guess of a wait's length */
#define NW_SPIN_BACKOFF	 32	 /* waits without spinning after failures */

/*
 * Online CPUs, learnt once. Waiters on many threads ask at once: relaxed
 * atomics make the lazy init a benign race (each computes the same value)
 * rather than a data race.
 */
static int ncpu(void)
{
	static int n;
	int v = __atomic_load_n(&n, __ATOMIC_RELAXED);

	if (!v) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		v = c > 0 ? (int)c : 1;
		__atomic_store_n(&n, v, __ATOMIC_RELAXED);
	}
	return v;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void nw_spin_init(struct nw_spin *s)
{
	const char *v = getenv("NOWAIT_SPIN_US");

	memset(s, 0, sizeof(*s));
	s->adaptive = !v || !*v || !strcmp(v, "adaptive");
	if (!s->adaptive)
		s->fixed_ns = atoll(v) * 1000LL;
	s->avg_wait_ns = NW_SPIN_START_NS;
	s->hit_rate = 1024;
}

long long nw_spin_budget(struct nw_spin *s)
{
	long long avg, budget;
	unsigned int backoff;
	uint64_t now;

	if (!s->adaptive)
		return s->fixed_ns > 0 ? s->fixed_ns : 0;
	now = mono_ns();
	if (ncpu() < 2 || nw_cpu_busy(now) || nw_thread_queued(now))
		return 0;
	backoff = __atomic_load_n(&s->backoff, __ATOMIC_RELAXED);
	if (backoff) {
		__atomic_store_n(&s->backoff, backoff - 1, __ATOMIC_RELAXED);
		return 0;
	}
	avg = __atomic_load_n(&s->avg_wait_ns, __ATOMIC_RELAXED);
	if (avg > NW_SPIN_MAX_NS)
		return 0;
	budget = 2 * avg;
	return budget > NW_SPIN_MAX_NS ? NW_SPIN_MAX_NS : budget;
}

void nw_spin_learn(struct nw_spin *s, long long waited_ns, bool satisfied,
		   bool spun, bool spin_hit)
{
	long long avg;
	int rate;

	if (spun) {
		__atomic_add_fetch(&s->spins, 1, __ATOMIC_RELAXED);
		if (spin_hit)
			__atomic_add_fetch(&s->spin_hits, 1, __ATOMIC_RELAXED);
	}
	if (!s->adaptive)
		return;
	if (satisfied) {
		avg = __atomic_load_n(&s->avg_wait_ns, __ATOMIC_RELAXED);
		avg += (waited_ns - avg) / 8;
		__atomic_store_n(&s->avg_wait_ns, avg, __ATOMIC_RELAXED);
	}
	if (!spun)
		return;
	rate = __atomic_load_n(&s->hit_rate, __ATOMIC_RELAXED);
	rate += ((spin_hit ? 1024 : 0) - rate) / 8;
	if (rate < 256) {
		/* Spinning does not pay here now: sleep for a while. */
		__atomic_store_n(&s->backoff, NW_SPIN_BACKOFF,
				 __ATOMIC_RELAXED);
		rate = 512; /* and give the next probe a fair chance */
	}
	__atomic_store_n(&s->hit_rate, rate, __ATOMIC_RELAXED);
}
