/* SPDX-License-Identifier: MIT */
/*
 * The reactor (reactor.c): harvests the ring's loop, calls each event
 * source's callback, and continues what became ready; the ring's reactor
 * thread; the hand-off between it and a waiter that drives; ring exit.
 */
#ifndef NW_REACTOR_H
#define NW_REACTOR_H

#include "internal.h"

/* Who harvests, and so who may post what became ready. */
enum nw_run_mode {
	NW_RUN_BG, /* the reactor thread: completions go to the submit side */
	NW_RUN_DRIVER, /* a waiter in enter: takes the submit side to complete */
	NW_RUN_SUBMIT, /* the submitter after a batch: holds the submit side */
	NW_RUN_SYNC, /* a program's write: as NW_RUN_BG, nothing else (sync) */
};

/*
 * Harvest readiness once and continue what became ready. Called by a
 * waiter in enter, the submitter right after a batch that parked requests
 * (timeout zero: the reissue check), or the ring's reactor thread.
 * Returns events handled, 0 on time-out, or -EINTR / -errno. A driver's
 * call with requests parked lazily (poll.c) only tries those again: 0.
 */
/*
 * A driver (reactor_lock held) tries again what the ring's submits parked
 * lazily, as task work would after their wake-ups: true if there was any.
 */
bool nw_reactor_run_lazy(struct nw_ring *ring);
int nw_reactor_run(struct nw_ring *ring, const struct timespec *timeout,
		   const sigset_t *sig, int mode);
/*
 * The submit on this thread is an enter's whose GETEVENTS part follows
 * (no EXT_ARG to fail first, every SQE asked for consumed): there the
 * kernel runs at once the task work that a poll found ready at arm
 * queued. So a DEFER_TASKRUN ring nobody observes posts what its
 * NW_RUN_SUBMIT harvest reissues in the batch, not as task work: the
 * same CQEs in the same order, with no hand-off. Set by enter (syscall.c),
 * cleared by a submit that comes short (submit.c).
 */
extern __thread bool nw_submit_waits __attribute__((tls_model("initial-exec")));
/*
 * Start the ring's reactor thread if the ring needs one: it has a loop
 * and no DEFER_TASKRUN, or DEFER_TASKRUN with readiness someone observes.
 * Called by submit.c (and register.c) after what may have parked.
 */
void nw_reactor_ensure(struct nw_ring *ring);
/*
 * Should a waiter drive the reactor? Yes when the ring has a loop; on a
 * DEFER_TASKRUN ring always (the loop is made now): nobody else will
 * harvest what a worker parks while this waiter sleeps.
 */
bool nw_reactor_want_driver(struct nw_ring *ring);
/*
 * The program wrote to some fd (the preload's write interposers): what
 * that made ready is harvested now, as the kernel's wake-up runs inside
 * the write and its task work before the write returns. Only while a
 * POLL_ADD or a READ_MULTISHOT is parked in the process (two loads
 * otherwise). With settle (a CQE post woke polls of a ring's fd: rare,
 * and the kernel's wake-up is synchronous), each ring that polls a ring's
 * fd is also harvested after its reactor thread, which may have taken the
 * edge first, ends its round; a program's write pays that round trip only
 * on a ring with a READ_MULTISHOT parked (one read per write, as the
 * kernel's task work does; multishot RECV is left to the reactor thread).
 */
void nw_reactor_sync_wake(bool settle);
/* A waiter takes over harvesting from the reactor thread, and gives back. */
void nw_reactor_drive_begin(struct nw_ring *ring);
void nw_reactor_drive_end(struct nw_ring *ring);
/*
 * A ring without a reactor thread was let go of (nw_setup's reap): its
 * exit, then its teardown when nothing is left in flight, on the calling
 * thread. A ring with one is torn down by that thread.
 */
void nw_reactor_exit_unattended(struct nw_ring *ring);
/*
 * A forked child's exec or exit: cancel what is in flight on its own
 * engine for its parent's ring and post the CQEs, on this thread.
 */
void nw_reactor_task_exit(struct nw_ring *ring);

#endif
