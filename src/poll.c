/* SPDX-License-Identifier: MIT */
/*
 * Readiness: requests that would block are parked on their fd and
 * reissued when it becomes ready, the kernel's async poll (io_uring/poll.c
 * io_arm_poll_handler) on epoll. Also POLL_ADD and POLL_REMOVE, and the
 * multishot turns of ops that stay parked.
 *
 * Every fd the ring waits on has a struct nw_pollfd: its parked requests
 * and edge counters. The fd is watched edge-triggered (loop.c); each
 * harvested edge bumps in_seq / out_seq. A request snapshots the counter
 * before its nonblocking attempt (nw_poll_prepare); if the counter moved
 * by the time it parks, data raced in and the request is reissued at once
 * (Langlois' 2021 reissue), counted in nw_stat_reissue(). If the counter
 * is where an earlier EAGAIN left it, the fd is known not ready and the
 * next attempt is skipped altogether.
 *
 * Each watched fd is an event source of the ring's loop (pfd->io): the
 * reactor (reactor.c) harvests and calls nw_pollfd_fire, which moves what
 * the edge wakes to the harvest's ready list; the reactor then runs each
 * request's tw_func, left by whoever parked it (submit.c's reissue, or
 * poll_add_fire for a POLL_ADD). Multishot requests stay parked and get
 * their turns as task work (mshot_tw). Nothing here starts a thread.
 * Locks: submit_lock, then poll_lock.
 *
 * A ring's fd as a pollable file (POLL_ADD on it, its pfd's watch, wake
 * and check) is ringpoll.c's, which parks with this file's machinery
 * (poll-int.h); this file reaches it only through the target ring's
 * poll_ops (ringpoll.h), where it meets a ring's fd (pfd->target).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include "poll-int.h"
#include "ringpoll.h"
#include "complete.h"
#include "fdcache.h"
#include "fdhigh.h"
#include "opdef.h"
#include "rsrc.h"

#define NW_POLL_MAX_ARMS 128 /* the kernel's APOLL_MAX_RETRY */
#define NW_POLL_ALWAYS	 (NW_POLLERR | NW_POLLHUP)

/*
 * The watch of an fd is checked (EPOLL_CTL_ADD: EEXIST means current) on
 * first use only, not at every park: a park costs no system call. A
 * program may close an fd and get the number back for another file that
 * epoll does not watch. When the engine is told before (nw_poll_fd_closing:
 * the preload's close interposers, IORING_OP_CLOSE, nowait_fd_closing),
 * the number's watch is forgotten and what is parked on it moves to a dup
 * of its file, as the kernel's requests keep theirs. Otherwise requests
 * parked on it would wait forever; so the reactor re-checks the watches of
 * fds with parked requests after NW_VERIFY_NS, backing off to
 * NW_VERIFY_MAX_NS, and reissues what was parked on a stale one: a
 * bounded delay instead of a hang (pollverify.c).
 */
#define NW_VERIFY_NS NW_POLL_VERIFY_NS

static unsigned long stat_reissue;
__thread unsigned int nw_parks __attribute__((tls_model("initial-exec")));
__thread bool nw_park_lazy __attribute__((tls_model("initial-exec")));
unsigned int nw_poll_adds_parked;  /* in the process (nw_reactor_sync_wake) */
unsigned int nw_poll_syncs_parked; /* the same */

unsigned long nw_stat_reissue(void)
{
	return __atomic_load_n(&stat_reissue, __ATOMIC_RELAXED);
}

void nw_poll_count_reissue(void)
{
	__atomic_add_fetch(&stat_reissue, 1, __ATOMIC_RELAXED);
}

/* A request leaves its fd for the harvest's ready list (poll_node). */
void nw_poll_to_ready(struct nw_list *ready, struct nw_req *req)
{
	req->poll_events = 0;
	nw_list_add_tail(&req->poll_node, ready);
}

static unsigned int *edge_seq(struct nw_pollfd *pfd, unsigned int mask)
{
	return (mask & NW_POLLIN) ? &pfd->in_seq : &pfd->out_seq;
}

bool nw_poll_prepare_fd(struct nw_req *req, int fd, unsigned int mask,
			int *kind)
{
	struct nw_ring *ring = req->ring;
	struct nw_pollfd *pfd;
	bool skip = false;

	if (nw_poll_snap_take(req, fd, mask, kind))
		return false;
	/*
	 * Without poll_lock (nw_fdcache_peek): the count is read first, then
	 * the idle mark. An edge harvested meanwhile moves the count, and the
	 * arm after a skip or an EAGAIN sees it and reissues at once; a mark
	 * at the count read says the fd was found empty since its last edge,
	 * as under the lock.
	 */
	pfd = nw_fdcache_peek(ring, fd);
	req->pfd = pfd; /* the arm after an EAGAIN needs no lookup */
	if (!pfd) {
		req->poll_seq = 0;
		*kind = NW_FD_UNKNOWN;
		return false;
	}
	req->poll_seq = nw_pfd_load(edge_seq(pfd, mask));
	*kind = nw_pfd_load(&pfd->kind);
	if (mask & NW_POLLIN)
		skip = nw_pfd_load(&pfd->in_idle) &&
		       nw_pfd_load(&pfd->in_idle_seq) == req->poll_seq;
	else
		skip = nw_pfd_load(&pfd->out_idle) &&
		       nw_pfd_load(&pfd->out_idle_seq) == req->poll_seq;
	return skip;
}

