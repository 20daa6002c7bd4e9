/* SPDX-License-Identifier: MIT */
/*
 * The adaptive spin's per-thread signal (src/pressure.c nw_thread_queued):
 * a thread that waited for a CPU (its schedstat run_delay) more than a
 * tenth of a window does not spin for a while. The clock is made up (the
 * hook takes the time as an argument); the waiting is the thread's real
 * run-queue delay, read here around every call, so that each assertion is
 * made only when the delay the engine saw is known to be on one side of
 * the threshold:
 * - a new thread says "queued" until a first window exists;
 * - a 500 ms window in which it waited under a tenth of that is free;
 * - a 5 ms window in which it waited 2 ms (it shares one CPU with a busy
 *   thread and yields to it) is queued, and stays queued through the
 *   50 ms hold;
 * - once it stopped waiting, free again after the hold;
 * - another thread has its own state: new, so queued at its first call.
 * Skipped without /proc/thread-self/schedstat. The io_uring engine is not
 * involved: both engine runs do the same.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include "helpers.h"
#include "nowait-hook.h"

#define MS     1000000ULL
#define T0     (2000000 * MS) /* an arbitrary start of the made-up clock */
#define WIN    (5 * MS)	      /* NW_QUEUED_WINDOW_NS */
#define HOLD   (50 * MS)      /* NW_QUEUED_HOLD_NS */
#define LONG   (500 * MS)     /* a window well under NW_QUEUED_MAX_WINDOW_NS */
#define TRIES  50
#define WAITED (2 * MS) /* the delay made for the queued window */

/* This thread's run_delay in ns, or -1. */
static long long run_delay(void)
{
	char buf[128], *p = buf;

	if (t_read_text("/proc/thread-self/schedstat", buf, sizeof(buf)) < 0)
		return -1;
	while (*p >= '0' && *p <= '9')
		p++;
	return *p == ' ' ? strtoll(p + 1, NULL, 10) : -1;
}

/* One call with the delay read before and after it. */
struct look {
	long long before, after;
	bool queued;
};

static struct look look_at(unsigned long long now)
{
	struct look l;

	l.before = run_delay();
	l.queued = nowait_hook_thread_queued(now);
	l.after = run_delay();
	return l;
}

static int stop;

static void *busy(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

static void *first_call(void *arg)
{
	*(bool *)arg = nowait_hook_thread_queued(T0 + 1000 * MS);
	return NULL;
}

/*
 * Windows of LONG until one is known to be clean (the delay grew by less
 * than a tenth of it, whatever the engine's read saw): it must be free.
 * prev is the look that began the window; returns the last look.
 */
static struct look expect_free(unsigned long long *now, struct look prev)
{
	struct look l;
	int i;

	for (i = 0; i < TRIES; i++) {
		*now += LONG;
		l = look_at(*now);
		if ((unsigned long long)(l.after - prev.before) * 10 < LONG) {
			T_ASSERT(!l.queued);
			return l;
		}
		prev = l; /* a loaded moment: try the next window */
	}
	fprintf(stderr, "never a clean %llu ms window\n", LONG / MS);
	exit(T_EXIT_SKIP);
}

/* Share this thread's CPU with a busy thread until it waited WAITED. */
static bool make_it_wait(long long from, pthread_t *thr)
{
	cpu_set_t set;
	int cpu = sched_getcpu(), i;

	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return false;
	T_ASSERT_EQ(pthread_create(thr, NULL, busy, NULL), 0);
	T_ASSERT_EQ(pthread_setaffinity_np(*thr, sizeof(set), &set), 0);
	for (i = 0; i < 1000000 && run_delay() - from < (long long)WAITED; i++)
		sched_yield();
	return run_delay() - from >= (long long)WAITED;
}

int main(void)
{
	unsigned long long now = T0;
	struct look l, base;
	cpu_set_t all;
	pthread_t thr;
	bool other;

	if (run_delay() < 0) {
		fprintf(stderr, "no /proc/thread-self/schedstat\n");
		return T_EXIT_SKIP;
	}
	T_ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);

	/* New: no window yet, so queued (and no second read inside it). */
	l = look_at(now);
	T_ASSERT(l.queued);
	T_ASSERT(nowait_hook_thread_queued(now + WIN / 2));

	/* A window it barely waited in: free. */
	base = expect_free(&now, l);

	/* From that free look, a 5 ms window with 2 ms waited: queued. */
	if (!make_it_wait(base.after, &thr)) {
		fprintf(stderr, "could not share a CPU with a busy thread\n");
		return T_EXIT_SKIP;
	}
	now += WIN;
	l = look_at(now);
	T_ASSERT_GE(l.before - base.after, (long long)WAITED);
	T_ASSERT(l.queued);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	T_ASSERT_EQ(pthread_join(thr, NULL), 0);
	T_ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);

	/* Held for 50 ms whatever happens meanwhile. */
	T_ASSERT(nowait_hook_thread_queued(now + 10 * MS));
	T_ASSERT(nowait_hook_thread_queued(now + HOLD - MS));

	/* After the hold, a window it barely waited in: free again. */
	now += HOLD;
	l = look_at(now);
	(void)expect_free(&now, l);

	/* Another thread: its own state, new, so queued at first. */
	T_ASSERT_EQ(pthread_create(&thr, NULL, first_call, &other), 0);
	T_ASSERT_EQ(pthread_join(thr, NULL), 0);
	T_ASSERT(other);
	return T_EXIT_PASS;
}
