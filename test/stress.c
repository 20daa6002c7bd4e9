/* SPDX-License-Identifier: MIT */
/*
 * Threads x mixed requests, against the kernel: each of 4 threads runs
 * rounds of 8 requests (a pipe WRITE linked to the READ of it, a file
 * WRITE linked to its READ, a NOP, a 1 ms TIMEOUT, a READ of an empty pipe
 * and the ASYNC_CANCEL of it), alternately on its own ring and on one ring
 * all threads share (its SQ and CQ under a mutex, waits outside it). Every
 * CQE is counted per user_data (exactly one each: nothing lost, nothing
 * duplicated), every result checked, the data read compared with what was
 * written (a checksum of thread, round and position). A watchdog fails a
 * run that hangs.
 * Size: NOWAIT_STRESS_N requests in all (default 48000, a few seconds;
 * e.g. NOWAIT_STRESS_N=1000000 for a long run).
 */
#include <fcntl.h>
#include <unistd.h>
#include "helpers.h"

#define NTHREADS  4
#define PER_ROUND 8
#define BLK	  256

enum { K_PW, K_PR, K_FW, K_FR, K_NOP, K_TMO, K_ER, K_CAN };

static struct t_ring shared;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int rounds;
static uint8_t *seen; /* CQEs per user_data index */
static int file_fd;

static uint64_t ud_of(unsigned int tid, unsigned int round, unsigned int k)
{
	return ((uint64_t)tid * rounds + round) * PER_ROUND + k + 1;
}

static uint8_t pattern(unsigned int tid, unsigned int round, unsigned int i)
{
	return (uint8_t)(tid * 131 + round * 7 + i * 13 + 1);
}

struct worker {
	unsigned int tid;
	struct t_ring own;
	int p[2], empty[2];
	uint8_t wbuf[BLK], pbuf[BLK], fbuf[BLK];
	struct __kernel_timespec ts;
};

static void check_cqe(const struct io_uring_cqe *c)
{
	uint64_t idx = c->user_data - 1;
	unsigned int k = (unsigned int)(idx % PER_ROUND);

	T_ASSERT_LT(idx, (uint64_t)NTHREADS * rounds * PER_ROUND);
	T_ASSERT_EQ(__atomic_add_fetch(&seen[idx], 1, __ATOMIC_RELAXED), 1);
	switch (k) {
	case K_PW:
	case K_PR:
	case K_FW:
	case K_FR:
		T_ASSERT_EQ(c->res, BLK);
		break;
	case K_NOP:
	case K_CAN:
		T_ASSERT_EQ(c->res, 0);
		break;
	case K_TMO:
		T_ASSERT_EQ(c->res, -ETIME);
		break;
	case K_ER:
		T_ASSERT_EQ(c->res, -ECANCELED);
		break;
	}
}

static void prep_round(struct worker *w, struct t_ring *r, unsigned int rd)
{
	struct io_uring_sqe *sqe;
	unsigned int t = w->tid;
	static char sink[NTHREADS][8];

	for (unsigned int i = 0; i < BLK; i++)
		w->wbuf[i] = pattern(t, rd, i);
	memset(w->pbuf, 0, BLK);
	memset(w->fbuf, 0, BLK);
	sqe = t_get_sqe(r);
	t_prep_rw(sqe, IORING_OP_WRITE, w->p[1], w->wbuf, BLK, 0,
		  ud_of(t, rd, K_PW));
	sqe->flags |= IOSQE_IO_LINK;
	t_prep_rw(t_get_sqe(r), IORING_OP_READ, w->p[0], w->pbuf, BLK, 0,
		  ud_of(t, rd, K_PR));
	sqe = t_get_sqe(r);
	t_prep_rw(sqe, IORING_OP_WRITE, file_fd, w->wbuf, BLK, t * BLK,
		  ud_of(t, rd, K_FW));
	sqe->flags |= IOSQE_IO_LINK;
	t_prep_rw(t_get_sqe(r), IORING_OP_READ, file_fd, w->fbuf, BLK, t * BLK,
		  ud_of(t, rd, K_FR));
	t_prep_nop(t_get_sqe(r), ud_of(t, rd, K_NOP));
	w->ts.tv_sec = 0;
	w->ts.tv_nsec = 1000000;
	sqe = t_get_sqe(r);
	sqe->opcode = IORING_OP_TIMEOUT;
	sqe->fd = -1;
	sqe->addr = (uint64_t)(uintptr_t)&w->ts;
	sqe->len = 1;
	sqe->user_data = ud_of(t, rd, K_TMO);
	t_prep_rw(t_get_sqe(r), IORING_OP_READ, w->empty[0], sink[t], 8, 0,
		  ud_of(t, rd, K_ER));
	sqe = t_get_sqe(r);
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->fd = -1;
	sqe->addr = ud_of(t, rd, K_ER);
	sqe->user_data = ud_of(t, rd, K_CAN);
}

