/* SPDX-License-Identifier: MIT */
/*
 * Readiness (poll.c): parking requests that would block until their fd is
 * ready, the reactor that reissues them, and POLL_ADD / POLL_REMOVE.
 */
#ifndef NW_POLL_H
#define NW_POLL_H

#include "internal.h"
#include "fdcache.h"

/* Results of nw_poll_arm, the kernel's io_arm_poll_handler. */
enum {
	NW_POLL_OK,	 /* parked: the reactor reissues it on readiness */
	NW_POLL_READY,	 /* the fd became ready meanwhile: reissue now */
	NW_POLL_ABORTED, /* cannot be polled or out of arms: use a worker */
};

/*
 * Before a nonblocking attempt: remember the fd's readiness generation in
 * req, and say whether the attempt can be skipped because the fd is known
 * not ready (no edge seen since it last said EAGAIN).
 */
bool nw_poll_prepare(struct nw_req *req, unsigned int mask, int *kind);
/* The same for another fd of the request (SPLICE's input, say). */
bool nw_poll_prepare_fd(struct nw_req *req, int fd, unsigned int mask,
			int *kind);
/*
 * A read of req->fd (a pipe or a stream socket) emptied it: unless an edge
 * came since nw_poll_prepare, the next read is skipped as after an EAGAIN.
 */
void nw_poll_drained(struct nw_req *req);

/* A waiter takes over harvesting from the reactor thread, and gives back. */
void nw_poll_drive_begin(struct nw_ring *ring);
void nw_poll_drive_end(struct nw_ring *ring);
/* After an attempt said EAGAIN: park req until mask is ready. */
int nw_poll_arm(struct nw_req *req, unsigned int mask);
/*
 * The same on another fd than req->fd: the request waits on fd (prepared
 * with nw_poll_prepare_fd) while cancel still matches it by req->fd.
 */
int nw_poll_arm_fd(struct nw_req *req, int fd, unsigned int mask);
/*
 * Harvest readiness once and reissue what became ready. Called by a
 * waiter in enter, the submitter right after a batch that parked requests
 * (timeout zero: the reissue check), or the ring's reactor thread. Returns events handled, 0 on time-out, or
 * -EINTR / -errno.
 */
enum nw_run_mode {
	NW_RUN_BG, /* the reactor thread: completions go to the submit side */
	NW_RUN_DRIVER, /* a waiter in enter: takes the submit side to complete */
	NW_RUN_SUBMIT, /* the submitter after a batch: holds the submit side */
};
int nw_poll_run(struct nw_ring *ring, const struct timespec *timeout,
		const sigset_t *sig, int mode);
/* Create the ring's epoll instance if needed (poll_lock held): 0/-errno. */
int nw_poll_loop_ensure(struct nw_ring *ring);
/* Start the ring's reactor thread if the ring needs one. */
void nw_poll_reactor_ensure(struct nw_ring *ring);
/* Unpark requests match() accepts onto *out (failed): count or -ENOENT. */
int nw_poll_cancel(struct nw_ring *ring, bool (*match)(struct nw_req *, void *),
		   void *arg, bool all, struct nw_list *out);
/*
 * Should a waiter drive the reactor? Yes when the ring has a loop; on a
 * DEFER_TASKRUN ring always (the loop is made now): nobody else will
 * harvest what a worker parks while this waiter sleeps.
 */
bool nw_poll_want_driver(struct nw_ring *ring);
/* True when the ring has a readiness loop a waiter could drive. */
bool nw_poll_active(struct nw_ring *ring);
/* Requests this thread parked so far (the submitter checks for races). */
extern __thread unsigned int nw_parks;
/* The reissue counter: requests reissued because data raced in. */
unsigned long nw_stat_reissue(void);

int nw_poll_add_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_poll_add_issue(struct nw_req *req, unsigned int issue_flags);
int nw_poll_remove_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_poll_remove_issue(struct nw_req *req, unsigned int issue_flags);

/* Multishot POLL_ADD event delivery on the submit side (nw_run_tw). */
bool nw_poll_tw(struct nw_req *req);
/* A request the DEFER_TASKRUN reactor queued (TW_FIRE): reissue it now. */
void nw_poll_fire_tw(struct nw_req *req);
/*
 * Ring ring's CQ (or DEFER task work) changed: wake the polls of its fd.
 * Called after a full fence, only once ring->poll_activated is set.
 */
void nw_poll_ring_wake(struct nw_ring *ring);
/* Park a multishot op for good; its attempts run as task work: 0/-errno. */
int nw_poll_arm_mshot(struct nw_req *req, unsigned int mask);
/* From a multishot op's turn: run it again (it stopped early). */
void nw_poll_mshot_requeue(struct nw_req *req);

#endif
