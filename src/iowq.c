/* SPDX-License-Identifier: MIT */
/*
 * The worker pool: the io-wq analogue. Two classes, as in the kernel:
 * BOUND for file and filesystem work (at most 4 x online CPUs workers) and
 * UNBOUND for work that may block forever. Workers start lazily when work
 * arrives and no worker is idle, exit after NW_IDLE_SEC idle, run with all
 * signals blocked, and never make io_uring calls. The pool is reset in a
 * forked child, which starts with no workers. Lock order: a pool lock is
 * never held while calling work or any ring lock.
 * Semantics: kernel io_uring/io-wq.c (classes, lazy creation, idle exit).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "iowq.h"

#define NW_IDLE_SEC    5
#define NW_UNBOUND_MAX 1024

struct nw_pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct nw_work *head, **tail;
	struct nw_work *running; /* taken by a worker, not yet done */
	unsigned int nr_workers, nr_idle, max_workers;
};

static struct nw_pool pools[NW_WQ_NR];
static pthread_once_t pools_once = PTHREAD_ONCE_INIT;

static void pool_reset(struct nw_pool *p, unsigned int max)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	p->head = NULL;
	p->tail = &p->head;
	p->running = NULL;
	p->nr_workers = p->nr_idle = 0;
	p->max_workers = max;
}

/* In a forked child only the forking thread exists: start empty. */
static void pools_after_fork(void)
{
	pool_reset(&pools[NW_WQ_BOUND], pools[NW_WQ_BOUND].max_workers);
	pool_reset(&pools[NW_WQ_UNBOUND], NW_UNBOUND_MAX);
}

static void pools_init(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	pool_reset(&pools[NW_WQ_BOUND],
		   4 * (unsigned int)(cpus > 0 ? cpus : 1));
	pool_reset(&pools[NW_WQ_UNBOUND], NW_UNBOUND_MAX);
	pthread_atfork(NULL, NULL, pools_after_fork);
}

/* Wait for work; NULL when idle too long (the worker then exits). */
static struct nw_work *pool_take(struct nw_pool *p)
{
	struct timespec deadline;
	struct nw_work *w;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += NW_IDLE_SEC;
	while (!p->head) {
		int r;

		p->nr_idle++;
		r = pthread_cond_timedwait(&p->cond, &p->lock, &deadline);
		p->nr_idle--;
		if (r == ETIMEDOUT && !p->head)
			return NULL;
	}
	w = p->head;
	p->head = w->next;
	if (!p->head)
		p->tail = &p->head;
	w->next = p->running;
	p->running = w;
	return w;
}

void nw_iowq_done(struct nw_work *work)
{
	struct nw_pool *p = work->pool;
	struct nw_work **pp;

	pthread_mutex_lock(&p->lock);
	for (pp = &p->running; *pp; pp = &(*pp)->next) {
		if (*pp == work) {
			*pp = work->next;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
}

/* Take matching queued work off one pool. Called with p->lock held. */
static int pool_cancel(struct nw_pool *p,
		       bool (*match)(struct nw_work *, void *), void *arg,
		       bool all, struct nw_work **out, bool *running)
{
	struct nw_work **pp = &p->head, *w;
	int n = 0;

	while ((w = *pp) && (all || !n)) {
		if (!match(w, arg)) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		w->next = *out;
		*out = w;
		n++;
	}
	p->tail = &p->head;
	while (*p->tail)
		p->tail = &(*p->tail)->next;
	for (w = p->running; w && !*running; w = w->next)
		*running = match(w, arg);
	return n;
}

int nw_iowq_cancel(bool (*match)(struct nw_work *, void *), void *arg, bool all,
		   void (*cancelled)(struct nw_work *, void *), bool *running)
{
	struct nw_work *out = NULL, *next;
	int n = 0;

	*running = false;
	pthread_once(&pools_once, pools_init);
	for (int c = 0; c < NW_WQ_NR && (all || !n); c++) {
		pthread_mutex_lock(&pools[c].lock);
		n += pool_cancel(&pools[c], match, arg, all, &out, running);
		pthread_mutex_unlock(&pools[c].lock);
	}
	for (; out; out = next) {
		next = out->next;
		cancelled(out, arg);
	}
	return n;
}

static void *worker_main(void *arg)
{
	struct nw_pool *p = arg;
	struct nw_work *w;

	pthread_mutex_lock(&p->lock);
	while ((w = pool_take(p))) {
		pthread_mutex_unlock(&p->lock);
		w->fn(w);
		pthread_mutex_lock(&p->lock);
	}
	p->nr_workers--;
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Start a worker with every signal blocked. Called with p->lock held. */
static int worker_start(struct nw_pool *p)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t tid;
	int r;

	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&tid, &attr, worker_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r)
		return -r;
	p->nr_workers++;
	return 0;
}

int nw_iowq_enqueue(struct nw_work *work, enum nw_wq_class cls)
{
	struct nw_pool *p = &pools[cls];
	int ret = 0;

	pthread_once(&pools_once, pools_init);
	pthread_mutex_lock(&p->lock);
	if (!p->nr_idle && p->nr_workers < p->max_workers) {
		ret = worker_start(p);
		if (ret && p->nr_workers)
			ret = 0; /* a running worker will get to it */
	}
	if (!ret) {
		work->pool = p;
		work->next = NULL;
		*p->tail = work;
		p->tail = &work->next;
		pthread_cond_signal(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return ret ? -EAGAIN : 0;
}
