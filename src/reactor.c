/* SPDX-License-Identifier: MIT */
/*
 * The reactor: one harvest of the ring's loop (loop.c) calls the callback
 * of each event source that fired (poll.c's fd watches, timeout.c's
 * timer), which moves the requests it wakes onto the harvest's ready list,
 * and then continues each of them through the function its parker left in
 * req->tw_func (submit.c's reissue, poll.c's POLL_ADD check, timeout.c's
 * expiry), in the harvesting thread's role (enum nw_run_mode).
 *
 * Who harvests: a waiter in enter (wait.c) drives the reactor itself; when
 * no waiter does, a reactor thread of the ring (non-DEFER_TASKRUN rings,
 * or DEFER_TASKRUN ones whose readiness is observed) keeps requests
 * moving. reactor_lock makes one of them the harvester at a time. The
 * reactor thread also notices that the program let go of the ring, and
 * then does what the kernel's ring exit does.
 *
 * Locks: submit_lock, then poll_lock; reactor_lock is taken before either.
 */
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include "creds.h"
#include "reactor.h"
#include "complete.h"
#include "cancel.h"
#include "kbuf.h"
#include "poll.h"
#include "rsrc.h"
#include "trace.h"

/*
 * Is the program done with the ring (no fd, no mapping left)? Asked by the
 * reactor thread each time before it reissues on the program's behalf (a
 * waiter in enter is proof enough): one readlink in the common case.
 */
static bool ring_gone(struct nw_ring *ring)
{
	if (!__atomic_load_n(&ring->gone, __ATOMIC_RELAXED) &&
	    !nw_ring_referenced(ring))
		__atomic_store_n(&ring->gone, true, __ATOMIC_RELAXED);
	return __atomic_load_n(&ring->gone, __ATOMIC_RELAXED);
}

#define NW_EXIT_WATCH_S 1

/*
 * A close hook saw an fd of the ring go (nw_ring_fd_closing): look, twice
 * at most, since the hook runs before the close itself.
 */
static bool exit_asked(struct nw_ring *ring)
{
	unsigned int n = __atomic_load_n(&ring->exit_check, __ATOMIC_RELAXED);

	if (!n)
		return false;
	__atomic_store_n(&ring->exit_check, n - 1, __ATOMIC_RELAXED);
	return ring_gone(ring);
}

/*
 * The program let go of the ring (no fd, no mapping): what ring exit does
 * in the kernel. Every request still in flight is cancelled (those in a
 * worker interrupted) and the registered files are closed, so that the
 * other ends of pipes and sockets see the ring's references go.
 */
static void ring_exit(struct nw_ring *ring)
{
	nw_cancel_ring_exit(ring);
	pthread_mutex_lock(&ring->reg_lock);
	nw_rsrc_unregister_files(ring, NULL, 0);
	nw_creds_free_all(ring);
	pthread_mutex_unlock(&ring->reg_lock);
	nw_kbuf_free_all(ring);
}

/* Call the sources that fired; they fill h. Checks the watches too. */
static void harvest(struct nw_ring *ring, const struct nw_loop_event *ev, int n,
		    struct nw_harvest *h)
{
	pthread_mutex_lock(&ring->poll_lock);
	for (int i = 0; i < n; i++) {
		if (!ev[i].io)
			continue;
		h->gen = ev[i].gen;
		ev[i].io->cb(ev[i].io, ev[i].events, h);
	}
	/* Never touch the program's fds for a ring it let go of. */
	if (h->mode != NW_RUN_SYNC && nw_poll_verify_due(ring) &&
	    !(h->mode == NW_RUN_BG && ring_gone(ring)))
		nw_poll_verify(ring, &h->ready);
	pthread_mutex_unlock(&ring->poll_lock);
}

/*
 * The reactor thread of a DEFER_TASKRUN ring only notices readiness: what
 * became ready is queued as task work, which signals the registered
 * eventfd as the kernel's local task work does, and the submitter
 * continues it in enter, never this thread.
 */
static void defer_ready(struct nw_harvest *h)
{
	struct nw_list *pos, *tmp;

	nw_list_for_each_safe(pos, tmp, &h->ready) {
		nw_list_del(pos);
		nw_req_task_queue(nw_list_entry(pos, struct nw_req, poll_node));
	}
	for (int i = 0; i < h->nr_mshot; i++)
		nw_req_task_queue(h->mshot[i]);
}

