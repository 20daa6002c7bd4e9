/* SPDX-License-Identifier: MIT */
/*
 * io_uring_enter(GETEVENTS): wait until min_complete CQEs are in the ring,
 * a timeout expires (-ETIME), a signal arrives (-EINTR) or CQEs were lost
 * (-EBADR); a non-empty CQ turns -ETIME/-EINTR into 0 (kernel io_uring.c
 * io_cqring_wait). The sigmask argument is applied for the sleep only,
 * atomically, by ppoll. Each waiting thread sleeps on its own eventfd,
 * listed on the ring, so a post wakes every waiter and no wakeup is eaten
 * by another waiter.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "internal.h"
#include "complete.h"
#include "fdhigh.h"
#include "reactor.h"
#include "spin.h"
#include "waitq.h"

struct wait_args {
	struct nw_ext_arg ea;
	const sigset_t *sig;	    /* NULL: keep the thread's mask */
	const sigset_t *sleep_mask; /* the mask every sleep passes (wait_for) */
	sigset_t sigbuf;
	sigset_t old; /* the thread's mask, restored when the wait ends */
};

/*
 * An IORING_ENTER_ABS_TIMER time on the ring's clock, as a CLOCK_MONOTONIC
 * deadline (BOOTTIME: less the time spent suspended so far).
 */
static struct timespec abs_deadline(const struct nw_ring *ring,
				    const struct __kernel_timespec *ts)
{
	struct timespec d = {0, 0}, mono, boot;
	long long ns;

	if (ts->tv_sec < 0 || ts->tv_nsec < 0)
		return d;
	if (ts->tv_sec >= NW_DEADLINE_MAX_SEC) {
		d.tv_sec = NW_DEADLINE_MAX_SEC;
		return d;
	}
	ns = ts->tv_sec * 1000000000LL + ts->tv_nsec;
	if (ring->clockid == CLOCK_BOOTTIME) {
		clock_gettime(CLOCK_MONOTONIC, &mono);
		clock_gettime(CLOCK_BOOTTIME, &boot);
		ns -= nw_ts_ns(&boot) - nw_ts_ns(&mono);
		if (ns < 0)
			ns = 0;
	}
	d.tv_sec = ns / 1000000000;
	d.tv_nsec = ns % 1000000000;
	return d;
}

/*
 * Read the enter argument, as io_get_ext_arg does before any wait: with
 * EXT_ARG a struct io_uring_getevents_arg (size checked, pointers copied),
 * else the sigset pointer itself. The timeout is made absolute now.
 */
int nw_get_ext_arg(const struct nw_ring *ring, unsigned int flags,
		   const void *arg, size_t argsz, struct nw_ext_arg *out)
{
	struct io_uring_getevents_arg ea;
	struct __kernel_timespec ts;

	out->sigp = arg;
	out->sigsz = argsz;
	out->has_deadline = false;
	out->min_ns = 0;
	if (!(flags & IORING_ENTER_EXT_ARG))
		return 0;
	if (argsz != sizeof(ea))
		return -EINVAL;
	if (nw_copy_from_user(&ea, arg, sizeof(ea)))
		return -EFAULT;
	out->sigp = (const void *)(uintptr_t)ea.sigmask;
	out->sigsz = ea.sigmask_sz;
	out->min_ns = (long long)NW_GETEVENTS_MIN_WAIT(ea) * 1000;
	if (!ea.ts)
		return 0;
	if (nw_copy_from_user(&ts, (void *)(uintptr_t)ea.ts, sizeof(ts)))
		return -EFAULT;
	if (flags & IORING_ENTER_ABS_TIMER)
		out->deadline = abs_deadline(ring, &ts);
	else
		out->deadline = nw_deadline(&ts);
	out->has_deadline = true;
	return 0;
}

