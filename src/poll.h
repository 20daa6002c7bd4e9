/* SPDX-License-Identifier: MIT */
/*
 * Readiness (poll.c): parking requests that would block until their fd is
 * ready (the reactor, reactor.c, continues them), and POLL_ADD /
 * POLL_REMOVE. A POLL_ADD on a ring's fd: ringpoll.c (ringpoll.h).
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
bool nw_poll_prepare_fd(struct nw_req *req, int fd, unsigned int mask,
			int *kind);
/*
 * The reissue of a request an edge woke: the harvest took its snapshot
 * (poll.c pollfd_snap) and there is nothing to look up. Consumes it.
 */
static inline bool nw_poll_snap_take(struct nw_req *req, int fd,
				     unsigned int mask, int *kind)
{
	unsigned int snap = req->poll_snap;

	req->poll_snap = 0;
	if (likely(!snap) || fd != req->fd ||
	    !(mask & NW_POLLIN) != !(req->poll_mask & NW_POLLIN))
		return false;
	*kind = (int)snap - 1;
	return true;
}

/* nw_poll_prepare_fd of req->fd, the common case. */
static inline bool nw_poll_prepare(struct nw_req *req, unsigned int mask,
				   int *kind)
{
	if (nw_poll_snap_take(req, req->fd, mask, kind))
		return false; /* an edge came: not known idle */
	return nw_poll_prepare_fd(req, req->fd, mask, kind);
}

/*
 * A read of req->fd (a pipe or a stream socket) emptied it: unless an edge
 * came since nw_poll_prepare, the next read is skipped as after an EAGAIN.
 */
void nw_poll_drained(struct nw_req *req);

/*
 * After an attempt said EAGAIN: park req until mask is ready. The caller
 * has set req->tw_func, what the reactor runs when it is ready.
 */
int nw_poll_arm(struct nw_req *req, unsigned int mask);
/*
 * The same on another fd than req->fd: the request waits on fd (prepared
 * with nw_poll_prepare_fd) while cancel still matches it by req->fd.
 */
int nw_poll_arm_fd(struct nw_req *req, int fd, unsigned int mask);
/* Unpark requests match() accepts onto *out (failed): count or -ENOENT. */
int nw_poll_cancel(struct nw_ring *ring, bool (*match)(struct nw_req *, void *),
		   void *arg, bool all, struct nw_list *out);
/* Requests this thread parked so far (the submitter checks for races). */
extern __thread unsigned int nw_parks
	__attribute__((tls_model("initial-exec")));
/*
 * Set by the submitter of a DEFER_TASKRUN ring while it issues a batch:
 * its parks may be lazy (poll.c's park_lazy), tried again by the next
 * GETEVENTS, which nw_poll_take_lazy gives them to.
 */
extern __thread bool nw_park_lazy __attribute__((tls_model("initial-exec")));
/* The lazily parked requests onto *ready (to reissue): their count. */
unsigned int nw_poll_take_lazy(struct nw_ring *ring, struct nw_list *ready);
/* The ring's readiness is now observed: watch what is parked lazily. */
void nw_poll_watch_lazy(struct nw_ring *ring);
/* The reissue counter: requests reissued because data raced in. */
unsigned long nw_stat_reissue(void);
void nw_poll_count_reissue(void);

/*
 * The watches of fds with parked requests are re-checked this often at
 * first (poll.c explains why); the reactor wakes up for it.
 */
#define NW_POLL_VERIFY_NS 50000000LL
/*
 * POLL_ADDs, and other requests whose prep set sync_wake (READ_MULTISHOT),
 * parked in the process: a program's write harvests (reactor.c).
 */
extern unsigned int nw_poll_adds_parked;
extern unsigned int nw_poll_syncs_parked;
/* Is a check of the watches due? Then nw_poll_verify (poll_lock held). */
bool nw_poll_verify_due(struct nw_ring *ring);
void nw_poll_verify(struct nw_ring *ring, struct nw_list *ready);
/*
 * The program is about to close fd (close, dup2 over it, IORING_OP_CLOSE):
 * every ring forgets what it learnt of the number, and a request parked
 * on it keeps waiting on its file, as the kernel's does. Costs one load
 * for an fd the engine never saw. Any thread, no engine lock held.
 */
void nw_poll_fd_closing(int fd);
/* The same for each fd of [first, last] (close_range). */
void nw_poll_fd_range_closing(unsigned int first, unsigned int last);

/*
 * The ring is gone: cancel every parked request, and complete what is on
 * *ready with -ECANCELED (ring exit, from the reactor thread).
 */
void nw_poll_cancel_all(struct nw_ring *ring, struct nw_list *ready);

int nw_poll_add_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_poll_add_issue(struct nw_req *req, unsigned int issue_flags);
int nw_poll_remove_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_poll_remove_issue(struct nw_req *req, unsigned int issue_flags);

/* Park a multishot op for good; its attempts run as task work: 0/-errno. */
int nw_poll_arm_mshot(struct nw_req *req, unsigned int mask);
/* From a multishot op's turn: run it again (it stopped early). */
void nw_poll_mshot_requeue(struct nw_req *req);

#endif