/* Reap r's CQEs, whoever's they are: seen[] counts them. */
static void reap(struct t_ring *r)
{
	struct io_uring_cqe c;

	while (!t_peek_cqe(r, &c))
		check_cqe(&c);
}

static unsigned int round_done(struct worker *w, unsigned int rd)
{
	unsigned int n = 0;

	for (unsigned int k = 0; k < PER_ROUND; k++)
		n += __atomic_load_n(&seen[ud_of(w->tid, rd, k) - 1],
				     __ATOMIC_RELAXED);
	return n;
}

static void wait_some(struct t_ring *r)
{
	struct __kernel_timespec ts = {.tv_nsec = 2000000};
	struct io_uring_getevents_arg arg = {.ts = (uint64_t)(uintptr_t)&ts};
	int ret = t_enter(r->fd, 0, 1,
			  IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg,
			  sizeof(arg));

	T_ASSERT(ret == 0 || ret == -ETIME || ret == -EINTR);
}

static void run_round(struct worker *w, unsigned int rd)
{
	bool on_shared = rd & 1;
	struct t_ring *r = on_shared ? &shared : &w->own;

	if (on_shared)
		pthread_mutex_lock(&shared_lock);
	prep_round(w, r, rd);
	T_ASSERT_EQ(t_submit(r), PER_ROUND);
	if (on_shared)
		pthread_mutex_unlock(&shared_lock);
	while (round_done(w, rd) < PER_ROUND) {
		if (on_shared) {
			wait_some(r);
			pthread_mutex_lock(&shared_lock);
			reap(r);
			pthread_mutex_unlock(&shared_lock);
		} else {
			reap(r);
			if (round_done(w, rd) < PER_ROUND)
				wait_some(r);
		}
	}
	T_ASSERT_EQ(memcmp(w->pbuf, w->wbuf, BLK), 0);
	T_ASSERT_EQ(memcmp(w->fbuf, w->wbuf, BLK), 0);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (unsigned int rd = 0; rd < rounds; rd++)
		run_round(w, rd);
	return NULL;
}

int main(void)
{
	static struct worker w[NTHREADS];
	char path[] = "/tmp/nowait-stress.XXXXXX";
	const char *env = getenv("NOWAIT_STRESS_N");
	unsigned long n = env ? strtoul(env, NULL, 10) : 48000;
	pthread_t th[NTHREADS];
	size_t total;

	t_require_engine();
	t_watchdog(n > 100000 ? 3600 : 120);
	rounds = (unsigned int)(n / (NTHREADS * PER_ROUND));
	if (!rounds)
		rounds = 1;
	total = (size_t)NTHREADS * rounds * PER_ROUND;
	seen = calloc(total, 1);
	T_ASSERT(seen != NULL);
	file_fd = mkstemp(path);
	T_ASSERT_GE(file_fd, 0);
	unlink(path);
	T_ASSERT_EQ(t_ring_init(&shared, 64, NULL), 0);
	for (unsigned int i = 0; i < NTHREADS; i++) {
		w[i].tid = i;
		T_ASSERT_EQ(t_ring_init(&w[i].own, 16, NULL), 0);
		T_ASSERT_EQ(pipe(w[i].p), 0);
		T_ASSERT_EQ(pipe(w[i].empty), 0);
	}
	for (unsigned int i = 0; i < NTHREADS; i++)
		T_ASSERT_EQ(pthread_create(&th[i], NULL, worker_main, &w[i]),
			    0);
	for (unsigned int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	for (size_t i = 0; i < total; i++)
		if (seen[i] != 1) {
			fprintf(stderr, "user_data %zu: %u CQEs\n", i + 1,
				seen[i]);
			T_ASSERT(0);
		}
	printf("stress: %zu requests, %u threads: 0 lost, 0 duplicated, "
	       "0 corrupt\n",
	       total, NTHREADS);
	for (unsigned int i = 0; i < NTHREADS; i++)
		t_ring_exit(&w[i].own);
	t_ring_exit(&shared);
	free(seen);
	return T_EXIT_PASS;
}
