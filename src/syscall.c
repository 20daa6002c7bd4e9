/* SPDX-License-Identifier: MIT */
/*
 * The exported entry points: io_uring_setup/enter/register with the system
 * calls' signatures and semantics, returning -errno. They validate what the
 * kernel validates before it looks at the ring, find the ring, and hand off
 * to setup.c, submit.c, wait.c and register.c.
 */
#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <pthread.h>
#include <unistd.h>
#include "internal.h"
#include "complete.h"
#include "reactor.h"
#include "ringmem.h"
#include "ringpoll.h"
#include "submit.h"
#include "sqpoll.h"
#include "tctx.h"
#include "trace.h"
#include "poll.h"
#include "ringpoll.h"
#include <nowait.h>

#define NW_EXPORT __attribute__((visibility("default")))

/*
 * The three io_uring calls are no cancellation points, where many of the
 * engine's calls are glibc's (openat, pread, ppoll, read...): a pending
 * deferred cancel would unwind the thread from inside the engine, its
 * locks held. So cancellation is off while the engine runs (a flag in
 * the thread, no system call); the program's next cancellation point
 * acts on it.
 */
NW_EXPORT int nowait_setup(unsigned int entries, struct io_uring_params *p)
{
	int ret, cs;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	nw_in_engine++;
	ret = nw_setup(entries, p);
	nw_in_engine--;
	nw_trace_setup(entries, p, ret);
	pthread_setcancelstate(cs, NULL);
	return ret;
}

/*
 * The submit side is held by the single issuer on lockless rings and by
 * submit_lock elsewhere; work other threads queued meanwhile is run before
 * leaving (nw_run_tw_trylock rechecks after the unlock).
 */
static __attribute__((always_inline)) inline int submit(struct nw_ring *ring,
							unsigned int to_submit)
{
	int ret;

	if (ring->single_issuer && unlikely(ring->submitter_tid != nw_gettid()))
		return -EEXIST;
	nw_tctx_note(); /* io_uring_add_tctx_node */
	if (ring->lockless_cq)
		return nw_submit_sqes(ring, to_submit);
	nw_submit_lock(ring);
	ret = nw_submit_sqes(ring, to_submit);
	nw_submit_unlock(ring);
	nw_run_tw_trylock(ring);
	return ret;
}

/*
 * A ring the parent set up, in a forked child. The engine state copied at
 * the fork is the parent's (its requests, its locks), so the child never
 * runs it: it may reap (nw_wait_foreign: the shared CQ only) and, at its
 * first submit, gets an engine of its own over the same ring memory
 * (nw_ring_adopt, docs/fork.md), found from then on for the ring's fd;
 * CQ posts of the two processes are serialised by the ring's shared lock
 * word. A ring the child cannot take on that way (registered resources,
 * polled, its submit side busy at the fork) refuses the submit at once
 * with -EPERM, said once on stderr, and so does every register. An SQPOLL
 * ring's poller serves the child's SQEs (sqpoll.c). A SINGLE_ISSUER ring
 * has one task on it, as in the kernel: the parent's (the child gets
 * -EEXIST), or the child's when it enables an R_DISABLED one first.
 */
static int foreign_refuse(const struct nw_ring *ring, const char *what)
{
	static bool said;

	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		fprintf(stderr,
			"nowait: process %d cannot %s on ring %u, set up by "
			"process %d before a fork (docs/fork.md): EPERM\n",
			(int)nw_getpid(), what, ring->id,
			(int)(ring->fork_child ? getppid() : ring->owner_pid));
	return -EPERM;
}

/* The ring as this process serves it: a child's own engine once adopted. */
static struct nw_ring *foreign_own(struct nw_ring *ring, bool submits)
{
	struct nw_ring *own = __atomic_load_n(&ring->adopted, __ATOMIC_ACQUIRE);

	if (!own && submits)
		own = nw_ring_adopt(ring);
	return own && own->owner_pid == nw_getpid() ? own : NULL;
}

/*
 * The submit part of an enter that may go on to wait: a signal that
 * arrives meanwhile must stay pending for the wait (-EINTR), as in the
 * kernel, not run its handler unseen. Signals are held from the first
 * request that could let one run while the wait may still sleep
 * (sighold_before in submit.c), or from the start when the wait cannot be
 * satisfied by the submit's own CQEs; the wait finds them held (nw_wait)
 * and nw_enter lets them go. A batch of inline NOPs that satisfies the
 * wait costs no system call.
 */
static __thread struct nw_sighold enter_hold
	__attribute__((tls_model("initial-exec")));

