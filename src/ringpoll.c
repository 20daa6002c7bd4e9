/* SPDX-License-Identifier: MIT */
/*
 * A ring's fd as a pollable file: POLL_ADD on a ring's fd (the kernel's
 * io_uring_poll), its pfd's watch, wake semantics and check, and the wake
 * of a polled ring's pollers at its CQ commits.
 *
 * A ring fd is a memfd, which poll(2) always calls ready and epoll cannot
 * watch. The ring's state is read instead, and the ring that is polled
 * (the target) writes its poll_evfd at every CQ commit while polls wait
 * on it; each polling ring watches a dup of that eventfd in its own epoll
 * set, in place of the fd, so the usual park and reissue machinery runs
 * (poll.c, through poll-int.h).
 * Lost wake-ups are ruled out by ordering: a poller announces itself
 * (ring_pollers, seq_cst) before it reads the target's state, and the
 * target publishes its CQ tail and then, after a full fence, reads
 * ring_pollers (complete.c). Activation (the first poll of a ring) makes
 * the target take that fence from then on; membarrier() covers the
 * target's commits that race with the activation itself.
 *
 * poll.c and complete.c reach this file only through ring->poll_ops
 * (ringpoll.h), the table at the end. Locks: poll_lock, as poll.c.
 */
#include <errno.h>
#include <poll.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include "poll-int.h"
#include "ringpoll.h"
#include "complete.h"
#include "fdhigh.h"

__thread struct nw_ring *nw_poll_activated
	__attribute__((tls_model("initial-exec")));