/*
 * Any data that arrives after the fd was empty raises an edge that is yet
 * to be harvested, so marking it idle at the current sequence is safe as
 * long as the fd is watched; it saves the EAGAIN attempt of the next read
 * (an echo server's RECV after its SEND). No lock when the request knows
 * its pfd (prepare or park found it): the count it read is marked, so a
 * harvest or reset meanwhile leaves a mark that matches no count.
 */
void nw_poll_drained(struct nw_req *req)
{
	struct nw_pollfd *pfd = req->pfd;
	bool lock = !pfd || pfd->fd != req->fd;

	if (lock) {
		pthread_mutex_lock(&req->ring->poll_lock);
		pfd = nw_fdcache_get(req->ring, req->fd, false);
	}
	if (pfd && nw_pfd_load(&pfd->watched) &&
	    nw_pfd_load(&pfd->in_seq) == req->poll_seq) {
		nw_pfd_store(&pfd->in_idle_seq, req->poll_seq);
		nw_pfd_store(&pfd->in_idle, true);
	}
	if (lock)
		pthread_mutex_unlock(&req->ring->poll_lock);
}

/* Watch pfd's fd on first use; later watches are checked by the reactor. */
int nw_pollfd_watch(struct nw_ring *ring, struct nw_pollfd *pfd)
{
	int r;

	if (pfd->target) /* no longer a ring's fd */
		pfd->target->poll_ops->unwatch(ring, pfd);
	if (pfd->watched)
		return 0;
	pfd->io.cb = nw_pollfd_fire;
	r = nw_loop_add(&ring->loop, pfd->fd, &pfd->io);

	if (r < 0)
		return r;
	if (r == 0 && pfd->watched)
		nw_fdcache_reset(pfd);
	nw_pfd_store(&pfd->watched, true);
	nw_fd_seen(ring,
		   pfd); /* its close must reach us (nw_poll_fd_closing) */
	return 0;
}

struct nw_list *nw_poll_bucket(struct nw_ring *ring, uint64_t user_data)
{
	return &ring->poll_hash[(user_data * 0x9E3779B97F4A7C15ULL) >> 58];
}

/* Park req on pfd. Called with poll_lock held. */
void nw_poll_park(struct nw_ring *ring, struct nw_pollfd *pfd,
		  struct nw_req *req, unsigned int mask)
{
	/* Due from the next check of the watches on (pollverify.c). */
	if (nw_list_empty(&pfd->parked)) {
		pfd->verify_ivl_ns = NW_VERIFY_NS;
		pfd->verify_due_ns = 0;
		nw_list_add_tail(&pfd->busy_node, &ring->busy_pfds);
	}
	req->poll_mask = mask;
	req->pfd = pfd;
	req->park_gen = __atomic_load_n(&ring->submit_gen, __ATOMIC_RELAXED);
	req->poll_canceled = false;
	req->poll_drain = false;
	req->poll_lazy = false;
	nw_parks++;
	nw_list_add_tail(&req->poll_node, &pfd->parked);
	/* Written under poll_lock only, read without it: no lock prefix. */
	__atomic_store_n(&ring->nr_parked, ring->nr_parked + 1,
			 __ATOMIC_RELAXED);
	if (req->flags & NW_REQ_F_POLL_ADD) {
		nw_list_add_tail(&nw_poll_ring_of(req)->hash_node,
				 nw_poll_bucket(ring, req->user_data));
		__atomic_add_fetch(&nw_poll_adds_parked, 1, __ATOMIC_RELAXED);
	} else if (req->sync_wake) {
		__atomic_add_fetch(&ring->nr_sync_parked, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&nw_poll_syncs_parked, 1, __ATOMIC_RELAXED);
	}
	if ((req->flags & NW_REQ_F_POLL_ADD) && pfd->target) {
		nw_poll_ring_of(req)->target = pfd->target;
		__atomic_add_fetch(&pfd->target->ring_pollers, 1,
				   __ATOMIC_SEQ_CST);
	}
}