static __attribute__((always_inline)) inline int
submit_hold(struct nw_ring *ring, unsigned int to_submit,
	    unsigned int min_complete, unsigned int flags)
{
	if (likely(!(flags & IORING_ENTER_GETEVENTS) || !min_complete ||
		   nw_sighold_cur))
		return submit(ring, to_submit);
	enter_hold.held = enter_hold.looked = false;
	enter_hold.cq_need = min_complete < ring->cq_entries ? min_complete
							     : ring->cq_entries;
	nw_sighold_cur = &enter_hold;
	if ((unsigned long long)nw_cq_ready(ring) + to_submit < min_complete)
		nw_sighold_block(&enter_hold);
	return submit(ring, to_submit);
}

/* The submit knows whether the GETEVENTS part follows (nw_submit_waits). */
static __attribute__((always_inline)) inline int
submit_for_wait(struct nw_ring *ring, unsigned int to_submit,
		unsigned int min_complete, unsigned int flags)
{
	bool outer = nw_submit_waits;
	int ret;

	nw_submit_waits =
		(flags & (IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG)) ==
		IORING_ENTER_GETEVENTS;
	ret = submit_hold(ring, to_submit, min_complete, flags);
	nw_submit_waits = outer;
	return ret;
}

static inline long enter_ring(struct nw_ring *ring, int fd,
			      unsigned int to_submit, unsigned int min_complete,
			      unsigned int flags, const void *arg,
			      size_t argsz);

/* A forked child's enter on its parent's ring (foreign_refuse). */
static long foreign_enter(struct nw_ring *ring, int fd, unsigned int to_submit,
			  unsigned int min_complete, unsigned int flags,
			  const void *arg, size_t argsz)
{
	struct nw_ring *own = foreign_own(ring, to_submit);

	if (own)
		return enter_ring(own, fd, to_submit, min_complete, flags, arg,
				  argsz);
	if (to_submit)
		return foreign_refuse(ring, "submit");
	if (flags & IORING_ENTER_GETEVENTS)
		return nw_wait_foreign(ring, min_complete, flags, arg, argsz);
	return 0;
}

static long enter(int fd, unsigned int to_submit, unsigned int min_complete,
		  unsigned int flags, const void *arg, size_t argsz)
{
	struct nw_ring *ring;
	int ret2;

	if (unlikely(flags & ~NW_ENTER_FLAGS))
		return -EINVAL;
	/* fd is an index into the calling thread's registered rings. */
	if (unlikely(flags & IORING_ENTER_REGISTERED_RING))
		ret2 = nw_tctx_ring((unsigned int)fd, &ring);
	else if (likely(to_submit))
		ret2 = nw_ring_lookup_cached(fd, &ring);
	else
		ret2 = nw_ring_lookup(fd, &ring);
	if (unlikely(ret2))
		return ret2;
	if (unlikely(__atomic_load_n(&ring->disabled, __ATOMIC_ACQUIRE)))
		return -EBADFD;
	if (unlikely(ring->owner_pid != nw_getpid()) && !ring->sqd &&
	    !ring->single_issuer)
		return foreign_enter(ring, fd, to_submit, min_complete, flags,
				     arg, argsz);
	return enter_ring(ring, fd, to_submit, min_complete, flags, arg, argsz);
}

/* Inline in enter, the hot path; foreign_enter has a copy of its own. */
static __attribute__((always_inline)) inline long
enter_ring(struct nw_ring *ring, int fd, unsigned int to_submit,
	   unsigned int min_complete, unsigned int flags, const void *arg,
	   size_t argsz)
{
	int ret = 0, ret2;

	nw_ringmem_settle(ring, fd);
	if (unlikely(ring->sqd))
		return nw_sqpoll_enter(ring, to_submit, min_complete, flags,
				       arg, argsz);
	if (to_submit) {
		ret = submit_for_wait(ring, to_submit, min_complete, flags);
		if ((unsigned int)ret != to_submit)
			return ret;
	}
	if (flags & IORING_ENTER_GETEVENTS) {
		/* a submit that got SQEs in checked the issuer already */
		if (ring->single_issuer && ret <= 0 &&
		    ring->submitter_tid != nw_gettid() &&
		    (ring->flags & IORING_SETUP_DEFER_TASKRUN))
			return ret ? ret : -EEXIST;
		ret2 = likely(nw_wait_needless(ring, min_complete, flags))
			       ? 0
			       : nw_wait(ring, min_complete, flags, arg, argsz);
		if (!ret)
			ret = ret2;
	}
	return ret;
}