__thread bool nw_submit_waits __attribute__((tls_model("initial-exec")));

/* Run what became ready, in the thread's role (see enum nw_run_mode). */
static void run_ready(struct nw_ring *ring, struct nw_harvest *h)
{
	/* DEFER_TASKRUN rings post nothing outside GETEVENTS: task work. */
	bool submit_side = h->mode == NW_RUN_DRIVER ||
			   (h->mode == NW_RUN_SUBMIT &&
			    (!ring->lockless_cq ||
			     (nw_submit_waits && !nw_ring_observed(ring))));
	struct nw_list *pos, *tmp;

	if ((h->mode == NW_RUN_BG || h->mode == NW_RUN_SYNC) &&
	    ring->lockless_cq) {
		defer_ready(h);
		return;
	}
	if (h->mode == NW_RUN_DRIVER) {
		nw_submit_lock(ring);
		nw_cq_begin_batch(ring);
	}
	nw_list_for_each_safe(pos, tmp, &h->ready) {
		struct nw_req *req =
			nw_list_entry(pos, struct nw_req, poll_node);

		nw_list_del(pos);
		/* Ready right after its submit parked it: the 2021 reissue. */
		if (h->mode == NW_RUN_SUBMIT &&
		    req->park_gen == __atomic_load_n(&ring->submit_gen,
						     __ATOMIC_RELAXED)) {
			nw_poll_count_reissue();
			nw_trace_path(req, NW_PATH_REISSUED);
		}
		req->tw_func(req, submit_side);
	}
	for (int i = 0; i < h->nr_mshot; i++)
		nw_req_task_queue(h->mshot[i]);
	if (h->mode == NW_RUN_DRIVER) {
		nw_run_tw(ring);
		nw_cq_flush_batch(ring);
		nw_submit_unlock(ring);
		if (!ring->lockless_cq)
			nw_run_tw_trylock(ring);
	}
}

bool nw_reactor_run_lazy(struct nw_ring *ring)
{
	struct nw_harvest h;

	h.ring = ring;
	h.mode = NW_RUN_DRIVER;
	h.nr_mshot = 0;
	nw_list_init(&h.ready);
	if (!nw_poll_take_lazy(ring, &h.ready))
		return false;
	run_ready(ring, &h);
	return true;
}

int nw_reactor_run(struct nw_ring *ring, const struct timespec *timeout,
		   const sigset_t *sig, int mode)
{
	static const struct timespec cap = {0, NW_POLL_VERIFY_NS};
	static const struct timespec watch = {NW_EXIT_WATCH_S, 0};
	struct nw_loop_event ev[NW_LOOP_BATCH];
	struct nw_harvest h;
	int n, i;

	/* Registered files: look now and then whether the ring is gone. */
	if (mode == NW_RUN_BG && !timeout &&
	    __atomic_load_n(&ring->exit_watch, __ATOMIC_ACQUIRE))
		timeout = &watch;

	/*
	 * With requests parked, wake up to check the watches now and then
	 * (a waiter blocks every signal between its sleeps: wait.c).
	 */
	/* Lazily parked requests first, without a look at epoll (poll.c). */
	if (mode == NW_RUN_DRIVER &&
	    unlikely(__atomic_load_n(&ring->nr_lazy, __ATOMIC_RELAXED)) &&
	    nw_reactor_run_lazy(ring))
		return 0;
	if ((__atomic_load_n(&ring->nr_parked, __ATOMIC_RELAXED) ||
	     (mode == NW_RUN_BG &&
	      __atomic_load_n(&ring->exit_check, __ATOMIC_RELAXED))) &&
	    (!timeout || timeout->tv_sec || timeout->tv_nsec > cap.tv_nsec))
		timeout = &cap;
	n = nw_loop_wait(&ring->loop, ev, NW_LOOP_BATCH, timeout, sig);
	if (n < 0)
		return n;
	h.ring = ring;
	h.mode = mode;
	h.nr_mshot = 0;
	nw_list_init(&h.ready);
	harvest(ring, ev, n, &h);
	/* A wake meant for a driver, taken by a submitter: pass it on. */
	for (i = 0; mode == NW_RUN_SUBMIT && i < n; i++)
		if (!ev[i].io &&
		    __atomic_load_n(&ring->driver, __ATOMIC_RELAXED))
			nw_loop_wake(&ring->loop);
	for (i = 0; mode == NW_RUN_SYNC && i < n; i++)
		if (!ev[i].io) /* a kick for whoever harvests: not ours */
			nw_loop_wake(&ring->loop);
	if (mode == NW_RUN_BG &&
	    (ring->dead || __atomic_load_n(&ring->gone, __ATOMIC_RELAXED) ||
	     exit_asked(ring) ||
	     (n == 0 && ring->exit_watch && ring_gone(ring)) ||
	     ((!nw_list_empty(&h.ready) || h.nr_mshot) && ring_gone(ring)))) {
		nw_poll_cancel_all(ring, &h.ready);
		/* Queued by harvest, not pushed yet: once, marked cancelled. */
		for (i = 0; i < h.nr_mshot; i++)
			nw_req_task_queue(h.mshot[i]);
		ring_exit(ring);
		return n;
	}
	run_ready(ring, &h);
	return n;
}

