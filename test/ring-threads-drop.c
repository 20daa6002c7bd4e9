/* SPDX-License-Identifier: MIT */
/*
 * Threads that each make a ring, run a NOP on it and let it go, 8 at a
 * time, round after round (liburing's futex.t does this 2,000 times): the
 * rings they let go of must go, whichever ring is newest when another
 * thread sets one up, and a close no hook sees (liburing's). On the kernel a ring's mappings leave with munmap
 * and its fd with close; nowait learns of it only by asking, and a ring
 * it never asks about again keeps its engine mappings and fds for good.
 * So after ROUNDS rounds (and a few rings on the main thread, whose setups
 * reap), the ring mappings and fds must be about what they were
 * after the first round, not grown by the rings of every round.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "helpers.h"

#define NTHREADS   8
#define ROUNDS	   100
/* A round that leaked half its rings would add 8 ring mappings. */
#define MAPS_SLACK 32

/* Mappings of rings: nowait's memfds, the kernel's io_uring files. */
static int nr_maps(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int n = 0;

	T_ASSERT(f != NULL);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "nowait-ring") || strstr(line, "io_uring");
	fclose(f);
	return n;
}

static int nr_fds(void)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir("/proc/self/fd");

	T_ASSERT(d != NULL);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

/* Let a ring go as liburing does: raw system calls, which no hook sees. */
static void raw_exit(struct t_ring *r)
{
	if (r->sqes)
		syscall(SYS_munmap, r->sqes, r->sqes_sz);
	if (r->cq_ptr && r->cq_ptr != r->sq_ptr)
		syscall(SYS_munmap, r->cq_ptr, r->cq_sz);
	syscall(SYS_munmap, r->sq_ptr, r->sq_sz);
	syscall(SYS_close, r->fd);
}

static pthread_barrier_t together;

/*
 * Make a ring, run a NOP on it, let it go (no hook sees the close). A
 * round's threads hold their rings at the same time, as futex.t's do.
 */
static void *nop_ring(void *arg)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 1, NULL), 0);
	if (arg)
		pthread_barrier_wait(&together);
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, 5);
	T_ASSERT_EQ(t_run(&r, 5), 0);
	raw_exit(&r);
	return NULL;
}

static void round_of_threads(void)
{
	pthread_t th[NTHREADS];

	for (int i = 0; i < NTHREADS; i++)
		T_ASSERT_EQ(pthread_create(&th[i], NULL, nop_ring, &together),
			    0);
	for (int i = 0; i < NTHREADS; i++)
		T_ASSERT_EQ(pthread_join(th[i], NULL), 0);
}

/* Rings on the main thread: each setup looks at rings let go of. */
static void reap_rounds(void)
{
	for (int i = 0; i < 2 * NTHREADS; i++)
		nop_ring(NULL);
}

/*
 * The same on one thread, in a fixed order: a window of WINDOW rings
 * held, each step making a new one and letting the oldest go, so that
 * every ring let go of has always WINDOW newer ones still in use.
 */
#define WINDOW 6
#define STEPS  200

static void sliding_window(void)
{
	struct t_ring r[WINDOW];

	for (int i = 0; i < STEPS + WINDOW; i++) {
		if (i >= WINDOW)
			raw_exit(&r[i % WINDOW]);
		if (i < STEPS)
			T_ASSERT_EQ(t_ring_init(&r[i % WINDOW], 1, NULL), 0);
	}
}

/*
 * Wait (at most 10 s) for the counts to come down to maps and fds: the
 * kernel's ring exit is async. nowait's reap is done by the setups of
 * reap_rounds, before: a ring not found by then stays.
 */
static void settle(int maps, int fds)
{
	for (int i = 0; i < 1000; i++) {
		if (nr_maps() <= maps && nr_fds() <= fds)
			break;
		usleep(10000);
	}
}

int main(void)
{
	int maps, fds;

	t_require_engine();
	t_watchdog(120);
	T_ASSERT_EQ(pthread_barrier_init(&together, NULL, NTHREADS), 0);
	round_of_threads();
	reap_rounds();
	maps = nr_maps();
	fds = nr_fds();
	for (int i = 0; i < ROUNDS; i++)
		round_of_threads();
	reap_rounds();
	settle(maps + MAPS_SLACK, fds);
	T_ASSERT(nr_maps() <= maps + MAPS_SLACK);
	T_ASSERT(nr_fds() <= fds);

	sliding_window();
	reap_rounds();
	settle(maps + MAPS_SLACK, fds);
	T_ASSERT(nr_maps() <= maps + MAPS_SLACK);
	T_ASSERT(nr_fds() <= fds);
	return T_EXIT_PASS;
}