/* Take a parked req off its fd's list. Called with poll_lock held. */
void nw_poll_unpark(struct nw_ring *ring, struct nw_req *req)
{
	nw_list_del(&req->poll_node);
	if (nw_list_empty(&req->pfd->parked))
		nw_list_del(&req->pfd->busy_node);
	if (req->poll_lazy) {
		req->poll_lazy = false;
		__atomic_store_n(&ring->nr_lazy, ring->nr_lazy - 1,
				 __ATOMIC_RELAXED);
	}
	if (req->flags & NW_REQ_F_POLL_ADD) {
		nw_list_del(&nw_poll_ring_of(req)->hash_node);
		__atomic_sub_fetch(&nw_poll_adds_parked, 1, __ATOMIC_RELAXED);
	} else if (req->sync_wake) {
		__atomic_sub_fetch(&ring->nr_sync_parked, 1, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&nw_poll_syncs_parked, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&ring->nr_parked, ring->nr_parked - 1,
			 __ATOMIC_RELAXED);
	if ((req->flags & NW_REQ_F_POLL_ADD) && nw_poll_ring_of(req)->target) {
		__atomic_sub_fetch(&nw_poll_ring_of(req)->target->ring_pollers,
				   1, __ATOMIC_RELAXED);
		nw_poll_ring_of(req)->target = NULL;
	}
}

/*
 * A submit's park on a pipe or socket never watched, on a DEFER_TASKRUN
 * ring whose readiness nobody observes, stays unwatched: pollverify.c says
 * why and who tries it again. Under poll_lock; true when parked.
 */
static bool park_lazy(struct nw_ring *ring, struct nw_pollfd *pfd,
		      struct nw_req *req, unsigned int mask)
{
	if (!nw_park_lazy || !req->lazy_ok || pfd->watched || pfd->target ||
	    (pfd->kind != NW_FD_STREAM && pfd->kind != NW_FD_SOCKET) ||
	    (req->flags & (NW_REQ_F_POLL_ADD | NW_REQ_F_MSHOT)) ||
	    req->sync_wake || *edge_seq(pfd, mask) != req->poll_seq)
		return false;
	nw_poll_park(ring, pfd, req, mask);
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the membarrier's pair */
	if (nw_ring_observed(ring)) {
		nw_poll_unpark(ring, req);
		return false;
	}
	nw_fd_seen(ring, pfd); /* its close must reach us all the same */
	nw_parks--;	       /* no harvest for it at the batch's end */
	req->poll_lazy = true;
	pfd->lazy = true;
	__atomic_store_n(&ring->nr_lazy, ring->nr_lazy + 1, __ATOMIC_RELAXED);
	return true;
}

int nw_poll_arm(struct nw_req *req, unsigned int mask)
{
	return nw_poll_arm_fd(req, req->fd, mask);
}

int nw_poll_arm_fd(struct nw_req *req, int fd, unsigned int mask)
{
	struct nw_ring *ring = req->ring;
	struct nw_pollfd *pfd;
	unsigned int seq;

	if (++req->poll_arms > NW_POLL_MAX_ARMS)
		return NW_POLL_ABORTED;
	pthread_mutex_lock(&ring->poll_lock);
	if (nw_loop_ensure(&ring->loop))
		goto aborted;
	/*
	 * The pfd prepare found: a ring's pfds stay, each at one number,
	 * while it lives (req->pfd is NULL or one of them: its requests
	 * are calloc'd and stay the ring's).
	 */
	pfd = req->pfd;
	if (!pfd || pfd->fd != fd)
		pfd = nw_fdcache_get(ring, fd, true);
	if (!pfd)
		goto aborted;
	if (park_lazy(ring, pfd, req, mask))
		goto parked;
	if (nw_pollfd_watch(ring, pfd)) {
		/* epoll refuses regular files: a worker, bounded class. */
		req->flags |= NW_REQ_F_REG_FILE;
		goto aborted;
	}
	seq = *edge_seq(pfd, mask);
	if (seq != req->poll_seq) {
		/* An edge arrived after the attempt: try again now. */
		pthread_mutex_unlock(&ring->poll_lock);
		__atomic_add_fetch(&stat_reissue, 1, __ATOMIC_RELAXED);
		return NW_POLL_READY;
	}
	if (mask & NW_POLLIN) {
		nw_pfd_store(&pfd->in_idle_seq, seq);
		nw_pfd_store(&pfd->in_idle, true);
	} else {
		nw_pfd_store(&pfd->out_idle_seq, seq);
		nw_pfd_store(&pfd->out_idle, true);
	}
	nw_poll_park(ring, pfd, req, mask);
parked:
	pthread_mutex_unlock(&ring->poll_lock);
	return NW_POLL_OK;
aborted:
	pthread_mutex_unlock(&ring->poll_lock);
	return NW_POLL_ABORTED;
}

static void poll_add_fire(struct nw_req *req, bool submit_side);

/*
 * Did the ring's signal of its own eventfd wake req, a POLL_ADD of it? Any
 * since the arm counts: the kernel's EPOLL_URING_WAKE ends a multishot.
 */
static bool evfd_self_wake(struct nw_ring *ring, struct nw_pollfd *pfd,
			   struct nw_req *req)
{
	return (req->flags & NW_REQ_F_POLL_ADD) &&
	       pfd->fd == READ_ONCE(ring->evfd_user) &&
	       __atomic_load_n(&ring->evfd_signals, __ATOMIC_RELAXED) !=
		       nw_poll_ring_of(req)->evfd_sig;
}

/*
 * A request an edge wakes takes the snapshot its reissue's nw_poll_prepare
 * would: the edge count after this edge (any later one moves it, and its
 * next arm reissues at once) and the fd's kind. Not skipped: an edge came.
 * Only for its own fd: SPLICE's input is looked up again.
 */
void nw_pollfd_snap(struct nw_pollfd *pfd, struct nw_req *req)
{
	if (pfd->fd != req->fd || pfd->target)
		return;
	req->poll_seq = *edge_seq(pfd, req->poll_mask);
	req->poll_snap = (unsigned char)(1 + pfd->kind);
}

/*
 * Count an edge (of watch generation gen) and move the requests it wakes
 * to *ready. Under poll_lock.
 */
static void pollfd_event(struct nw_ring *ring, struct nw_pollfd *pfd,
			 unsigned int ev, unsigned short gen,
			 struct nw_list *ready)
{
	struct nw_list *pos, *tmp;
	bool uring_wake = !pfd->target && nw_fd_uring_wake(pfd->fd);

	if (ev & (NW_POLLIN | NW_POLLPRI | NW_POLLRDHUP | NW_POLL_ALWAYS))
		nw_pfd_store(&pfd->in_seq, pfd->in_seq + 1);
	if (ev & (NW_POLLOUT | NW_POLL_ALWAYS))
		nw_pfd_store(&pfd->out_seq, pfd->out_seq + 1);
	nw_list_for_each_safe(pos, tmp, &pfd->parked) {
		struct nw_req *req =
			nw_list_entry(pos, struct nw_req, poll_node);
		unsigned int hit = ev & (req->poll_mask | NW_POLL_ALWAYS);

		if (nw_poll_parked_after(pfd, req, gen))
			continue;
		if (pfd->target) {
			if (!pfd->target->poll_ops->hit(req, ev))
				continue;
		} else if (!hit) {
			continue;
		}
		/* A ring's own post woke it: no multishot loop through it. */
		if (!(req->flags & NW_REQ_F_TW_QUEUED) &&
		    (uring_wake ||
		     (!pfd->target && evfd_self_wake(ring, pfd, req)))) {
			req->flags &= ~NW_REQ_F_MSHOT;
			if (req->flags & NW_REQ_F_POLL_ADD)
				req->tw_func = poll_add_fire; /* a oneshot */
		}
		if (req->flags & NW_REQ_F_MSHOT) {
			req->poll_events |= ev; /* stays parked: mshot_tw */
			continue;
		}
		if (req->flags & NW_REQ_F_POLL_ADD)
			nw_poll_ring_of(req)->wake_ev = hit;
		else
			nw_pollfd_snap(pfd, req);
		nw_poll_unpark(ring, req);
		nw_poll_to_ready(ready, req);
	}
}

/*
 * The result mask of a POLL_ADD: what poll(2) says now. An edge only says
 * something happened; it may be stale (data that came and went), and the
 * kernel reports the state at wake-up time, so ask.
 */
static unsigned int poll_result(struct nw_req *req)
{
	unsigned int want = req->poll_mask | NW_POLL_ALWAYS;
	struct pollfd p = {.fd = req->fd, .events = (short)want};

	if (poll(&p, 1, 0) != 1)
		return 0;
	return (unsigned short)p.revents & want;
}

/* A parked POLL_ADD's fd became ready: check the state; not ready: parked. */
static void poll_add_fire(struct nw_req *req, bool submit_side)
{
	int ret = nw_poll_add_issue(req, 0);

	if (ret == NW_QUEUED)
		return;
	if (ret < 0)
		nw_req_set_fail(req, ret);
	nw_req_finish(req, submit_side);
}

static void mshot_tw(struct nw_req *req, bool submit_side);

/* Queue a multishot event for the submit side. Under poll_lock. */
static bool mshot_queue(struct nw_req *req)
{
	if (req->flags & NW_REQ_F_TW_QUEUED)
		return false;
	req->flags |= NW_REQ_F_TW_QUEUED;
	req->tw_func = mshot_tw;
	return true;
}

/*
 * The ring is gone: cancel every parked request, as ring exit does. One
 * with task work queued (or about to be: the caller's mshot[]) is only
 * marked, as in nw_poll_cancel, and ends in its task work (mshot_tw).
 */
void nw_poll_cancel_all(struct nw_ring *ring, struct nw_list *ready)
{
	struct nw_list *pos, *tmp;

	pthread_mutex_lock(&ring->poll_lock);
	while (!nw_list_empty(&ring->busy_pfds)) {
		struct nw_pollfd *pfd = nw_list_entry(
			ring->busy_pfds.next, struct nw_pollfd, busy_node);

		nw_list_for_each_safe(pos, tmp, &pfd->parked) {
			struct nw_req *req =
				nw_list_entry(pos, struct nw_req, poll_node);

			nw_poll_unpark(ring, req);
			if (req->flags & NW_REQ_F_TW_QUEUED)
				req->poll_canceled = true;
			else
				nw_list_add_tail(pos, ready);
		}
	}
	pthread_mutex_unlock(&ring->poll_lock);
	nw_list_for_each_safe(pos, tmp, ready) {
		struct nw_req *req =
			nw_list_entry(pos, struct nw_req, poll_node);

		nw_list_del(pos);
		req->flags &= ~NW_REQ_F_MSHOT;
		nw_req_set_fail(req, -ECANCELED);
		nw_req_complete_async(req);
	}
	__atomic_store_n(&ring->dead, true, __ATOMIC_RELEASE);
}

/*
 * Can req follow its file to another fd? Not while its task work may be
 * running (the op reads req->fd), nor when it waits on another fd than
 * its own (SPLICE's input) or on a fixed file's (the engine's already).
 */
static bool req_movable(const struct nw_req *req, int fd)
{
	return req->fd == fd &&
	       !(req->flags & (NW_REQ_F_TW_QUEUED | NW_REQ_F_FIXED_DONE));
}

/* Watch dfd, a dup of pfd's file, for the requests to move: its pfd. */
static struct nw_pollfd *pollfd_twin(struct nw_ring *ring,
				     struct nw_pollfd *pfd, int dfd)
{
	struct nw_pollfd *dpfd = nw_fdcache_get(ring, dfd, true);

	if (!dpfd)
		return NULL;
	nw_pfd_store(&dpfd->watched, false);
	nw_fdcache_reset(dpfd);
	if (nw_pollfd_watch(ring, dpfd))
		return NULL;
	nw_pfd_store(&dpfd->kind, pfd->kind);
	nw_pfd_store(&dpfd->sock_type, pfd->sock_type);
	return dpfd;
}

/*
 * pfd's fd is about to be closed with requests parked on it. The kernel's
 * requests hold the file, not the number, and go on waiting on it; here
 * the file is kept open under a number of the engine's (dfd, held by the
 * requests as a fixed file is, closed with the last of them) and watched
 * there, and the requests move to it. Epoll reports at once what is
 * ready when dfd is added, so no edge is lost. Called with poll_lock held
 * (dup and epoll_ctl do not block); nothing moves when a call fails, and
 * the periodic re-check (nw_poll_verify) stays the last resort.
 */
static void pollfd_move(struct nw_ring *ring, struct nw_pollfd *pfd)
{
	struct nw_list *pos, *tmp;
	struct nw_rsrc_node *node = NULL;
	struct nw_pollfd *dpfd = NULL;
	int dfd = -1;

	nw_list_for_each_safe(pos, tmp, &pfd->parked) {
		struct nw_req *req =
			nw_list_entry(pos, struct nw_req, poll_node);

		if (!req_movable(req, pfd->fd))
			continue;
		if (!dpfd) {
			dfd = nw_fd_dup_high(pfd->fd);
			node = dfd < 0 ? NULL : nw_rsrc_node_wrap(dfd);
			dpfd = node ? pollfd_twin(ring, pfd, dfd) : NULL;
			if (!dpfd)
				goto err;
			nw_loop_del(&ring->loop, pfd->fd);
		}
		nw_list_del(&req->poll_node);
		if (nw_list_empty(&dpfd->parked)) {
			dpfd->verify_ivl_ns = NW_VERIFY_NS;
			dpfd->verify_due_ns = nw_poll_now_ns() + NW_VERIFY_NS;
			nw_list_add_tail(&dpfd->busy_node, &ring->busy_pfds);
		}
		nw_list_add_tail(&req->poll_node, &dpfd->parked);
		req->pfd = dpfd;
		/* dpfd's events are all collected after its watch began. */
		if (req->flags & NW_REQ_F_POLL_ADD)
			nw_poll_ring_of(req)->park_gen = dpfd->io.gen;
		nw_rsrc_node_hold(req, node);
	}
	if (nw_list_empty(&pfd->parked))
		nw_list_del(&pfd->busy_node);
	return;
err:
	free(node);
	if (dfd >= 0)
		close(dfd);
}

/* fd is closing: what ring knew of it goes, what is parked keeps its file. */
static void ring_fd_closing(struct nw_ring *ring, int fd)
{
	struct nw_pollfd *pfd;

	nw_fd_close_visit();
	pthread_mutex_lock(&ring->poll_lock);
	pfd = nw_fdcache_get(ring, fd, false);
	if (pfd)
		nw_fd_unseen(
			pfd); /* off the record: the next watch re-records */
	if (pfd && !pfd->target) {
		if (!nw_list_empty(&pfd->parked) && nw_loop_ready(&ring->loop))
			pollfd_move(ring, pfd);
		nw_pfd_store(&pfd->watched, false);
		nw_fdcache_reset(pfd);
	}
	pthread_mutex_unlock(&ring->poll_lock);
}

/*
 * The rings on the fd's owner record (fdcache.c), not every ring of the
 * process: pipe-bug's 10,000 rings made and let go in turn made each
 * IORING_OP_CLOSE a walk of all that ever lived.
 */
void nw_poll_fd_closing(int fd)
{
	struct nw_ring *ring = NULL, **rings = NULL;
	int i, nr = nw_fd_owners_take(fd, &rings);

	if (likely(nr == 0))
		return;
	if (nr < 0) { /* a record was lost to ENOMEM: all of them */
		while ((ring = nw_ring_next(ring)))
			ring_fd_closing(ring, fd);
		return;
	}
	for (i = 0; i < nr; i++)
		ring_fd_closing(rings[i], fd);
	free(rings);
}

/*
 * The fds of the range that have a record, listed before any is visited:
 * a visit may dup a file into the range (pollfd_move), and that dup is
 * not the program's to close.
 */
void nw_poll_fd_range_closing(unsigned int first, unsigned int last)
{
	int fd = (int)first, *fds = NULL, *tmp;
	size_t nr = 0, cap = 0, i;

	if (first > (unsigned int)INT_MAX)
		return;
	if (last > (unsigned int)INT_MAX)
		last = INT_MAX;
	while ((fd = nw_fd_owned_next(fd)) >= 0 && (unsigned int)fd <= last) {
		if (nr == cap) {
			cap = cap ? cap * 2 : 16;
			tmp = realloc(fds, cap * sizeof(*fds));
			if (!tmp)
				break; /* the rest is left to nw_poll_verify */
			fds = tmp;
		}
		fds[nr++] = fd;
		if (fd == INT_MAX)
			break;
		fd++;
	}
	for (i = 0; i < nr; i++)
		nw_poll_fd_closing(fds[i]);
	free(fds);
}

/*
 * A watched fd's event source fired (the reactor's harvest, poll_lock
 * held): count the edge, move the oneshot requests it wakes to h->ready
 * and queue the multishot ones that have an event.
 */
void nw_pollfd_fire(struct nw_io *io, unsigned int events, struct nw_harvest *h)
{
	struct nw_pollfd *pfd = container_of(io, struct nw_pollfd, io);
	struct nw_list *p;

	pollfd_event(h->ring, pfd, events, h->gen, &h->ready);
	for (p = pfd->parked.next; p != &pfd->parked; p = p->next) {
		struct nw_req *r = nw_list_entry(p, struct nw_req, poll_node);

		if ((r->flags & NW_REQ_F_MSHOT) && r->poll_events &&
		    h->nr_mshot < NW_HARVEST_MSHOT && mshot_queue(r))
			h->mshot[h->nr_mshot++] = r;
	}
}

/*
 * A multishot RECV or RECVMSG being cancelled on a ring whose task work
 * runs at once (not DEFER_TASKRUN): the kernel's wake-up would have
 * received what came before the cancel already (task work at the
 * sender's return), so its last turn takes that, then it ends.
 */
static bool cancel_drains(const struct nw_req *req)
{
	return (req->flags & NW_REQ_F_MSHOT) && !req->ring->lockless_cq &&
	       (req->opcode == IORING_OP_RECV ||
		req->opcode == IORING_OP_RECVMSG);
}

/*
 * ASYNC_CANCEL's part: unpark the requests match() accepts (the first, or
 * all) onto *out (poll_node), marked failed with -ECANCELED, for the
 * caller to complete. A multishot with an event on its way is only
 * marked, and ends when that event is delivered; a multishot receive is
 * given that last turn (cancel_drains).
 */
int nw_poll_cancel(struct nw_ring *ring, bool (*match)(struct nw_req *, void *),
		   void *arg, bool all, struct nw_list *out)
{
	struct nw_list *pos, *tmp, *bpos, *btmp, last;
	int n = 0;

	nw_list_init(&last);

	pthread_mutex_lock(&ring->poll_lock);
	nw_list_for_each_safe(bpos, btmp, &ring->busy_pfds) {
		struct nw_pollfd *pfd =
			nw_list_entry(bpos, struct nw_pollfd, busy_node);

		if (!all && n)
			break;
		nw_list_for_each_safe(pos, tmp, &pfd->parked) {
			struct nw_req *req =
				nw_list_entry(pos, struct nw_req, poll_node);

			if ((!all && n) || !match(req, arg))
				continue;
			nw_poll_unpark(ring, req);
			n++;
			req->poll_drain = cancel_drains(req);
			if (req->flags & NW_REQ_F_TW_QUEUED) {
				req->poll_canceled = true;
				continue;
			}
			if (req->poll_drain) {
				req->poll_canceled = true;
				mshot_queue(req);
				nw_list_add_tail(pos, &last);
				continue;
			}
			nw_req_set_fail(req, -ECANCELED);
			nw_list_add_tail(pos, out);
		}
	}
	pthread_mutex_unlock(&ring->poll_lock);
	nw_list_for_each_safe(pos, tmp, &last) {
		nw_list_del(pos);
		nw_req_task_queue(nw_list_entry(pos, struct nw_req, poll_node));
	}
	return n ? n : -ENOENT;
}

/* ---- IORING_OP_POLL_ADD (POLL_REMOVE: pollremove.c) ---- */

/* Post a multishot event CQE (F_MORE) on the submit side, if still so. */
void nw_poll_mshot_post(struct nw_req *req, unsigned int ready)
{
	if (!ready)
		ready = poll_result(req);
	if (!ready)
		return; /* a stale edge */
	req->cflags = IORING_CQE_F_MORE;
	nw_cq_add(req->ring, req, (int)ready);
	req->cflags = 0;
}

/*
 * Park a POLL_ADD (poll_lock held; dropped here). A multishot one that is
 * ready already gets its first event as task work, as the kernel's
 * __io_arm_poll_handler queues it: its CQE says what is ready when the
 * task work runs (on a DEFER_TASKRUN ring, in the program's next wait),
 * not at submit.
 */
static int poll_add_park(struct nw_ring *ring, struct nw_pollfd *pfd,
			 struct nw_req *req, unsigned int ready)
{
	bool queued = false;

	nw_poll_stamp(ring, pfd, req, ready);
	nw_poll_park(ring, pfd, req, req->poll_mask);
	if (ready) {
		req->poll_events |= ready;
		queued = mshot_queue(req);
	}
	pthread_mutex_unlock(&ring->poll_lock);
	if (queued)
		nw_req_task_queue(req);
	return NW_QUEUED;
}

/*
 * An fd epoll refuses (EPERM) has no wait queue to wait on: as the
 * kernel's __io_arm_poll_handler when nothing was queued, the mask now if
 * one of the events is ready (a multishot poll ends with it: no
 * F_MORE), else -EINVAL.
 */
static int poll_add_unwatchable(struct nw_req *req, unsigned int ready)
{
	if (!ready)
		return -EINVAL;
	req->flags &= ~NW_REQ_F_MSHOT;
	req->res = (int)ready;
	return NW_COMPLETE;
}

int nw_poll_add_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_ring *ring = req->ring;
	struct pollfd p = {.fd = req->fd, .events = (short)req->poll_mask};
	struct nw_pollfd *pfd;
	struct nw_ring *t;
	int ret;

	if (req->fd < 0)
		return -EBADF;
	req->tw_func = poll_add_fire; /* what readiness continues */
	nw_poll_ring_of(req)->evfd_sig =
		__atomic_load_n(&ring->evfd_signals, __ATOMIC_RELAXED);
	if (unlikely(nw_poll_ring_of(req)->wake_res)) {
		req->res = (int)nw_poll_ring_of(req)->wake_res;
		nw_poll_ring_of(req)->wake_res = 0;
		return NW_COMPLETE;
	}
	if (unlikely(nw_is_ring_fd(req->fd)) && !nw_ring_lookup(req->fd, &t))
		return t->poll_ops->issue(req, t);
	for (;;) {
		unsigned int seq0, ready;

		int kind;

		nw_poll_prepare(req, NW_POLLIN, &kind);
		seq0 = req->poll_seq;
		if (poll(&p, 1, 0) < 0)
			return -errno;
		if (p.revents & POLLNVAL)
			return -EBADF;
		ready = (unsigned short)p.revents & req->poll_mask;
		/* Gone since the wake-up: the kernel reports its mask. */
		if (!ready)
			ready = nw_poll_ring_of(req)->wake_ev & req->poll_mask;
		nw_poll_ring_of(req)->wake_ev = 0;
		if (ready && !(req->flags & NW_REQ_F_MSHOT)) {
			req->res = (int)ready;
			return NW_COMPLETE;
		}
		pthread_mutex_lock(&ring->poll_lock);
		if (nw_loop_ensure(&ring->loop))
			goto err_unlock;
		pfd = nw_fdcache_get(ring, req->fd, true);
		if (!pfd)
			goto err_unlock;
		ret = nw_pollfd_watch(ring, pfd);
		if (ret == -EPERM) { /* no wait queue: a file, a directory */
			pthread_mutex_unlock(&ring->poll_lock);
			return poll_add_unwatchable(req, ready);
		}
		if (ret)
			goto err_unlock;
		if (pfd->in_seq == seq0 || ready)
			return poll_add_park(ring, pfd, req, ready);
		pthread_mutex_unlock(&ring->poll_lock);
	}
err_unlock:
	pthread_mutex_unlock(&ring->poll_lock);
	return -ENOMEM;
}

