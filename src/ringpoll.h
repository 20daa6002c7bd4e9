/* SPDX-License-Identifier: MIT */
/*
 * A ring's fd as a pollable file (ringpoll.c), the kernel's io_uring_poll:
 * POLL_ADD on a ring's fd, the watch of its pfd, and the wake of its
 * pollers when the ring's CQ changes.
 *
 * Its entry points are the ring's poll_ops, set at setup as the kernel
 * sets file->f_op: poll.c and complete.c call through them, as the
 * kernel's poll.c reaches io_uring_poll through the file. ringpoll.c parks
 * on poll.c's machinery, so direct calls both ways would draw it into the
 * core's circle (tools/layers.sh counts calls, not pointers).
 */
#ifndef NW_RINGPOLL_H
#define NW_RINGPOLL_H

#include "internal.h"
#include "fdcache.h"

struct nw_ring_poll_ops {
	/* POLL_ADD on ring t's fd: NW_COMPLETE, NW_QUEUED or -errno. */
	int (*issue)(struct nw_req *req, struct nw_ring *t);
	/* An edge of a ring pfd (a CQ post): does it wake req, parked on it? */
	bool (*hit)(struct nw_req *req, unsigned int ev);
	/*
	 * The reactor's check that pfd's fd still names its ring; if not,
	 * what is parked on it goes to *ready. Under poll_lock.
	 */
	void (*verify)(struct nw_ring *ring, struct nw_pollfd *pfd,
		       struct nw_list *ready);
	/* Stop watching pfd's ring. Under poll_lock. */
	void (*unwatch)(struct nw_ring *ring, struct nw_pollfd *pfd);
	/*
	 * Ring ring's CQ (or DEFER task work) changed: wake the polls of its
	 * fd. Called after a full fence, only once ring->poll_activated is set.
	 */
	void (*wake)(struct nw_ring *ring);
	/*
	 * DEFER task work was queued on ring: wake the watchers outside the
	 * engine only (nw_ring_watch_open). The same conditions as wake.
	 */
	void (*work)(struct nw_ring *ring);
};

/* What setup gives every ring as its poll_ops. */
extern const struct nw_ring_poll_ops nw_ring_poll_ops;

/*
 * A DEFER_TASKRUN ring with parked requests whose fd this thread's POLL_ADD
 * started to poll: its reactor must now notice readiness. The submitter
 * takes it (submit.c's start_drivers, at the end of the issue or batch
 * that set it, while the ring lives) and starts that reactor; lower files
 * start none.
 */
extern __thread struct nw_ring *nw_poll_activated
	__attribute__((tls_model("initial-exec")));
/*
 * This thread's CQ post woke polls of a ring's fd: the end of its enter
 * harvests them (nw_reactor_sync_wake), as the kernel's wake-up queues
 * their task work, run before io_uring_enter returns.
 */
extern __thread bool nw_ring_pollers_woken
	__attribute__((tls_model("initial-exec")));

/*
 * The readiness of a ring's fd outside the engine (nowait_ring_pollfd in
 * nowait.h, the preload's poll and epoll interposers): open a watcher, an
 * eventfd of the caller's written at every CQ commit of the ring from now
 * on (fd or -errno); close it (0 or -EBADF); the ring's poll mask now, fd
 * being the ring's fd or a watcher's (mask or -errno); does the ring of
 * watcher pollfd still have an fd or a mapping of the program (1, 0 or
 * -errno)? Any thread; watch_lock (a leaf) inside. An open that found
 * requests parked sets *drive to the ring, whose reactor the caller
 * (syscall.c) starts before it returns; else NULL.
 */
int nw_ring_watch_open(int ring_fd, struct nw_ring **drive);
int nw_ring_watch_close(int pollfd);
int nw_ring_watch_mask(int fd);
int nw_ring_watch_referenced(int pollfd);

#endif
