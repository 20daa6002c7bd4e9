/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_SQPOLL: a poller thread of the process consumes the SQ as
 * soon as the program moves the tail, so the program submits without
 * entering. After sq_thread_idle ms with nothing to do it sets
 * IORING_SQ_NEED_WAKEUP on its rings and sleeps on a futex until
 * io_uring_enter(IORING_ENTER_SQ_WAKEUP). Rings set up with ATTACH_WQ share
 * one poller (the kernel's io_sq_data). Semantics: kernel io_uring/sqpoll.c
 * (io_sq_thread, io_sqpoll_wait_sq, io_sq_offload_create) and the SQPOLL
 * branch of io_uring_enter; io_uring_setup(2).
 *
 * Threads: the poller holds sqd->lock while it works and is the only thread
 * that consumes the SQ of its rings; it submits under the ring's
 * submit_lock, like an entering thread, so CQ posting stays synchronised
 * with workers and the reactor (complete.c). Lock order: sqd->lock before
 * submit_lock. The poller blocks every signal and never makes io_uring
 * calls. A forked child has no poller: the parent's poller keeps serving
 * the ring through the shared memory, and the child only wakes it (the
 * futex word is in the shared SQ header) and watches the CQ tail.
 *
 * The NEED_WAKEUP handshake, as in the kernel: the poller sets the flag,
 * then (full barrier) re-reads the SQ tails before it sleeps; the program
 * stores the tail, then (full barrier) reads the flag. One of the two sees
 * the other's store, so an SQE is never left behind a sleeping poller.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include "internal.h"
#include "complete.h"
#include "submit.h"
#include "ringmem.h"
#include "sqpoll.h"

/* SQEs taken from one ring per pass when the poller serves several. */
#define NW_SQPOLL_CAP	       8
/*
 * How often the poller checks whether its rings were let go of: often
 * while it busy-polls (it burns a CPU meanwhile), rarely while it sleeps.
 */
#define NW_SQPOLL_REAP_NS      1000000000LL
#define NW_SQPOLL_REAP_BUSY_NS 10000000LL

#if defined(__SANITIZE_THREAD__)
#define NW_TSAN_ACQUIRE() __tsan_acquire(&nw_tsan_ring_tag)
#else
#define NW_TSAN_ACQUIRE() \
	do {              \
	} while (0)
#endif

struct nw_sqd_ent {
	struct nw_ring *ring;
	unsigned int idle_ms;
};

/* One poller thread and the rings it serves (kernel: struct io_sq_data). */
struct nw_sqd {
	pthread_mutex_t lock; /* the ring list; held by the poller at work */
	struct nw_sqd_ent *ents;
	unsigned int nr, cap;
	long long idle_ns;	 /* the largest sq_thread_idle of the rings */
	long long reap_due_ns;	 /* next check for rings let go of */
	unsigned int *wake_word; /* futex, in the first ring's SQ header */
	pid_t pid;		 /* the process the poller belongs to */
	pid_t tid;		 /* the poller's thread id (atomic) */
	int park_pending;	 /* threads waiting for lock (atomic) */
	int sq_waiters;		 /* threads in SQ_WAIT (atomic) */
	bool stop;		 /* under lock: exit now */
	bool exited;		 /* the poller is gone (atomic) */
	int refs;		 /* the poller's, one per ring naming it */
	pthread_t thread;
};

static pid_t sq_pid;
static pthread_once_t sq_once = PTHREAD_ONCE_INIT;

static void sq_after_fork(void)
{
	__atomic_store_n(&sq_pid, 0, __ATOMIC_RELAXED);
}

static void sq_init_once(void)
{
	pthread_atfork(NULL, NULL, sq_after_fork);
}

/* The current process id, cached (reset in a forked child). */
static pid_t cur_pid(void)
{
	pid_t pid = __atomic_load_n(&sq_pid, __ATOMIC_RELAXED);

	if (unlikely(!pid)) {
		pthread_once(&sq_once, sq_init_once);
		pid = getpid();
		__atomic_store_n(&sq_pid, pid, __ATOMIC_RELAXED);
	}
	return pid;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Shared (not process-private) futexes: a forked child may be the peer. */
static int futex_wait(unsigned int *uaddr, unsigned int val,
		      const struct timespec *rel)
{
	if (syscall(SYS_futex, uaddr, FUTEX_WAIT, val, rel, NULL, 0) < 0)
		return -errno;
	return 0;
}

static void futex_wake(unsigned int *uaddr)
{
	syscall(SYS_futex, uaddr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void sqd_wake(struct nw_sqd *sqd)
{
	__atomic_add_fetch(sqd->wake_word, 1, __ATOMIC_SEQ_CST);
	futex_wake(sqd->wake_word);
}

void nw_sqpoll_wake(struct nw_ring *ring)
{
	if (ring->sqd)
		sqd_wake(ring->sqd);
}

/*
 * Take sqd->lock from a thread other than the poller. The poller lets go
 * between passes when it sees park_pending, so it cannot starve us.
 */
static void sqd_park(struct nw_sqd *sqd)
{
	__atomic_add_fetch(&sqd->park_pending, 1, __ATOMIC_SEQ_CST);
	sqd_wake(sqd);
	pthread_mutex_lock(&sqd->lock);
	__atomic_sub_fetch(&sqd->park_pending, 1, __ATOMIC_SEQ_CST);
}

/* The last of the poller and its rings frees the sqd. */
static void sqd_put(struct nw_sqd *sqd)
{
	if (__atomic_sub_fetch(&sqd->refs, 1, __ATOMIC_ACQ_REL))
		return;
	pthread_mutex_destroy(&sqd->lock);
	free(sqd->ents);
	free(sqd);
}

static void sqd_update_idle(struct nw_sqd *sqd)
{
	unsigned int ms = 0;

	for (unsigned int i = 0; i < sqd->nr; i++)
		if (sqd->ents[i].idle_ms > ms)
			ms = sqd->ents[i].idle_ms;
	sqd->idle_ns = ms * 1000000LL;
}

/* Called with sqd->lock held. */
static int sqd_add(struct nw_sqd *sqd, struct nw_ring *ring,
		   unsigned int idle_ms)
{
	if (sqd->nr == sqd->cap) {
		unsigned int cap = sqd->cap ? 2 * sqd->cap : 4;
		struct nw_sqd_ent *e = realloc(sqd->ents, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		sqd->ents = e;
		sqd->cap = cap;
	}
	sqd->ents[sqd->nr].ring = ring;
	sqd->ents[sqd->nr].idle_ms = idle_ms;
	sqd->nr++;
	sqd_update_idle(sqd);
	ring->sqd = sqd;
	__atomic_add_fetch(&sqd->refs, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * Remove entry i. The ring's NEED_WAKEUP stays set, as when the kernel's
 * poller exits. Called with sqd->lock held.
 */
static void sqd_del(struct nw_sqd *sqd, unsigned int i)
{
	__atomic_fetch_or(sqd->ents[i].ring->sq_flags, IORING_SQ_NEED_WAKEUP,
			  __ATOMIC_SEQ_CST);
	sqd->ents[i] = sqd->ents[--sqd->nr];
	sqd_update_idle(sqd);
}

/* SQEs the program queued and the poller has not consumed yet. */
static unsigned int sq_pending(struct nw_ring *ring)
{
	if (__atomic_load_n(&ring->disabled, __ATOMIC_ACQUIRE))
		return 0; /* R_DISABLED: nothing is submitted until enabled */
	/*
	 * cached_sq_head is only written by this thread (the submitter).
	 * seq_cst: ordered after the NEED_WAKEUP store in sqd_sleep.
	 */
	return __atomic_load_n(ring->sq_tail, __ATOMIC_SEQ_CST) -
	       ring->cached_sq_head;
}

/* One pass over a ring (kernel __io_sq_thread). True if it had work. */
static bool sqd_submit(struct nw_sqd *sqd, struct nw_ring *ring, bool cap)
{
	unsigned int n = sq_pending(ring);

	if (!n)
		return false;
	NW_TSAN_ACQUIRE(); /* what the program wrote before the tail */
	/* The program has mapped what it uses before its first SQE. */
	nw_ringmem_settle(ring, -1);
	if (n > ring->sq_entries)
		n = ring->sq_entries;
	if (cap && n > NW_SQPOLL_CAP)
		n = NW_SQPOLL_CAP;
	pthread_mutex_lock(&ring->submit_lock);
	nw_submit_sqes(ring, n);
	pthread_mutex_unlock(&ring->submit_lock);
	nw_run_tw_trylock(ring);
	/*
	 * The head store before the waiter count (Dekker with
	 * sq_wait_space); an RMW, as TSan knows no fences.
	 */
	if (__atomic_fetch_add(&sqd->sq_waiters, 0, __ATOMIC_SEQ_CST))
		futex_wake(ring->sq_head);
	return true;
}

static bool sqd_run(struct nw_sqd *sqd)
{
	bool cap = sqd->nr > 1, busy = false;

	for (unsigned int i = 0; i < sqd->nr; i++)
		busy |= sqd_submit(sqd, sqd->ents[i].ring, cap);
	return busy;
}

static void sqd_set_need_wakeup(struct nw_sqd *sqd, bool on)
{
	for (unsigned int i = 0; i < sqd->nr; i++) {
		unsigned int *flags = sqd->ents[i].ring->sq_flags;

		if (on)
			__atomic_fetch_or(flags, IORING_SQ_NEED_WAKEUP,
					  __ATOMIC_SEQ_CST);
		else
			__atomic_fetch_and(flags, ~IORING_SQ_NEED_WAKEUP,
					   __ATOMIC_SEQ_CST);
	}
}

static bool sqd_any_pending(struct nw_sqd *sqd)
{
	for (unsigned int i = 0; i < sqd->nr; i++)
		if (sq_pending(sqd->ents[i].ring))
			return true;
	return false;
}

/*
 * Let go of the rings the program let go of (no fd, no mapping left): the
 * kernel's ring exit stops the poller's work on them. Rate-limited; called
 * with sqd->lock held.
 */
static void sqd_reap(struct nw_sqd *sqd, long long ivl_ns)
{
	long long now = now_ns();

	if (now < sqd->reap_due_ns && sqd->reap_due_ns - now <= ivl_ns)
		return;
	sqd->reap_due_ns = now + ivl_ns;
	for (unsigned int i = 0; i < sqd->nr;) {
		struct nw_ring *ring = sqd->ents[i].ring;

		/*
		 * Not before setup hands the ring out: nothing names it yet,
		 * and the look would open /proc files on this thread while
		 * setup takes fd numbers the program can see.
		 */
		if (!__atomic_load_n(&ring->published, __ATOMIC_ACQUIRE) ||
		    nw_ring_referenced(ring))
			i++;
		else
			sqd_del(sqd, i);
	}
}

/*
 * Nothing to do for sq_thread_idle: announce NEED_WAKEUP and sleep until
 * SQ_WAKEUP (or an attach, ENABLE_RINGS). As in the kernel only a wake-up
 * ends the sleep; the poller looks up now and then, without clearing the
 * flag or submitting, to notice rings the program let go of.
 */
static void sqd_sleep(struct nw_sqd *sqd)
{
	static const struct timespec reap_ivl = {NW_SQPOLL_REAP_NS / 1000000000,
						 0};
	unsigned int seq = __atomic_load_n(sqd->wake_word, __ATOMIC_SEQ_CST);

	/*
	 * The flag stores (seq_cst RMWs) before the tail loads (seq_cst):
	 * the kernel's smp_mb__after_atomic.
	 */
	sqd_set_need_wakeup(sqd, true);
	if (sqd_any_pending(sqd) ||
	    __atomic_load_n(&sqd->park_pending, __ATOMIC_SEQ_CST))
		goto out;
	for (;;) {
		int r;

		sqd_reap(sqd, NW_SQPOLL_REAP_NS);
		if (!sqd->nr)
			return;
		pthread_mutex_unlock(&sqd->lock);
		r = futex_wait(sqd->wake_word, seq, &reap_ivl);
		pthread_mutex_lock(&sqd->lock);
		if (r != -ETIMEDOUT)
			break;
	}
out:
	sqd_set_need_wakeup(sqd, false);
}

/* Let a thread waiting in sqd_park have the lock. */
static void sqd_yield(struct nw_sqd *sqd)
{
	pthread_mutex_unlock(&sqd->lock);
	while (__atomic_load_n(&sqd->park_pending, __ATOMIC_SEQ_CST))
		sched_yield();
	pthread_mutex_lock(&sqd->lock);
}

/* The poller (kernel io_sq_thread). */
static void *sqd_main(void *arg)
{
	struct nw_sqd *sqd = arg;
	long long idle_end;
	char name[16];

	nw_in_engine = 1; /* its closes are the engine's own */
	snprintf(name, sizeof(name), "iou-sqp-%d", (int)sqd->pid);
	pthread_setname_np(pthread_self(), name);
	__atomic_store_n(&sqd->tid, nw_gettid(), __ATOMIC_RELEASE);
	pthread_mutex_lock(&sqd->lock);
	/* Like the kernel's, a new poller with nothing queued sleeps at once */
	idle_end = 0;
	while (!sqd->stop && sqd->nr) {
		if (__atomic_load_n(&sqd->park_pending, __ATOMIC_SEQ_CST)) {
			/* A parker may have taken the last ring (and with it
			 * the memory of the wake word): look again. */
			sqd_yield(sqd);
			continue;
		}
		if (sqd_run(sqd)) {
			idle_end = now_ns() + sqd->idle_ns;
			continue;
		}
		if (now_ns() < idle_end) {
			/* Busy-poll, but let others have the CPU. */
			sqd_reap(sqd, NW_SQPOLL_REAP_BUSY_NS);
			pthread_mutex_unlock(&sqd->lock);
			sched_yield();
			pthread_mutex_lock(&sqd->lock);
			continue;
		}
		sqd_sleep(sqd);
		idle_end = now_ns() + sqd->idle_ns;
	}
	__atomic_store_n(&sqd->exited, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sqd->lock);
	sqd_put(sqd);
	return NULL;
}

/* Start the poller with every signal blocked. */
static int sqd_thread_start(struct nw_sqd *sqd)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int r;

	nw_sigfill_async(&all);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1024 * 1024);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&sqd->thread, &attr, sqd_main, sqd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return r ? -EAGAIN : 0;
}

/* IORING_SETUP_SQ_AFF: pin the poller (kernel: cpu valid, online, and in
 * the cpuset, which sched_setaffinity checks for us). */
static int sqd_pin(struct nw_sqd *sqd, unsigned int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(sqd->thread, sizeof(set), &set) ? -EINVAL
								      : 0;
}

/* A new poller for ring (the kernel's non-attached path). */
static int sqd_start(struct nw_ring *ring, const struct io_uring_params *p,
		     unsigned int idle_ms)
{
	bool aff = p->flags & IORING_SETUP_SQ_AFF;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	struct nw_sqd *sqd;
	int ret;

	if (aff && (p->sq_thread_cpu >= CPU_SETSIZE ||
		    (ncpu > 0 && p->sq_thread_cpu >= (unsigned long)ncpu)))
		return -EINVAL;
	sqd = calloc(1, sizeof(*sqd));
	if (!sqd)
		return -ENOMEM;
	pthread_mutex_init(&sqd->lock, NULL);
	sqd->refs = 1; /* the poller's */
	sqd->wake_word =
		(unsigned int *)((char *)ring->rings_map + NW_SQ_OFF_WAKE);
	sqd->pid = cur_pid();
	/* The poller waits for the lock until its first ring is added. */
	pthread_mutex_lock(&sqd->lock);
	ret = sqd_thread_start(sqd);
	if (ret)
		goto err_unlock;
	if (aff)
		ret = sqd_pin(sqd, p->sq_thread_cpu);
	if (!ret)
		ret = sqd_add(sqd, ring, idle_ms);
	if (ret) {
		sqd->stop = true;
		sqd->refs++; /* the poller's put leaves it to us */
		pthread_mutex_unlock(&sqd->lock);
		pthread_join(sqd->thread, NULL);
		goto err_free;
	}
	/* A child forked after setup checks the poller by its tid. */
	while (!__atomic_load_n(&sqd->tid, __ATOMIC_ACQUIRE))
		sched_yield();
	pthread_mutex_unlock(&sqd->lock);
	pthread_detach(sqd->thread);
	return 0;
err_unlock:
	pthread_mutex_unlock(&sqd->lock);
err_free:
	pthread_mutex_destroy(&sqd->lock);
	free(sqd->ents);
	free(sqd);
	return ret;
}

/*
 * IORING_SETUP_ATTACH_WQ with SQPOLL (kernel io_attach_sq_data): wq_fd
 * must be a ring with a poller; one of another process is not shared (a
 * new poller is made). *sqdp is the poller to share, or NULL.
 */
static int attach_lookup(const struct io_uring_params *p, struct nw_sqd **sqdp)
{
	struct nw_ring *other;
	int ret;

	*sqdp = NULL;
	if (!(p->flags & IORING_SETUP_ATTACH_WQ))
		return 0;
	ret = nw_ring_lookup((int)p->wq_fd, &other);
	if (ret == -EBADF)
		return -ENXIO;
	if (ret)
		return -EINVAL;
	if (!other->sqd)
		return -EINVAL;
	if (other->sqd->pid == cur_pid())
		*sqdp = other->sqd;
	return 0;
}

int nw_sqpoll_create(struct nw_ring *ring, const struct io_uring_params *p)
{
	unsigned int idle_ms =
		p->sq_thread_idle ? p->sq_thread_idle : NW_SQ_IDLE_MS_DEFAULT;
	struct nw_sqd *sqd;
	int ret;

	ret = attach_lookup(p, &sqd);
	if (ret)
		return ret;
	if (!sqd)
		return sqd_start(ring, p, idle_ms);
	sqd_park(sqd);
	/* Don't attach to a poller that is exiting (kernel: -ENXIO). */
	if (__atomic_load_n(&sqd->exited, __ATOMIC_ACQUIRE) || !sqd->nr)
		ret = -ENXIO;
	else
		ret = sqd_add(sqd, ring, idle_ms);
	pthread_mutex_unlock(&sqd->lock);
	/* If it sleeps, it must set NEED_WAKEUP on the new ring too. */
	sqd_wake(sqd);
	return ret;
}

void nw_sqpoll_cancel_create(struct nw_ring *ring)
{
	struct nw_sqd *sqd = ring->sqd;

	if (!sqd)
		return;
	sqd_park(sqd);
	for (unsigned int i = 0; i < sqd->nr; i++) {
		if (sqd->ents[i].ring == ring) {
			sqd_del(sqd, i);
			break;
		}
	}
	pthread_mutex_unlock(&sqd->lock);
	sqd_wake(sqd);
	ring->sqd = NULL;
	sqd_put(sqd);
}

bool nw_sqpoll_detach(struct nw_ring *ring)
{
	struct nw_sqd *sqd = ring->sqd;
	unsigned int *word;
	bool owner, ok = true;

	if (!sqd || __atomic_load_n(&ring->sqd_detached, __ATOMIC_ACQUIRE))
		return true;
	if (sqd->pid != cur_pid())
		return false;
	word = (unsigned int *)((char *)ring->rings_map + NW_SQ_OFF_WAKE);
	owner = sqd->wake_word == word;
	sqd_park(sqd);
	for (unsigned int i = 0; i < sqd->nr; i++) {
		if (sqd->ents[i].ring != ring)
			continue;
		if (owner && sqd->nr > 1)
			ok = false; /* the others still sleep on its word */
		else
			sqd_del(sqd, i);
		break;
	}
	if (owner && sqd->nr)
		ok = false;
	pthread_mutex_unlock(&sqd->lock);
	/* Before the ring's memory goes: the word may be in it. */
	sqd_wake(sqd);
	if (ok)
		__atomic_store_n(&ring->sqd_detached, true, __ATOMIC_RELEASE);
	return ok;
}

void nw_sqpoll_release(struct nw_ring *ring)
{
	struct nw_sqd *sqd = ring->sqd;

	if (!sqd)
		return;
	ring->sqd = NULL;
	sqd_put(sqd);
}

/* ---- io_uring_enter on an SQPOLL ring ---- */

/* Is the ring's poller gone (kernel: sqd->thread == NULL)? */
static bool sqd_dead(struct nw_sqd *sqd, bool foreign)
{
	pid_t tid;

	if (!foreign)
		return __atomic_load_n(&sqd->exited, __ATOMIC_ACQUIRE);
	/* The parent's poller: alive while its thread exists. */
	tid = __atomic_load_n(&sqd->tid, __ATOMIC_ACQUIRE);
	return tid && syscall(SYS_tgkill, sqd->pid, tid, 0) < 0 &&
	       errno == ESRCH;
}

/*
 * IORING_ENTER_SQ_WAIT (kernel io_sqpoll_wait_sq): sleep while the SQ is
 * full, until the poller consumes or a signal arrives. The async signals
 * are held across the loop and each round looks for one the caller's mask
 * lets through, so that none that comes between two naps is missed; a
 * nap is short for it (10 ms). A forked child's waits are not known to the
 * parent's poller: it looks every millisecond.
 */
static int sq_wait_space(struct nw_ring *ring, bool foreign)
{
	struct nw_sqd *sqd = ring->sqd;
	const struct timespec step = {0, foreign ? 1000000 : 10000000};
	struct nw_sighold *sh = nw_sighold_cur;
	struct nw_sighold own = {0};
	int ret = 0;

	if (!sh || !sh->held) {
		sh = &own;
		nw_sighold_block(sh);
	}
	for (;;) {
		unsigned int head = load_acquire(ring->sq_head);

		if (READ_ONCE(*ring->sq_tail) - head != ring->sq_entries ||
		    sqd_dead(sqd, foreign))
			break;
		ret = nw_wait_signal_check(&sh->old);
		if (ret)
			break;
		if (!foreign)
			__atomic_add_fetch(&sqd->sq_waiters, 1,
					   __ATOMIC_SEQ_CST);
		futex_wait(ring->sq_head, head, &step);
		if (!foreign)
			__atomic_sub_fetch(&sqd->sq_waiters, 1,
					   __ATOMIC_SEQ_CST);
	}
	nw_sighold_release(&own);
	return ret;
}

long nw_sqpoll_enter(struct nw_ring *ring, unsigned int to_submit,
		     unsigned int min_complete, unsigned int flags,
		     const void *arg, size_t argsz)
{
	struct nw_sqd *sqd = ring->sqd;
	bool foreign = sqd->pid != cur_pid();
	long ret;
	int ret2, sq_ret = 0;

	/* The poller does all submissions; the caller flushes the backlog. */
	if (!foreign && (__atomic_load_n(ring->sq_flags, __ATOMIC_ACQUIRE) &
			 IORING_SQ_CQ_OVERFLOW)) {
		nw_submit_lock(ring);
		nw_cq_flush_overflow(ring);
		nw_submit_unlock(ring);
	}
	if (sqd_dead(sqd, foreign))
		return -EOWNERDEAD;
	if (flags & IORING_ENTER_SQ_WAKEUP)
		sqd_wake(sqd);
	if (flags & IORING_ENTER_SQ_WAIT)
		sq_ret = sq_wait_space(ring, foreign);
	/* The kernel's long: all of to_submit, never a negative errno. */
	ret = to_submit;
	if (flags & IORING_ENTER_GETEVENTS) {
		/*
		 * A signal ended the SQ wait: its handler ran, and the kernel's
		 * CQ wait would find it pending and say -EINTR at once.
		 */
		if (sq_ret)
			ret2 = nw_cq_ready(ring) ? 0 : sq_ret;
		else if (foreign)
			ret2 = nw_wait_foreign(ring, min_complete, flags, arg,
					       argsz);
		else
			ret2 = nw_wait(ring, min_complete, flags, arg, argsz);
		if (!ret)
			ret = ret2;
	}
	return ret;
}
