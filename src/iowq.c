/* SPDX-License-Identifier: MIT */
/*
 * The worker pool: the io-wq analogue. Two classes, as in the kernel:
 * BOUND for file and filesystem work (at most 4 x online CPUs workers) and
 * UNBOUND for work that may block forever. Workers start lazily when work
 * arrives and no worker is idle, exit after NW_IDLE_SEC idle, or soon
 * after the program let go of its last ring (pool_unused: one idle
 * worker per pool looks, once a second; the others sleep until work
 * comes or their idle time is up), run with all
 * signals blocked (but the cancel signal during a blocking call, see the
 * end of this file), and never make io_uring calls. The pool is reset in a
 * forked child, which starts with no workers. Lock order: a pool lock is
 * never held while calling work or any ring lock.
 * Semantics: kernel io_uring/io-wq.c (classes, lazy creation, idle exit,
 * the signal that interrupts a cancelled worker) and tctx.c (the io-wq
 * goes with the task's last ring).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "internal.h"
#include <sys/resource.h>
#include "iowq.h"

#define NW_IDLE_SEC    5
#define NW_UNUSED_MS   1000 /* an idle pool's look at the rings, at most */
#define NW_UNBOUND_MAX 1024

struct nw_pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct nw_work *head, **tail;
	struct nw_work *running; /* taken by a worker, not yet done */
	unsigned int nr_workers, nr_idle, max_workers;
	/*
	 * pool_unused: its next look, a count of looks that found none, and
	 * whether an idle worker is the one that wakes to look.
	 */
	struct timespec unused_next;
	unsigned int unused_gen;
	bool looker;
	/* IORING_REGISTER_IOWQ_AFF: the workers' CPUs from aff_gen 1 on */
	unsigned int aff_gen;
	cpu_set_t aff;
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
	p->aff_gen = 0;
	p->unused_next.tv_sec = p->unused_next.tv_nsec = 0;
	p->unused_gen = 0;
	p->looker = false;
}

/* In a forked child only the forking thread exists: start empty. */
static void pools_after_fork(void)
{
	pool_reset(&pools[NW_WQ_BOUND], pools[NW_WQ_BOUND].max_workers);
	pool_reset(&pools[NW_WQ_UNBOUND], pools[NW_WQ_UNBOUND].max_workers);
}

static void pools_init(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	pool_reset(&pools[NW_WQ_BOUND],
		   4 * (unsigned int)(cpus > 0 ? cpus : 1));
	pool_reset(&pools[NW_WQ_UNBOUND], NW_UNBOUND_MAX);
	pthread_atfork(NULL, NULL, pools_after_fork);
}

/* The worker's view of the pool's affinity generation. */
static __thread unsigned int worker_aff_gen;

/* Move this worker to the pool's CPUs if they changed. p->lock held. */
static void worker_affinity(struct nw_pool *p)
{
	if (worker_aff_gen == p->aff_gen)
		return;
	worker_aff_gen = p->aff_gen;
	sched_setaffinity(0, sizeof(p->aff), &p->aff);
}