/* set_user_sigmask: only checked when the thread is about to sleep. */
static int get_sigmask(struct wait_args *wa)
{
	if (!wa->ea.sigp)
		return 0;
	if (wa->ea.sigsz != _NSIG / 8)
		return -EINVAL;
	if (nw_copy_from_user(&wa->sigbuf, wa->ea.sigp, _NSIG / 8))
		return -EFAULT;
	wa->sig = &wa->sigbuf;
	return 0;
}

/* Time left until the deadline, clamped at zero. */
static struct timespec time_left(const struct timespec *deadline)
{
	struct timespec now, left;

	clock_gettime(CLOCK_MONOTONIC, &now);
	left.tv_sec = deadline->tv_sec - now.tv_sec;
	left.tv_nsec = deadline->tv_nsec - now.tv_nsec;
	if (left.tv_nsec < 0) {
		left.tv_sec--;
		left.tv_nsec += 1000000000;
	}
	if (left.tv_sec < 0)
		left.tv_sec = left.tv_nsec = 0;
	return left;
}

/*
 * Does sig's disposition discard it: SIG_IGN, or a default that ignores
 * (kernel/signal.c sig_handler_ignored)?
 */
static bool sig_discarded(int sig)
{
	struct sigaction sa;

	if (sigaction(sig, NULL, &sa))
		return false; /* libc's own (SIGCANCEL...) */
	if (sa.sa_handler == SIG_IGN)
		return true;
	return sa.sa_handler == SIG_DFL && (sig == SIGCHLD || sig == SIGURG ||
					    sig == SIGWINCH || sig == SIGCONT);
}

/*
 * Is a signal pending that the wait's mask lets through? One that the
 * disposition ignores is dropped instead: the kernel discards such a
 * signal as it is sent to a task that does not block it (sig_ignored), so
 * it never ends the kernel's wait, but the engine held every signal (the
 * submit part, the wait between its sleeps), so it was queued, and a
 * sleep that let it in would say EINTR for it: the SIGPIPE of a WRITE into
 * a pipe without readers, at SIG_IGN as servers have it. Called after
 * every look; the sleeps are ppolls, which restart for such a signal.
 */
static bool signal_waiting(const sigset_t *mask)
{
	static const struct timespec zero;
	sigset_t pending, drop;
	bool any = false, dropping = false;

	if (sigpending(&pending) < 0 || sigisemptyset(&pending))
		return false;
	sigemptyset(&drop);
	for (int sig = 1; sig < _NSIG; sig++) {
		if (sigismember(&pending, sig) != 1 ||
		    sigismember(mask, sig) != 0)
			continue;
		if (sig_discarded(sig)) {
			sigaddset(&drop, sig);
			dropping = true;
		} else {
			any = true;
		}
	}
	/* Every queued instance (a real-time signal may have several). */
	while (dropping && sigtimedwait(&drop, NULL, &zero) > 0)
		;
	return any;
}

static int sleep_once(int fd, const struct wait_args *wa)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	struct timespec left;
	eventfd_t v;
	int r;

	if (wa->ea.has_deadline)
		left = time_left(&wa->ea.deadline);
	/* An ignored signal restarts it (ERESTARTNOHAND): see nw_loop_wait. */
	r = ppoll(&pfd, 1, wa->ea.has_deadline ? &left : NULL, wa->sleep_mask);
	if (r < 0)
		return errno == EINTR ? -EINTR : -errno;
	if (r == 0)
		return -ETIME;
	eventfd_read(fd, &v);
	return 0;
}

/*
 * Complete what workers and the reactor finished (DEFER_TASKRUN rings:
 * only here), and move the CQ backlog into the ring as room allows.
 */
static void run_task_work(struct nw_ring *ring)
{
	if (__atomic_load_n(&ring->tw_head, __ATOMIC_ACQUIRE)) {
		if (ring->lockless_cq) {
			nw_cq_begin_batch(ring);
			nw_run_tw(ring);
			nw_cq_flush_batch(ring);
		} else {
			nw_run_tw_trylock(ring);
		}
	}
	if (READ_ONCE(ring->ovf_head)) {
		nw_submit_lock(ring);
		nw_cq_flush_overflow(ring);
		nw_submit_unlock(ring);
	}
	if (unlikely(__atomic_load_n(&ring->aux_lost, __ATOMIC_RELAXED)))
		nw_cq_take_lost(ring);
}