/*
 * After ring exit the cancelled requests finish as task work (a worker's
 * once its blocking call is interrupted); with nobody left to run it on a
 * DEFER_TASKRUN ring, this thread takes the submit side and runs it. True
 * once every request is freed (bounded: about 10 s).
 */
static bool reactor_drain(struct nw_ring *ring)
{
	static const struct timespec nap = {0, 1000000};
	bool done = false;

	for (int i = 0; i < 10000 && !done; i++) {
		if (i)
			nanosleep(&nap, NULL);
		nw_submit_lock(ring);
		/* No CQ batch: a NO_MMAP ring's memory may be gone. */
		nw_run_tw(ring);
		done = !ring->nr_reqs &&
		       !__atomic_load_n(&ring->tw_head, __ATOMIC_ACQUIRE);
		nw_submit_unlock(ring);
	}
	return done;
}

/*
 * The ring is gone and its exit done: what is left of it goes too (the
 * kernel's io_ring_exit_work and io_ring_ctx_free). Nobody must still
 * use it: no waiter, no driver, no poller, no watcher of its fd; else it
 * stays as it is, as before. The release (setup.c) frees the rest.
 */
static void reactor_teardown(struct nw_ring *ring)
{
	if ((ring->sqd &&
	     !__atomic_load_n(&ring->sqd_detached, __ATOMIC_ACQUIRE)) ||
	    !reactor_drain(ring) ||
	    __atomic_load_n(&ring->waiters, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&ring->drivers_wanted, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&ring->ring_pollers, __ATOMIC_SEQ_CST) ||
	    __atomic_exchange_n(&ring->torn, true, __ATOMIC_SEQ_CST))
		return;
	ring->release(ring);
}

void nw_reactor_exit_unattended(struct nw_ring *ring)
{
	struct nw_list ready;

	nw_list_init(&ready);
	pthread_mutex_lock(&ring->reactor_lock);
	nw_poll_cancel_all(ring, &ready);
	__atomic_store_n(&ring->gone, true, __ATOMIC_RELAXED);
	ring_exit(ring);
	pthread_mutex_unlock(&ring->reactor_lock);
	reactor_teardown(ring);
}

/*
 * A forked child's task goes away (exec, exit) with requests in flight on
 * its own engine for its parent's ring (docs/fork.md): each is cancelled
 * and its CQE posted now, on this thread, as the kernel's
 * io_uring_cancel_generic does at exec and exit, so that the parent,
 * which reaps them, loses none. The reactor thread, if any, is kept out
 * of epoll as for a waiter that drives; the drain is bounded.
 */
void nw_reactor_task_exit(struct nw_ring *ring)
{
	struct nw_list ready;

	nw_list_init(&ready);
	nw_reactor_drive_begin(ring); /* reactor_lock, as the harvester */
	nw_poll_cancel_all(ring, &ready);
	nw_cancel_ring_exit(ring);
	reactor_drain(ring);
	nw_reactor_drive_end(ring);
}