/*
 * Park a multishot op (RECV_MULTISHOT) on its fd for good, and queue its
 * first attempt as task work: the op runs only on the submit side
 * (mshot_tw, issue flag NW_ISSUE_F_MSHOT), where it may post CQEs. The
 * caller must not touch req after a 0 (it may be complete already when
 * called off the submit side). 0 or -errno: the fd cannot be watched.
 */
int nw_poll_arm_mshot(struct nw_req *req, unsigned int mask)
{
	struct nw_ring *ring = req->ring;
	struct nw_pollfd *pfd;
	int ret = -ENOMEM;

	pthread_mutex_lock(&ring->poll_lock);
	if (nw_loop_ensure(&ring->loop))
		goto out;
	pfd = nw_fdcache_get(ring, req->fd, true);
	if (!pfd) {
		ret = -errno; /* -EBADF: not open */
		goto out;
	}
	ret = nw_pollfd_watch(ring, pfd);
	if (ret)
		goto out;
	req->flags |= NW_REQ_F_MSHOT | NW_REQ_F_TW_QUEUED;
	req->tw_func = mshot_tw;
	req->poll_events = mask;
	nw_poll_park(ring, pfd, req, mask);
out:
	pthread_mutex_unlock(&ring->poll_lock);
	if (ret)
		return ret;
	nw_req_task_queue(req);
	return 0;
}