/* ts = now + ms, on CLOCK_MONOTONIC. */
static void ts_in_ms(struct timespec *ts, const struct timespec *now, long ms)
{
	ts->tv_sec = now->tv_sec + ms / 1000;
	ts->tv_nsec = now->tv_nsec + (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/*
 * The kernel's io-wq belongs to the task's rings: when the last one goes,
 * its workers exit at once, not WORKER_IDLE_TIMEOUT later (a process that
 * closed its rings has no iou-wrk threads left, which checkpoint/restore
 * relies on). Nothing tells the engine that a ring is let go of (liburing
 * closes and unmaps with raw system calls, which no hook sees), so one
 * idle worker of the pool, the looker, wakes once per NW_UNUSED_MS to
 * ask whether the program still holds a ring (nw_rings_held, one stat per
 * ring in the common case); the pool's other idle workers sleep until
 * work comes, their idle time is up, or the looker's answer. When none
 * is held, every idle worker of the pool exits (*gen, the count of such
 * looks the worker saw, tells the others); queued work is always taken
 * first, and a later ring starts workers again. p->lock held, dropped
 * for the look; only the looker looks.
 */
static bool pool_unused(struct nw_pool *p, unsigned int *gen, bool looker,
			const struct timespec *now)
{
	bool held;

	if (p->unused_gen != *gen)
		return true;
	if (!looker || ts_before(now, &p->unused_next))
		return false;
	ts_in_ms(&p->unused_next, now, NW_UNUSED_MS);
	pthread_mutex_unlock(&p->lock);
	held = nw_rings_held();
	pthread_mutex_lock(&p->lock);
	if (held || p->unused_gen != *gen)
		return !held;
	*gen = ++p->unused_gen;
	pthread_cond_broadcast(&p->cond); /* the other idle ones */
	return true;
}

/*
 * Sleep until woken or the wake time: the pool's looker (the first idle
 * worker that finds none) until its next look, the others until their
 * idle deadline. Returns whether this worker was the looker. p->lock held.
 */
static bool pool_sleep(struct nw_pool *p, const struct timespec *now,
		       const struct timespec *deadline)
{
	bool looker = !p->looker;
	struct timespec wake = *deadline;

	if (looker) {
		p->looker = true;
		ts_in_ms(&wake, now, NW_UNUSED_MS);
		if (ts_before(deadline, &wake))
			wake = *deadline;
	}
	p->nr_idle++;
	pthread_cond_timedwait(&p->cond, &p->lock, &wake);
	p->nr_idle--;
	if (looker)
		p->looker = false;
	return looker;
}

/*
 * Wait for work; NULL when idle too long, idle in a pool with more
 * workers than its cap, or idle when the program holds no ring (the
 * worker then exits). A looker that exits hands its look to another
 * idle worker.
 */
static struct nw_work *pool_take(struct nw_pool *p)
{
	struct timespec deadline, now;
	unsigned int gen = p->unused_gen;
	struct nw_work *w;
	bool looker;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ts_in_ms(&deadline, &now, NW_IDLE_SEC * 1000L);
	worker_affinity(p);
	while (!p->head) {
		if (p->nr_workers > p->max_workers)
			return NULL;
		looker = pool_sleep(p, &now, &deadline);
		worker_affinity(p);
		if (p->head)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((!ts_before(&now, &deadline) ||
		     pool_unused(p, &gen, looker, &now)) &&
		    !p->head) {
			if (looker && p->nr_idle)
				pthread_cond_signal(&p->cond);
			return NULL;
		}
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

void nw_iowq_init(void)
{
	pthread_once(&pools_once, pools_init);
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

static void kick_timer_free(void);

static void *worker_main(void *arg)
{
	struct nw_pool *p = arg;
	struct nw_work *w;

	nw_in_engine = 1; /* its closes are the engine's own */
	pthread_mutex_lock(&p->lock);
	while ((w = pool_take(p))) {
		pthread_mutex_unlock(&p->lock);
		w->fn(w);
		pthread_mutex_lock(&p->lock);
	}
	p->nr_workers--;
	pthread_mutex_unlock(&p->lock);
	kick_timer_free();
	return NULL;
}

/* Start a worker with every signal blocked. Called with p->lock held. */
static int worker_start(struct nw_pool *p)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t tid;
	char name[16];
	int r;

	nw_sigfill_async(&all);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&tid, &attr, worker_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r)
		return -r;
	/*
	 * Named as io-wq names its workers, after the task they serve. The
	 * detached worker is alive: it waits for p->lock, which we hold.
	 */
	snprintf(name, sizeof(name), "iou-wrk-%d", (int)nw_gettid());
	pthread_setname_np(tid, name);
	p->nr_workers++;
	return 0;
}

int nw_iowq_enqueue(struct nw_work *work, enum nw_wq_class cls)
{
	struct nw_pool *p = &pools[cls];
	int ret = 0;

	pthread_once(&pools_once, pools_init);
	work->cancel = 0;
	work->in_call = 0;
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

void nw_iowq_set_max(const unsigned int max[NW_WQ_NR])
{
	pthread_once(&pools_once, pools_init);
	for (int c = 0; c < NW_WQ_NR; c++) {
		struct nw_pool *p = &pools[c];

		if (!max[c])
			continue;
		pthread_mutex_lock(&p->lock);
		p->max_workers =
			max[c] < NW_UNBOUND_MAX ? max[c] : NW_UNBOUND_MAX;
		pthread_cond_broadcast(&p->cond); /* the extra idle ones exit */
		pthread_mutex_unlock(&p->lock);
	}
}

void nw_iowq_set_affinity(const void *set, size_t size)
{
	cpu_set_t aff, own;

	CPU_ZERO(&own);
	if (sched_getaffinity(getpid(), sizeof(own), &own))
		return;
	CPU_ZERO(&aff);
	memcpy(&aff, set ? set : &own,
	       set && size < sizeof(aff) ? size : sizeof(aff));
	CPU_AND(&aff, &aff, &own);
	if (!CPU_COUNT(&aff))
		aff = own; /* no CPU of ours: a mask nothing could run on */
	pthread_once(&pools_once, pools_init);
	for (int c = 0; c < NW_WQ_NR; c++) {
		struct nw_pool *p = &pools[c];

		pthread_mutex_lock(&p->lock);
		p->aff = aff;
		p->aff_gen++;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
	}
}

/*
 * ---- Interrupting a cancelled worker ----
 * The kernel cancels running io-wq work by signalling the worker
 * (IO_WQ_WORK_CANCEL + a notify signal): its blocking call returns
 * -ERESTARTSYS and the request completes -EINTR. Here a worker gets a
 * real signal, thread-directed (pthread_kill), whose handler does nothing
 * and is installed without SA_RESTART, so the call returns EINTR.
 *
 * Which signal: SIGRTMAX - 2 by default, NOWAIT_CANCEL_SIGNAL=N to pick
 * another realtime signal, 0 to turn interrupting off. glibc reserves
 * the first realtime signals (32-34 with SIGRTMIN at 34 or 35), programs
 * and libraries that want one usually take SIGRTMIN + k or SIGRTMAX, so
 * SIGRTMAX - 2 is the least likely to be in use. The handler is installed
 * at the first blocking call of a worker, and only if the signal's
 * disposition is the default (the program does not use it); otherwise, or
 * if the program later replaces the handler (checked before each kill),
 * running work is not interrupted and a cancel reports -EALREADY only.
 * Limits: once installed, a kill(2) of that signal to the process no
 * longer terminates it (the default action) but interrupts the blocking
 * call of the thread that takes it (a worker in a blocking call, or a
 * program thread); and a program that installs its own handler for it
 * after ours must not expect to see the instances we send.
 *
 * The race where the signal arrives just before the blocking system call
 * starts (the handler runs, then the call blocks anyway): the worker
 * announces in_call, then checks the cancel flag; the canceller sets the
 * flag, then looks at in_call (both seq_cst: one of them sees the other),
 * so a cancel is never missed before the call. If the handler runs for a
 * cancelled work before the call starts, it cannot tell; so it arms a
 * per-thread POSIX timer (raw system calls, async-signal-safe) that sends
 * the same signal every NW_KICK_NS until the worker leaves the call: a
 * lost race costs a few milliseconds, never a hang. The timer is disarmed
 * and any pending instance consumed when the call ends.
 */
#define NW_KICK_NS 2000000L /* 2 ms */

static int cancel_sig; /* 0: off */
static pthread_once_t sig_once = PTHREAD_ONCE_INIT;
/*
 * Read by the handler, which may run on any thread: initial-exec, so that
 * no access allocates (a dynamic TLS block) inside a signal handler.
 */
#define NW_SIG_TLS __thread __attribute__((tls_model("initial-exec")))
static NW_SIG_TLS struct nw_work *cur_work;
static NW_SIG_TLS int kick_timer = -1; /* kernel timer id */
static NW_SIG_TLS bool kick_armed;

static void kick_arm(int sig)
{
	struct itimerspec its = {{0, NW_KICK_NS}, {0, NW_KICK_NS}};

	if (kick_timer < 0) {
		struct sigevent sev;
		int id;

		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = sig;
		sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &id))
			return;
		kick_timer = id;
	}
	if (!syscall(SYS_timer_settime, kick_timer, 0, &its, NULL))
		kick_armed = true;
}

/* A worker exits: its kick timer goes with it. */
static void kick_timer_free(void)
{
	if (kick_timer >= 0)
		syscall(SYS_timer_delete, kick_timer);
	kick_timer = -1;
}

static void cancel_handler(int sig, siginfo_t *si, void *uc)
{
	struct nw_work *w = cur_work;
	int saved = errno;

	if (w && __atomic_load_n(&w->cancel, __ATOMIC_ACQUIRE) && !kick_armed)
		kick_arm(sig);
	errno = saved;
}

static void sig_setup(void)
{
	const char *env = getenv("NOWAIT_CANCEL_SIGNAL");
	struct sigaction sa, old;
	int sig = SIGRTMAX - 2;

	if (env)
		sig = atoi(env);
	if (sig < SIGRTMIN || sig > SIGRTMAX)
		return;
	if (sigaction(sig, NULL, &old) || (old.sa_flags & SA_SIGINFO) ||
	    old.sa_handler != SIG_DFL)
		return; /* the program's */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = cancel_handler;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: the call says EINTR */
	nw_sigfill_async(&sa.sa_mask);
	if (!sigaction(sig, &sa, NULL))
		__atomic_store_n(&cancel_sig, sig, __ATOMIC_RELEASE);
}

/* Is our handler still the one installed? */
static bool sig_ours(int sig)
{
	struct sigaction cur;

	return !sigaction(sig, NULL, &cur) && (cur.sa_flags & SA_SIGINFO) &&
	       cur.sa_sigaction == cancel_handler;
}

int nw_iowq_block_begin(struct nw_work *work)
{
	sigset_t set;
	int sig;

	pthread_once(&sig_once, sig_setup);
	sig = __atomic_load_n(&cancel_sig, __ATOMIC_ACQUIRE);
	if (!sig)
		return 0;
	work->thread = pthread_self();
	cur_work = work;
	__atomic_store_n(&work->in_call, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&work->cancel, __ATOMIC_SEQ_CST))
		return -ECANCELED;
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	return 0;
}

bool nw_iowq_block_end(struct nw_work *work)
{
	static const struct itimerspec off;
	static const struct timespec zero;
	int sig = __atomic_load_n(&cancel_sig, __ATOMIC_ACQUIRE);
	sigset_t set;

	if (!sig)
		return false;
	sigemptyset(&set);
	sigaddset(&set, sig);
	/* Blocked again first: the handler cannot run past this point. */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	__atomic_store_n(&work->in_call, 0, __ATOMIC_SEQ_CST);
	cur_work = NULL;
	if (kick_armed) {
		syscall(SYS_timer_settime, kick_timer, 0, &off, NULL);
		kick_armed = false;
		while (sigtimedwait(&set, NULL, &zero) == sig)
			;
	}
	return __atomic_load_n(&work->cancel, __ATOMIC_ACQUIRE);
}

/* Ask running work w to stop. Called with its pool's lock held. */
static void work_interrupt(struct nw_work *w)
{
	int sig = __atomic_load_n(&cancel_sig, __ATOMIC_ACQUIRE);

	if (__atomic_exchange_n(&w->cancel, 1, __ATOMIC_SEQ_CST))
		return; /* asked already */
	/* Still running (the pool lock keeps its worker alive). */
	if (sig && __atomic_load_n(&w->in_call, __ATOMIC_SEQ_CST) &&
	    sig_ours(sig))
		pthread_kill(w->thread, sig);
}

int nw_iowq_interrupt(bool (*match)(struct nw_work *, void *), void *arg,
		      bool all, void (*interrupted)(struct nw_work *, void *))
{
	int n = 0;

	pthread_once(&pools_once, pools_init);
	for (int c = 0; c < NW_WQ_NR && (all || !n); c++) {
		struct nw_pool *p = &pools[c];

		pthread_mutex_lock(&p->lock);
		for (struct nw_work *w = p->running; w && (all || !n);
		     w = w->next) {
			if (!match(w, arg))
				continue;
			work_interrupt(w);
			interrupted(w, arg);
			n++;
		}
		pthread_mutex_unlock(&p->lock);
	}
	return n;
}