/*
 * The system call's long result: an SQPOLL ring's enter returns all of
 * to_submit, which may pass INT_MAX (the preload's route returns it so).
 * Cancellation is off until it is done (see nowait_setup).
 */
long nw_enter(int fd, unsigned int to_submit, unsigned int min_complete,
	      unsigned int flags, const void *arg, size_t argsz)
{
	struct nw_sighold *outer = nw_sighold_cur;
	long ret;
	int cs;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	nw_in_engine++; /* see nw_in_engine: a close meanwhile is not ours */
	ret = enter(fd, to_submit, min_complete, flags, arg, argsz);
	if (unlikely(nw_sighold_cur != outer)) { /* submit_for_wait's */
		nw_sighold_release(nw_sighold_cur);
		nw_sighold_cur = outer;
	}
	nw_in_engine--;
	if (unlikely(nw_ring_pollers_woken)) {
		nw_ring_pollers_woken = false;
		nw_reactor_sync_wake(true);
	}
	pthread_setcancelstate(cs, NULL);
	return ret;
}

/* The int of io_uring_enter(2): a count past INT_MAX is held at INT_MAX. */
NW_EXPORT int nowait_enter(int fd, unsigned int to_submit,
			   unsigned int min_complete, unsigned int flags,
			   const void *arg, size_t argsz)
{
	long ret = nw_enter(fd, to_submit, min_complete, flags, arg, argsz);

	return ret > INT_MAX ? INT_MAX : (int)ret;
}

static int reg(int fd, unsigned int opcode, void *arg, unsigned int nr_args)
{
	bool registered = opcode & IORING_REGISTER_USE_REGISTERED_RING;
	struct nw_ring *ring;
	int ret;

	opcode &= ~IORING_REGISTER_USE_REGISTERED_RING;
	if (opcode >= NW_REGISTER_LAST)
		return -EINVAL;
	/* fd -1 is for "blind" opcodes that need no ring. */
	if (fd == -1) {
		nw_in_engine++;
		ret = nw_register_blind(opcode, arg, nr_args);
		nw_in_engine--;
		return ret;
	}
	if (registered)
		ret = nw_tctx_ring((unsigned int)fd, &ring);
	else
		ret = nw_ring_lookup(fd, &ring);
	if (ret)
		return ret;
	if (unlikely(ring->owner_pid != nw_getpid() || ring->fork_child) &&
	    !ring->single_issuer)
		return foreign_refuse(ring, "register");
	nw_in_engine++;
	ret = nw_register(ring, opcode, arg, nr_args);
	nw_in_engine--;
	if (unlikely(nw_traced(ring)))
		nw_trace_register(fd, nw_register_name(opcode), opcode, nr_args,
				  ret);
	return ret;
}

/* Cancellation is off meanwhile (see nowait_setup). */
NW_EXPORT int nowait_register(int fd, unsigned int opcode, void *arg,
			      unsigned int nr_args)
{
	int ret, cs;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	ret = reg(fd, opcode, arg, nr_args);
	pthread_setcancelstate(cs, NULL);
	return ret;
}

NW_EXPORT void nowait_fd_closing(int fd)
{
	if (!nw_in_engine) { /* a signal handler that interrupted the engine */
		nw_ring_fd_closing(fd);
		nw_poll_fd_closing(fd);
	}
}

NW_EXPORT int nowait_ring_pollfd(int ring_fd)
{
	struct nw_ring *drive;
	int ret;

	nw_in_engine++;
	ret = nw_ring_watch_open(ring_fd, &drive);
	if (drive)
		nw_reactor_ensure(drive);
	nw_in_engine--;
	return ret;
}

NW_EXPORT int nowait_ring_pollfd_close(int pollfd)
{
	int ret;

	nw_in_engine++;
	ret = nw_ring_watch_close(pollfd);
	nw_in_engine--;
	return ret;
}

NW_EXPORT int nowait_ring_poll_mask(int fd)
{
	return nw_ring_watch_mask(fd);
}

#define NW_STR_(x) #x
#define NW_STR(x)  NW_STR_(x)

NW_EXPORT const char *nowait_version(void)
{
	return NW_STR(NOWAIT_VERSION_MAJOR) "." NW_STR(
		NOWAIT_VERSION_MINOR) "." NW_STR(NOWAIT_VERSION_PATCH);
}

NW_EXPORT int nowait_version_check(int major, int minor)
{
	return NOWAIT_VERSION_MAJOR > major ||
	       (NOWAIT_VERSION_MAJOR == major && NOWAIT_VERSION_MINOR >= minor);
}