/*
 * A DEFER_TASKRUN ring's look at readiness at every GETEVENTS, before its
 * task work runs: the kernel's poll wake-up queues the task work when the
 * fd becomes ready, and the next enter runs it, even if the program has
 * read the data since. Here readiness is known only from a harvest, and
 * an edge-triggered event whose data went before the harvest is dropped
 * by epoll: so look (a zero timeout, as the driver) while something is
 * parked. liburing 2.15's multicqes_drain (write, get_events, read) hung.
 * Not again when this enter's submit part just looked (submit_end), after
 * everything the program did before it.
 */
#define NW_DEFER_LOOKS 16 /* full harvests in a row at most */

static void defer_look(struct nw_ring *ring)
{
	static const struct timespec zero;
	bool lazy, look;

	if (!ring->lockless_cq ||
	    !__atomic_load_n(&ring->nr_parked, __ATOMIC_RELAXED) ||
	    !nw_loop_ready(&ring->loop))
		return;
	/* What the submits parked lazily is tried first (poll.c). */
	lazy = __atomic_load_n(&ring->nr_lazy, __ATOMIC_RELAXED);
	look = !(nw_sighold_cur && nw_sighold_cur->looked);
	if ((!lazy && !look) ||
	    __atomic_exchange_n(&ring->driver, 1, __ATOMIC_ACQUIRE))
		return;
	nw_reactor_drive_begin(ring);
	if (lazy)
		nw_reactor_run_lazy(ring);
	/*
	 * The kernel's task work has every wake-up there was: a full batch
	 * means more events wait, looked at now rather than after the wait's
	 * signal mask and spin decision (pipes: 128 ready reads).
	 */
	for (int i = 0; look && i < NW_DEFER_LOOKS &&
			__atomic_load_n(&ring->nr_parked, __ATOMIC_RELAXED);
	     i++)
		if (nw_reactor_run(ring, &zero, NULL, NW_RUN_DRIVER) <
		    NW_LOOP_BATCH)
			break;
	nw_reactor_drive_end(ring);
	__atomic_store_n(&ring->driver, 0, __ATOMIC_RELEASE);
}

/* True once the CQ tail reached target (wrap-safe). */
static __thread unsigned int wait_tmo_seq; /* timeouts fired at wait start */

/*
 * Done waiting: the CQ tail reached target (wrap-safe), or a timeout
 * fired since the wait began, which wakes every waiter whatever its
 * min_complete (kernel io_should_wake).
 */
static bool cq_reached(struct nw_ring *ring, unsigned int target)
{
	if (__atomic_load_n(&ring->tmo_seq, __ATOMIC_ACQUIRE) != wait_tmo_seq)
		return true;
	return (int)(load_acquire(ring->cq_tail) - target) >= 0;
}

/* Sleep on the thread's eventfd until woken (a waiter that does not drive). */
static int wait_sleep(struct nw_ring *ring, unsigned int target,
		      const struct wait_args *wa, int fd)
{
	int ret;

	for (;;) {
		run_task_work(ring);
		if (cq_reached(ring, target))
			return 0;
		if (ring->cq_dropped) {
			ring->cq_dropped = false;
			return -EBADR;
		}
		ret = sleep_once(fd, wa);
		if (ret)
			return ret;
	}
}

/*
 * Drive the ring's reactor while waiting: harvest readiness and reissue
 * parked requests on this thread, sleeping in epoll itself, so a
 * completion needs no hand-off between threads.
 */