/*
 * The ring's reactor thread (rings without DEFER_TASKRUN): harvests when
 * no waiter drives, so CQEs appear without the program entering. It steps
 * aside for a waiter: the waiter raises drivers_wanted and kicks it out of
 * epoll if it is in there (bg_in_wait); both sides use seq_cst so that one
 * of them always sees the other.
 */
static void *reactor_main(void *arg)
{
	struct nw_ring *ring = arg;

	nw_in_engine = 1; /* its closes are the engine's own */
	/* Started as the ring was claimed for release: nothing to run. */
	if (__atomic_load_n(&ring->torn, __ATOMIC_ACQUIRE))
		return NULL;
	while (!__atomic_load_n(&ring->dead, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&ring->reactor_mu);
		while (ring->drivers_wanted)
			pthread_cond_wait(&ring->reactor_cv, &ring->reactor_mu);
		pthread_mutex_unlock(&ring->reactor_mu);

		pthread_mutex_lock(&ring->reactor_lock);
		__atomic_store_n(&ring->bg_in_wait, true, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&ring->drivers_wanted, __ATOMIC_SEQ_CST))
			nw_reactor_run(ring, NULL, NULL, NW_RUN_BG);
		__atomic_store_n(&ring->bg_in_wait, false, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&ring->reactor_lock);
	}
	reactor_teardown(ring);
	return NULL;
}

/* A waiter takes over harvesting from the reactor thread. */
void nw_reactor_drive_begin(struct nw_ring *ring)
{
	pthread_mutex_lock(&ring->reactor_mu);
	__atomic_add_fetch(&ring->drivers_wanted, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&ring->reactor_mu);
	if (__atomic_load_n(&ring->bg_in_wait, __ATOMIC_SEQ_CST))
		nw_loop_wake(&ring->loop);
	pthread_mutex_lock(&ring->reactor_lock);
}

/* One driver fewer wanted: the reactor thread resumes at none. */
static void drivers_release(struct nw_ring *ring)
{
	pthread_mutex_lock(&ring->reactor_mu);
	if (!__atomic_sub_fetch(&ring->drivers_wanted, 1, __ATOMIC_SEQ_CST))
		pthread_cond_signal(&ring->reactor_cv);
	pthread_mutex_unlock(&ring->reactor_mu);
}

void nw_reactor_drive_end(struct nw_ring *ring)
{
	pthread_mutex_unlock(&ring->reactor_lock);
	drivers_release(ring);
}

/* Harvest ring without sleeping, a few rounds while they find events. */
static void sync_harvest(struct nw_ring *ring)
{
	static const struct timespec zero;

	for (int i = 0; i < 4; i++)
		if (nw_reactor_run(ring, &zero, NULL, NW_RUN_SYNC) <= 0)
			break;
}

/*
 * Take over from ring's reactor thread, as a waiter does, once its round
 * ends. Not from a waiter that drives (it holds reactor_lock for its whole
 * wait, and harvests itself), and never for long: false then.
 */
static bool settle_begin(struct nw_ring *ring)
{
	static const struct timespec nap = {0, 20000};
	struct timespec now, until;

	if (!__atomic_load_n(&ring->bg_running, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&ring->driver, __ATOMIC_SEQ_CST))
		return false;
	/* A round takes microseconds; a bound for a stalled one. */
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += 100000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&ring->reactor_mu);
	__atomic_add_fetch(&ring->drivers_wanted, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&ring->reactor_mu);
	if (__atomic_load_n(&ring->bg_in_wait, __ATOMIC_SEQ_CST))
		nw_loop_wake(&ring->loop);
	while (pthread_mutex_trylock(&ring->reactor_lock)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > until.tv_sec ||
		    (now.tv_sec == until.tv_sec &&
		     now.tv_nsec >= until.tv_nsec) ||
		    __atomic_load_n(&ring->driver, __ATOMIC_SEQ_CST)) {
			drivers_release(ring);
			return false;
		}
		nanosleep(&nap, NULL);
	}
	return true;
}