/*
 * A multishot op's turn, on the submit side. TW_QUEUED stays set while it
 * runs, so edges meanwhile only note poll_events; if any came, it runs
 * again. A cancel meanwhile (another thread, or ring exit) has unparked
 * it and set poll_canceled: it ends, with its own final result if it has
 * one, else -ECANCELED. Returns true while it stays armed; false when it
 * is done (unparked, req->res final).
 */
static bool mshot_op_tw(struct nw_req *req)
{
	struct nw_ring *ring = req->ring;
	int ret = nw_issue_defs[req->opcode].issue(
		req, NW_ISSUE_F_NONBLOCK | NW_ISSUE_F_MSHOT);
	bool again = false;

	pthread_mutex_lock(&ring->poll_lock);
	if (req->poll_canceled) {
		/* Unparked by the canceller; nothing held while NW_QUEUED. */
		req->flags &= ~(NW_REQ_F_MSHOT | NW_REQ_F_TW_QUEUED);
		if (ret == NW_QUEUED)
			ret = -ECANCELED;
	} else if (ret != NW_QUEUED) {
		nw_poll_unpark(ring, req);
		req->flags &= ~(NW_REQ_F_MSHOT | NW_REQ_F_TW_QUEUED);
	} else if (req->poll_events) {
		again = true;
		req->poll_events = 0;
	} else {
		req->flags &= ~NW_REQ_F_TW_QUEUED;
	}
	pthread_mutex_unlock(&ring->poll_lock);
	if (ret != NW_QUEUED) {
		if (ret < 0)
			nw_req_set_fail(req, ret);
		return false;
	}
	if (again)
		nw_req_task_queue(req);
	return true;
}