static pthread_mutex_t activate_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every thread of the process passes a full barrier (best effort). */
static void barrier_all_threads(void)
{
	static int registered;

	if (!registered)
		registered = syscall(SYS_membarrier,
				     MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
				     0, 0) == 0
				     ? 1
				     : -1;
	if (registered > 0)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

/*
 * First poll of ring t: give it its poll eventfd. 1 if this call made it
 * pollable, 0 if it already was, or -errno. What was parked on it before
 * may now need its reactor: each caller sees to that before it returns.
 */
static int ring_activate(struct nw_ring *t)
{
	int fd, ret = 0;

	if (__atomic_load_n(&t->poll_activated, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&activate_lock);
	if (!t->poll_activated) {
		fd = nw_fd_hide(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
		if (fd < 0) {
			ret = -errno;
		} else {
			t->poll_evfd = fd;
			__atomic_store_n(&t->poll_activated, true,
					 __ATOMIC_SEQ_CST);
			barrier_all_threads();
			ret = 1;
		}
	}
	pthread_mutex_unlock(&activate_lock);
	return ret;
}

/*
 * Watchers of a ring's readiness from outside the engine (the preload's
 * poll, select and epoll interposers, nowait_ring_pollfd): an eventfd
 * each, of the watcher's own, written at every CQ commit of its ring. One
 * each, not the shared poll_evfd, so that one watcher's drain (poll's
 * level-triggered sleep needs one) never takes a wake-up meant for
 * another, and each epoll registration is a file of its own. A watcher
 * holds one count in its ring's ring_pollers, the announcement above.
 * watch_lock is a leaf; ring_wake takes it only while watchers exist.
 */
#define NW_WATCH_MAX 1024

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nw_ring_watch {
	int fd; /* -1: a free slot */
	struct nw_ring *ring;
} watches[NW_WATCH_MAX];
static unsigned int nr_watch_slots; /* slots ever used, under watch_lock */
static unsigned int nr_watches;	    /* atomic */

/* Write the eventfd of every watcher of ring's. */
static void watches_wake(struct nw_ring *ring)
{
	unsigned int i;

	pthread_mutex_lock(&watch_lock);
	for (i = 0; i < nr_watch_slots; i++)
		if (watches[i].ring == ring && watches[i].fd >= 0)
			eventfd_write(watches[i].fd, 1);
	pthread_mutex_unlock(&watch_lock);
}

__thread bool nw_ring_pollers_woken __attribute__((tls_model("initial-exec")));

/* Ring ring's CQ changed: wake the polls of its fd (poll_ops.wake). */
static void ring_wake(struct nw_ring *ring)
{
	if (__atomic_load_n(&ring->ring_pollers, __ATOMIC_SEQ_CST)) {
		eventfd_write(ring->poll_evfd, 1);
		nw_ring_pollers_woken = true;
		if (__atomic_load_n(&nr_watches, __ATOMIC_ACQUIRE))
			watches_wake(ring);
	}
}

/*
 * DEFER_TASKRUN work was queued on ring (poll_ops.work): the watchers
 * outside the engine look again, as the kernel's io_req_local_work_add
 * wakes the submitter, whose poll scans again. No POLL_ADD of the ring's
 * fd: the kernel's poll wait queue hears only of CQ posts.
 */
static void ring_work_wake(struct nw_ring *ring)
{
	if (__atomic_load_n(&ring->ring_pollers, __ATOMIC_SEQ_CST) &&
	    __atomic_load_n(&nr_watches, __ATOMIC_ACQUIRE))
		watches_wake(ring);
}

/*
 * What poll says of ring t: EPOLLOUT|EPOLLWRNORM while the SQ is not
 * full, EPOLLIN|EPOLLRDNORM while CQEs wait, overflowed CQEs wait, or (a
 * DEFER_TASKRUN ring) task work is queued. The SQ is full by the head as
 * published, as in io_sqring_full: a ring that polls itself during a
 * submit sees the SQEs of that submit as still queued.
 */
static unsigned int ring_mask(struct nw_ring *t)
{
	unsigned int mask = 0;

	if (load_acquire(t->sq_tail) - load_acquire(t->sq_head) !=
	    t->sq_entries)
		mask |= POLLOUT | POLLWRNORM;
	if (nw_cq_ready(t) ||
	    (load_acquire(t->sq_flags) & IORING_SQ_CQ_OVERFLOW) ||
	    (t->lockless_cq && __atomic_load_n(&t->tw_head, __ATOMIC_ACQUIRE)))
		mask |= POLLIN | POLLRDNORM;
	return mask;
}

/* Stop watching pfd's ring. Called with poll_lock held. */
static void ring_pfd_unwatch(struct nw_ring *ring, struct nw_pollfd *pfd)
{
	nw_loop_del(&ring->loop, pfd->watch_fd);
	close(pfd->watch_fd);
	__atomic_sub_fetch(&ring->ring_watches, 1, __ATOMIC_RELAXED);
	pfd->target = NULL;
	nw_pfd_store(&pfd->watched, false);
	nw_fdcache_reset(pfd);
}

/* Watch ring t's poll eventfd for pfd (whose fd names t). Under poll_lock. */
static int ring_pfd_watch(struct nw_ring *ring, struct nw_pollfd *pfd,
			  struct nw_ring *t)
{
	int fd, r;

	if (pfd->target == t)
		return 0;
	if (pfd->target)
		ring_pfd_unwatch(ring, pfd);
	fd = nw_fd_dup_high(t->poll_evfd);
	if (fd < 0)
		return fd;
	/* Old posts must not read as a new one when the watch starts. */
	eventfd_read(fd, &(eventfd_t){0});
	pfd->io.cb = nw_pollfd_fire;
	r = nw_loop_add(&ring->loop, fd, &pfd->io);
	if (r < 0) {
		close(fd);
		return r;
	}
	pfd->watch_fd = fd;
	__atomic_add_fetch(&ring->ring_watches, 1, __ATOMIC_RELAXED);
	pfd->target = t;
	nw_pfd_store(&pfd->watched, false);
	nw_fdcache_reset(pfd);
	return 0;
}

/*
 * The reactor's check of a ring pfd: does the fd still name its ring? If
 * not, every request parked on it goes to *ready to be reissued. Called
 * with poll_lock held.
 */
static void ring_pfd_verify(struct nw_ring *ring, struct nw_pollfd *pfd,
			    struct nw_list *ready)
{
	struct nw_list *pos, *tmp;
	struct nw_ring *t;

	if (!nw_ring_lookup(pfd->fd, &t) && t == pfd->target)
		return;
	ring_pfd_unwatch(ring, pfd);
	nw_list_for_each_safe(pos, tmp, &pfd->parked) {
		struct nw_req *req =
			nw_list_entry(pos, struct nw_req, poll_node);

		/* Reissued off the submit side: no multishot CQE there. */
		req->flags &= ~NW_REQ_F_MSHOT;
		nw_poll_unpark(ring, req);
		nw_poll_to_ready(ready, req);
	}
}

/*
 * An edge of a ring pfd is a CQ post to the ring (its poll eventfd). The
 * kernel wakes the ring's pollers with the key EPOLLIN|EPOLL_URING_WAKE:
 * a poll that asked for POLLIN completes with POLLIN, as the key says (its
 * state is not read again); one that did not ignores the wake; a
 * multishot one turns oneshot (no wake loop through its own CQE).
 */
static bool ring_pfd_hit(struct nw_req *req, unsigned int ev)
{
	if (!(ev & NW_POLLIN) || !(req->poll_mask & NW_POLLIN))
		return false;
	if (req->flags & NW_REQ_F_POLL_ADD)
		nw_poll_ring_of(req)->wake_res = NW_POLLIN;
	req->flags &= ~NW_REQ_F_MSHOT;
	return true;
}

/* POLL_ADD on ring t's fd: NW_COMPLETE, NW_QUEUED or -errno. */
static int ring_poll_issue(struct nw_req *req, struct nw_ring *t)
{
	struct nw_ring *ring = req->ring;
	struct nw_pollfd *pfd;
	int ret = ring_activate(t);

	if (ret < 0)
		return ret;
	/*
	 * Requests t parked before: its reactor must now notice readiness.
	 * This issue's submitter starts it (start_drivers) before its call
	 * returns, while t lives.
	 */
	if (ret && __atomic_load_n(&t->nr_parked, __ATOMIC_RELAXED))
		nw_poll_activated = t;
	/* Announce, then look (see above); parking keeps a count of its own. */
	__atomic_add_fetch(&t->ring_pollers, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		unsigned int seq0, ready;
		int kind;

		nw_poll_prepare(req, NW_POLLIN, &kind);
		seq0 = req->poll_seq;
		ready = ring_mask(t) & req->poll_mask;
		if (ready && !(req->flags & NW_REQ_F_MSHOT)) {
			req->res = (int)ready;
			ret = NW_COMPLETE;
			break;
		}
		if (ready)
			nw_poll_mshot_post(req, ready);
		pthread_mutex_lock(&ring->poll_lock);
		pfd = nw_loop_ensure(&ring->loop)
			      ? NULL
			      : nw_fdcache_get(ring, req->fd, true);
		if (!pfd || ring_pfd_watch(ring, pfd, t)) {
			pthread_mutex_unlock(&ring->poll_lock);
			ret = -ENOMEM;
			break;
		}
		if (pfd->in_seq == seq0 || ready) {
			nw_poll_park(ring, pfd, req, req->poll_mask);
			pthread_mutex_unlock(&ring->poll_lock);
			ret = NW_QUEUED;
			break;
		}
		pthread_mutex_unlock(&ring->poll_lock);
	}
	__atomic_sub_fetch(&t->ring_pollers, 1, __ATOMIC_RELAXED);
	return ret;
}

/* The slot of watcher fd, or -1. Called with watch_lock held. */
static int watch_find(int fd)
{
	unsigned int i;

	for (i = 0; i < nr_watch_slots; i++)
		if (watches[i].fd == fd && watches[i].ring)
			return (int)i;
	return -1;
}

int nw_ring_watch_open(int ring_fd, struct nw_ring **drive)
{
	struct nw_ring *t;
	unsigned int i;
	int fd, ret;

	*drive = NULL;
	ret = nw_ring_lookup(ring_fd, &t);
	if (!ret)
		ret = ring_activate(t);
	if (ret < 0)
		return ret;
	/* After ring_activate's membarrier: a lazy park sees it or is seen. */
	if (__atomic_load_n(&t->nr_parked, __ATOMIC_RELAXED)) {
		nw_poll_watch_lazy(t);
		*drive = t; /* its reactor must now notice readiness */
	}
	fd = nw_fd_hide(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (fd < 0)
		return -errno;
	pthread_mutex_lock(&watch_lock);
	for (i = 0; i < nr_watch_slots && watches[i].ring; i++)
		;
	if (i < NW_WATCH_MAX) {
		watches[i].fd = fd;
		watches[i].ring = t;
		if (i == nr_watch_slots)
			nr_watch_slots++;
		__atomic_add_fetch(&nr_watches, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&watch_lock);
	if (i == NW_WATCH_MAX) {
		close(fd);
		return -EMFILE;
	}
	/* The announcement: after it, every commit writes fd (see above). */
	__atomic_add_fetch(&t->ring_pollers, 1, __ATOMIC_SEQ_CST);
	return fd;
}

int nw_ring_watch_close(int pollfd)
{
	struct nw_ring *t = NULL;
	int i;

	pthread_mutex_lock(&watch_lock);
	i = watch_find(pollfd);
	if (i >= 0) {
		t = watches[i].ring;
		watches[i].ring = NULL;
		watches[i].fd = -1;
		__atomic_sub_fetch(&nr_watches, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&watch_lock);
	if (!t)
		return -EBADF;
	__atomic_sub_fetch(&t->ring_pollers, 1, __ATOMIC_RELAXED);
	close(pollfd);
	return 0;
}

/* The ring that fd names: a ring fd, or a watcher's eventfd. */
static int watch_ring(int fd, struct nw_ring **tp)
{
	int i;

	pthread_mutex_lock(&watch_lock);
	i = watch_find(fd);
	if (i >= 0)
		*tp = watches[i].ring;
	pthread_mutex_unlock(&watch_lock);
	return i >= 0 ? 0 : nw_ring_lookup(fd, tp);
}

int nw_ring_watch_mask(int fd)
{
	struct nw_ring *t;
	int ret = watch_ring(fd, &t);

	return ret ? ret : (int)ring_mask(t);
}

int nw_ring_watch_referenced(int pollfd)
{
	struct nw_ring *t;
	int ret = watch_ring(pollfd, &t);

	return ret ? ret : nw_ring_referenced(t);
}

const struct nw_ring_poll_ops nw_ring_poll_ops = {
	.issue = ring_poll_issue,
	.hit = ring_pfd_hit,
	.verify = ring_pfd_verify,
	.unwatch = ring_pfd_unwatch,
	.wake = ring_wake,
	.work = ring_work_wake,
};