/* Harvest ring after its reactor thread's round, if it has one running. */
static void settled_harvest(struct nw_ring *ring)
{
	if (!settle_begin(ring)) {
		sync_harvest(ring);
		return;
	}
	sync_harvest(ring);
	nw_reactor_drive_end(ring);
}

/*
 * A ring this thread may harvest: its own process's (a forked child must
 * not take its parent's events), with a loop, alive, and with something
 * of the kind count counts (parked requests, or watches of rings' fds).
 */
static bool ring_harvestable(struct nw_ring *ring, const unsigned int *count)
{
	return ring->owner_pid == nw_getpid() &&
	       __atomic_load_n(count, __ATOMIC_RELAXED) &&
	       nw_loop_ready(&ring->loop) &&
	       !__atomic_load_n(&ring->dead, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&ring->gone, __ATOMIC_RELAXED);
}

/*
 * A CQE post woke polls of a ring's fd (settle): a polling ring's
 * reactor thread may have taken the edge first and be running it, its
 * POLL_ADD already unparked. Step in as a waiter does, which waits for
 * that round to end (reactor_lock), then look too. Rings that watch no
 * ring's fd are left alone.
 */
static void settle_ring_watchers(void)
{
	struct nw_ring *ring = NULL;

	while ((ring = nw_ring_next(ring)))
		if (ring_harvestable(ring, &ring->ring_watches))
			settled_harvest(ring);
}

/*
 * Each ring with something parked is harvested without sleeping, again
 * while a round found events (a CQE it posted may signal an eventfd a
 * poll waits on, as the kernel's task work runs until none is left),
 * at most a few rounds. The thread counts as the engine's meanwhile: the
 * engine's own eventfd writes come back through the interposers.
 *
 * A ring with a READ_MULTISHOT parked (prep's sync_wake: also while it
 * waits for its first readiness, as IOSQE_ASYNC's does) is harvested
 * after its reactor thread's round: that thread may have taken
 * the write's edge first, and if it is late to run the op (a loaded
 * machine), the next write's data joins this one's and one read takes
 * both, where the kernel's task work read each write's alone before the
 * write returned (liburing's read-mshot). A POLL_ADD reports readiness,
 * which a late round does not change: its rings skip that round trip.
 */
void nw_reactor_sync_wake(bool settle)
{
	struct nw_ring *ring = NULL;

	if (nw_in_engine)
		return;
	if (settle) {
		nw_in_engine++;
		settle_ring_watchers();
		nw_in_engine--;
	}
	if (likely(!__atomic_load_n(&nw_poll_adds_parked, __ATOMIC_RELAXED) &&
		   !__atomic_load_n(&nw_poll_syncs_parked, __ATOMIC_RELAXED)))
		return;
	nw_in_engine++;
	while ((ring = nw_ring_next(ring))) {
		if (!ring_harvestable(ring, &ring->nr_parked))
			continue;
		if (!ring->lockless_cq &&
		    __atomic_load_n(&ring->nr_sync_parked, __ATOMIC_RELAXED))
			settled_harvest(ring);
		else
			sync_harvest(ring);
	}
	nw_in_engine--;
}

void nw_reactor_ensure(struct nw_ring *ring)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t tid;

	if (__atomic_load_n(&ring->bg_running, __ATOMIC_ACQUIRE) ||
	    !nw_loop_ready(&ring->loop) ||
	    (ring->lockless_cq && !nw_ring_observed(ring)))
		return;
	pthread_mutex_lock(&ring->reactor_mu);
	if (!ring->bg_running &&
	    !__atomic_load_n(&ring->torn, __ATOMIC_ACQUIRE)) {
		nw_sigfill_async(&all);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (!pthread_create(&tid, &attr, reactor_main, ring))
			__atomic_store_n(&ring->bg_running, true,
					 __ATOMIC_RELEASE);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_unlock(&ring->reactor_mu);
}

bool nw_reactor_want_driver(struct nw_ring *ring)
{
	int ret;

	if (!ring->lockless_cq)
		return nw_loop_ready(&ring->loop);
	if (nw_loop_ready(&ring->loop))
		return true;
	pthread_mutex_lock(&ring->poll_lock);
	ret = nw_loop_ensure(&ring->loop);
	pthread_mutex_unlock(&ring->poll_lock);
	return !ret;
}