/* A multishot op asks for another turn (fairness: it had its share). */
void nw_poll_mshot_requeue(struct nw_req *req)
{
	pthread_mutex_lock(&req->ring->poll_lock);
	req->poll_events |= req->poll_mask;
	pthread_mutex_unlock(&req->ring->poll_lock);
}

/*
 * A multishot POLL_ADD's event (TW_QUEUED set: a cancel only marks it).
 * A CQE that cannot be posted (the CQ full, a backlog) ends the poll as
 * its final CQE, io_poll_check_events' downgrade. True while armed.
 */
static bool mshot_poll_event(struct nw_req *req, unsigned int ev)
{
	struct nw_ring *ring = req->ring;
	unsigned int mask = poll_result(req);
	bool again = false, done = true;

	if (!mask) /* gone since the wake-up: the kernel reports its mask */
		mask = ev & (req->poll_mask | NW_POLL_ALWAYS);

	pthread_mutex_lock(&ring->poll_lock);
	if (req->poll_canceled) {
		nw_req_set_fail(req, -ECANCELED);
	} else if (mask && nw_cq_full(ring)) {
		nw_poll_unpark(ring, req);
		req->res = (int)mask;
	} else {
		done = false;
		again = req->poll_events; /* edges meanwhile: another turn */
		req->poll_events = 0;
	}
	if (done)
		req->flags &= ~NW_REQ_F_MSHOT;
	if (!again)
		req->flags &= ~NW_REQ_F_TW_QUEUED;
	pthread_mutex_unlock(&ring->poll_lock);
	if (done)
		return false;
	if (mask)
		nw_poll_mshot_post(req, mask);
	if (again)
		nw_req_task_queue(req);
	return true;
}

/*
 * A multishot event queued by the reactor, delivered on the submit side.
 * Returns true while the request stays armed.
 */
static bool mshot_event(struct nw_req *req)
{
	struct nw_ring *ring = req->ring;
	unsigned int ev;
	bool canceled;

	pthread_mutex_lock(&ring->poll_lock);
	if (!(req->flags & NW_REQ_F_POLL_ADD) &&
	    (!req->poll_canceled || req->poll_drain)) {
		req->poll_drain = false;
		req->poll_events = 0;
		pthread_mutex_unlock(&ring->poll_lock);
		return mshot_op_tw(req);
	}
	ev = req->poll_events;
	req->poll_events = 0;
	canceled = req->poll_canceled;
	if (canceled || !ev)
		req->flags &= ~NW_REQ_F_TW_QUEUED;
	pthread_mutex_unlock(&ring->poll_lock);
	if (canceled) {
		nw_req_set_fail(req, -ECANCELED);
		return false;
	}
	return !ev || mshot_poll_event(req, ev);
}

/* The task work of a multishot request: its event, or its end. */
static void mshot_tw(struct nw_req *req, bool submit_side)
{
	if (!mshot_event(req))
		nw_req_finish(req, submit_side);
}