static int wait_drive(struct nw_ring *ring, unsigned int target,
		      const struct wait_args *wa)
{
	struct timespec left;
	int ret;

	for (;;) {
		run_task_work(ring);
		if (cq_reached(ring, target))
			return 0;
		if (ring->cq_dropped) {
			ring->cq_dropped = false;
			return -EBADR;
		}
		if (wa->ea.has_deadline)
			left = time_left(&wa->ea.deadline);
		if (wa->ea.has_deadline && !left.tv_sec && !left.tv_nsec)
			return -ETIME;
		/* It sleeps in ppoll: an ignored signal does not end it. */
		ret = nw_reactor_run(ring, wa->ea.has_deadline ? &left : NULL,
				     wa->sleep_mask, NW_RUN_DRIVER);
		if (ret < 0)
			return ret;
	}
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One look without sleeping: harvest (a driver) or check the eventfd. */
static int spin_poll(struct nw_ring *ring, bool drive, int fd,
		     const sigset_t *mask)
{
	static const struct timespec zero;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	eventfd_t v;
	int r;

	if (drive)
		return nw_reactor_run(ring, &zero, mask, NW_RUN_DRIVER);
	r = ppoll(&pfd, 1, &zero, mask);
	if (r < 0)
		return -errno;
	if (r > 0)
		eventfd_read(fd, &v);
	return 0;
}

/*
 * Let a pending signal in, as a sleep would: a poll that may sleep (1 ns)
 * with the wait's mask sees it, runs its handler and says -EINTR. Returns
 * -EINTR, or 1 when another thread took the signal meanwhile.
 */
static int take_signal(const sigset_t *mask)
{
	static const struct timespec one_ns = {0, 1};

	if (ppoll(NULL, 0, &one_ns, mask) < 0 && errno == EINTR)
		return -EINTR;
	return 1;
}

int nw_wait_signal_check(const sigset_t *mask)
{
	return signal_waiting(mask) && take_signal(mask) < 0 ? -EINTR : 0;
}

/*
 * Busy-wait up to budget_ns before sleeping. Signals are blocked around
 * the whole wait (wait_for) and each look passes the wait's mask, so a
 * signal ends the spin at once with -EINTR, its handler run once, as a
 * sleep would. Returns 0 when the wait is satisfied, 1 when the budget ran
 * out, -EINTR, -ETIME or -errno.
 */
static int spin(struct nw_ring *ring, unsigned int target,
		const struct wait_args *wa, bool drive, int fd,
		long long budget_ns)
{
	long long end = now_ns() + budget_ns, deadline = 0, t;
	int r;

	if (wa->ea.has_deadline)
		deadline = nw_ts_ns(&wa->ea.deadline);
	for (;;) {
		run_task_work(ring);
		if (cq_reached(ring, target))
			return 0;
		r = spin_poll(ring, drive, fd, wa->sleep_mask);
		if (r < 0)
			return r;
		/*
		 * A zero-timeout look does not report a pending signal (the
		 * kernel checks only before sleeping): ask, and take it.
		 */
		if (signal_waiting(wa->sleep_mask))
			return take_signal(wa->sleep_mask);
		if (cq_reached(ring, target))
			return 0;
		t = now_ns();
		if (deadline && t >= deadline)
			return -ETIME;
		if (t >= end)
			return 1;
	}
}

/*
 * The sleep of a wait on a ring shared across fork (docs/fork.md): the
 * other process's CQ posts wake nobody here, so each sleep is cut short
 * (10 us, doubling up to 1 ms) and the shared tail looked at again.
 */
static int wait_forked(struct nw_ring *ring, unsigned int target,
		       struct wait_args *wa, bool drive, int fd)
{
	struct nw_ext_arg general = wa->ea;
	long long end = general.has_deadline ? nw_ts_ns(&general.deadline) : 0;
	long long step = 10000, t;
	int ret;

	for (;;) {
		t = now_ns() + step;
		if (end && end < t)
			t = end;
		wa->ea.has_deadline = true;
		wa->ea.deadline.tv_sec = t / 1000000000;
		wa->ea.deadline.tv_nsec = t % 1000000000;
		ret = drive ? wait_drive(ring, target, wa)
			    : wait_sleep(ring, target, wa, fd);
		if (ret != -ETIME || (end && now_ns() >= end))
			break;
		if (step < 1000000)
			step *= 2;
	}
	wa->ea = general;
	return ret;
}

/*
 * Spin if the policy says so, then sleep; learn from how it went.
 * All signals are blocked for the whole wait, and every look and every
 * sleep passes the wait's mask (the sigmask argument, or the thread's
 * own): a signal that arrives while the engine runs user code stays
 * pending until the next look or sleep, which then returns -EINTR and runs
 * its handler, as the kernel checks for signals all through its wait; what
 * the mask blocks is delivered only when enter returns, as with pselect.
 * (A process-directed signal may meanwhile be taken by another thread that
 * does not block it.)
 */
static int wait_for(struct nw_ring *ring, unsigned int target,
		    struct wait_args *wa, bool drive, int fd)
{
	long long start = now_ns(), budget = nw_spin_budget(&ring->spin);
	bool spun = budget > 0, hit = false;
	int ret = 1;

	wa->sleep_mask = wa->sig ? wa->sig : &wa->old;
	if (spun) {
		ret = spin(ring, target, wa, drive, fd, budget);
		hit = ret == 0;
	}
	if (ret == 1 &&
	    unlikely(__atomic_load_n(&ring->forked, __ATOMIC_RELAXED)))
		ret = wait_forked(ring, target, wa, drive, fd);
	else if (ret == 1)
		ret = drive ? wait_drive(ring, target, wa)
			    : wait_sleep(ring, target, wa, fd);
	nw_spin_learn(&ring->spin, now_ns() - start, ret == 0, spun, hit);
	return ret;
}

/*
 * A wait with min_wait_usec (IORING_FEAT_MIN_TIMEOUT), as the kernel's
 * io_cqring_min_timer_wakeup: wait for min_complete until min_wait has
 * passed. Then, without a later general timeout, or when CQEs came
 * meanwhile or were there from the start, the wait is over; otherwise
 * the first new CQE ends it, or the general timeout (-ETIME).
 */
static int wait_min(struct nw_ring *ring, unsigned int target,
		    struct wait_args *wa, bool drive, int fd)
{
	unsigned int min_tail = load_acquire(ring->cq_tail);
	struct nw_ext_arg general = wa->ea;
	long long min_end = now_ns() + wa->ea.min_ns;
	int ret;

	wa->ea.has_deadline = true;
	wa->ea.deadline.tv_sec = min_end / 1000000000;
	wa->ea.deadline.tv_nsec = min_end % 1000000000;
	ret = wait_for(ring, target, wa, drive, fd);
	wa->ea = general;
	if (ret != -ETIME || !general.has_deadline ||
	    nw_ts_ns(&general.deadline) <= min_end)
		return ret;
	if (load_acquire(ring->cq_tail) != min_tail || nw_cq_ready(ring))
		return -ETIME; /* events: 0 (wait_blocked) */
	return wait_for(ring, min_tail + 1, wa, drive, fd);
}

/* The wait proper, with every signal blocked (nw_wait). */
static int wait_blocked(struct nw_ring *ring, unsigned int min_complete,
			const struct wait_args *args)
{
	struct wait_args wa = *args; /* its masks point into this copy */
	struct nw_waiter w;
	unsigned int target;
	bool drive;
	int ret;

	ret = get_sigmask(&wa);
	if (ret)
		return ret;
	target = READ_ONCE(*ring->cq_head) + min_complete;
	wait_tmo_seq = __atomic_load_n(&ring->tmo_seq, __ATOMIC_ACQUIRE);

	/* One waiter at a time drives the reactor; others sleep. */
	drive = nw_reactor_want_driver(ring) &&
		!__atomic_exchange_n(&ring->driver, 1, __ATOMIC_ACQUIRE);
	if (drive) {
		nw_reactor_drive_begin(ring);
		w.fd = ring->loop.wake_fd;
	} else {
		w.fd = nw_waiter_thread_fd();
		if (w.fd < 0)
			return -errno;
	}
	nw_waiter_add(ring, &w);
	if (wa.ea.min_ns)
		ret = wait_min(ring, target, &wa, drive, w.fd);
	else
		ret = wait_for(ring, target, &wa, drive, w.fd);
	nw_waiter_del(ring, &w);
	if (drive) {
		nw_reactor_drive_end(ring);
		__atomic_store_n(&ring->driver, 0, __ATOMIC_RELEASE);
	}
	return nw_cq_ready(ring) ? 0 : ret;
}

/*
 * All signals are blocked from the moment the wait is known to be needed
 * until it ends, so that one arriving meanwhile stays pending for the
 * wait's looks and sleeps (which pass the wait's mask and say -EINTR),
 * instead of running its handler while nothing would notice.
 */
int nw_wait(struct nw_ring *ring, unsigned int min_complete, unsigned int flags,
	    const void *arg, size_t argsz)
{
	struct wait_args wa;
	struct nw_sighold *sh;
	sigset_t all;
	int ret;

	/* The checks below would find what this finds (complete.h). */
	if (likely(nw_wait_needless(ring, min_complete, flags)))
		return 0;
	wa.sig = NULL;
	ret = nw_get_ext_arg(ring, flags, arg, argsz, &wa.ea);
	if (ret)
		return ret;
	if (min_complete > ring->cq_entries)
		min_complete = ring->cq_entries;
	defer_look(ring);
	run_task_work(ring);
	if (nw_cq_ready(ring) >= min_complete)
		return 0;
	/* enter held them from its submit part on: they stay so. */
	sh = nw_sighold_cur;
	if (sh && sh->held) {
		wa.old = sh->old;
		return wait_blocked(ring, min_complete, &wa);
	}
	nw_sigfill_async(&all);
	pthread_sigmask(SIG_BLOCK, &all, &wa.old);
	ret = wait_blocked(ring, min_complete, &wa);
	pthread_sigmask(SIG_SETMASK, &wa.old, NULL);
	return ret;
}

/*
 * GETEVENTS in a forked child on a ring its parent set up: the engine
 * state is the parent's (its locks may have been held at the fork), so
 * only the shared CQ is looked at, with short sleeps that let signals in
 * (the sigmask argument applies to them, as ppoll does it). The parent's
 * engine posts there; the child's reaping moves the shared head.
 */
int nw_wait_foreign(struct nw_ring *ring, unsigned int min_complete,
		    unsigned int flags, const void *arg, size_t argsz)
{
	struct nw_ext_arg fa;
	struct timespec step = {0, 10000};
	unsigned int target;
	long long deadline;
	sigset_t mask;
	int ret;

	ret = nw_get_ext_arg(ring, flags, arg, argsz, &fa);
	if (ret)
		return ret;
	if (min_complete > ring->cq_entries)
		min_complete = ring->cq_entries;
	if (nw_cq_ready(ring) >= min_complete)
		return 0;
	if (fa.sigp) {
		if (fa.sigsz != _NSIG / 8)
			return -EINVAL;
		if (nw_copy_from_user(&mask, fa.sigp, _NSIG / 8))
			return -EFAULT;
	}
	deadline = fa.has_deadline ? nw_ts_ns(&fa.deadline) : 0;
	target = READ_ONCE(*ring->cq_head) + min_complete;
	for (;;) {
		if ((int)(load_acquire(ring->cq_tail) - target) >= 0)
			return 0;
		if (fa.has_deadline && now_ns() >= deadline) {
			ret = -ETIME;
			break;
		}
		if (ppoll(NULL, 0, &step, fa.sigp ? &mask : NULL) < 0 &&
		    errno == EINTR) {
			ret = -EINTR;
			break;
		}
		if (step.tv_nsec < 1000000)
			step.tv_nsec *= 2;
	}
	return nw_cq_ready(ring) ? 0 : ret;
}
