/* SPDX-License-Identifier: MIT */
/*
 * Per-fd state of a ring, by fd number: a table that grows to the highest
 * fd the ring has used, with what was learnt of each fd (kind, SO_TYPE)
 * and poll.c's readiness counters and parked list. Learning an fd's kind
 * costs a system call (fstat, getsockopt), so it is done once per fd and
 * forgotten when the number is known to name another file (close, a
 * watch that epoll says is new, a direct-descriptor install).
 *
 * Process-wide, a bitmap says which fd numbers some ring has state for (a
 * watch, a kind), so that the close of an fd the engine never saw costs
 * one load (nw_fd_seen_take, from the close hooks).
 */
#include <stdlib.h>
#include <string.h>
#include "fdcache.h"

#define NW_FD_SEEN_MAX 65536
#define NW_LONG_BITS   (8 * sizeof(long))

static unsigned long seen_bits[NW_FD_SEEN_MAX / NW_LONG_BITS];
static bool seen_big; /* some fd >= NW_FD_SEEN_MAX had state: never reset */

void nw_fd_seen(int fd)
{
	unsigned long bit = 1UL << ((unsigned int)fd % NW_LONG_BITS);
	unsigned long *w = &seen_bits[(unsigned int)fd / NW_LONG_BITS];

	if (fd < 0)
		return;
	if (fd >= NW_FD_SEEN_MAX) {
		__atomic_store_n(&seen_big, true, __ATOMIC_RELAXED);
		return;
	}
	if (!(__atomic_load_n(w, __ATOMIC_RELAXED) & bit))
		__atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
}

bool nw_fd_seen_take(int fd)
{
	unsigned long bit = 1UL << ((unsigned int)fd % NW_LONG_BITS);
	unsigned long *w = &seen_bits[(unsigned int)fd / NW_LONG_BITS];

	if (fd < 0)
		return false;
	if (fd >= NW_FD_SEEN_MAX)
		return __atomic_load_n(&seen_big, __ATOMIC_RELAXED);
	if (likely(!(__atomic_load_n(w, __ATOMIC_RELAXED) & bit)))
		return false;
	__atomic_fetch_and(w, ~bit, __ATOMIC_RELAXED);
	return true;
}

bool nw_fd_seen_any(int first, int last)
{
	int fd;

	if (last >= NW_FD_SEEN_MAX &&
	    __atomic_load_n(&seen_big, __ATOMIC_RELAXED))
		return true;
	if (last >= NW_FD_SEEN_MAX)
		last = NW_FD_SEEN_MAX - 1;
	for (fd = first < 0 ? 0 : first; fd <= last; fd++) {
		unsigned long w = __atomic_load_n(
			&seen_bits[(unsigned int)fd / NW_LONG_BITS],
			__ATOMIC_RELAXED);

		if (!w && fd % NW_LONG_BITS == 0) {
			fd += NW_LONG_BITS - 1; /* a whole empty word */
			continue;
		}
		if (w & (1UL << ((unsigned int)fd % NW_LONG_BITS)))
			return true;
	}
	return false;
}

struct nw_pollfd *nw_fdcache_get(struct nw_ring *ring, int fd, bool create)
{
	struct nw_pollfd *pfd;

	if (fd < 0)
		return NULL;
	if ((unsigned int)fd >= ring->nr_pollfds) {
		unsigned int nr = ring->nr_pollfds ? ring->nr_pollfds : 64;
		struct nw_pollfd **tab;

		if (!create)
			return NULL;
		while (nr <= (unsigned int)fd)
			nr *= 2;
		tab = realloc(ring->pollfds, nr * sizeof(*tab));
		if (!tab)
			return NULL;
		memset(tab + ring->nr_pollfds, 0,
		       (nr - ring->nr_pollfds) * sizeof(*tab));
		ring->pollfds = tab;
		ring->nr_pollfds = nr;
	}
	pfd = ring->pollfds[fd];
	if (!pfd && create) {
		pfd = calloc(1, sizeof(*pfd));
		if (!pfd)
			return NULL;
		pfd->fd = fd;
		nw_list_init(&pfd->parked);
		ring->pollfds[fd] = pfd;
	}
	return pfd;
}

void nw_fdcache_reset(struct nw_pollfd *pfd)
{
	pfd->kind = NW_FD_UNKNOWN;
	pfd->sock_type = 0;
	pfd->in_idle = pfd->out_idle = false;
	pfd->in_seq++;
	pfd->out_seq++;
}

int nw_fd_kind(struct nw_ring *ring, int fd)
{
	struct nw_pollfd *pfd;
	int kind;

	pthread_mutex_lock(&ring->poll_lock);
	pfd = nw_fdcache_get(ring, fd, false);
	kind = pfd ? pfd->kind : NW_FD_UNKNOWN;
	pthread_mutex_unlock(&ring->poll_lock);
	return kind;
}

void nw_fd_set_kind(struct nw_ring *ring, int fd, int kind)
{
	struct nw_pollfd *pfd;

	pthread_mutex_lock(&ring->poll_lock);
	pfd = nw_fdcache_get(ring, fd, true);
	if (pfd) {
		pfd->kind = (unsigned char)kind;
		if (kind == NW_FD_UNKNOWN)
			pfd->sock_type = 0;
		else
			nw_fd_seen(fd);
	}
	pthread_mutex_unlock(&ring->poll_lock);
}

int nw_fd_sock_type(struct nw_ring *ring, int fd)
{
	struct nw_pollfd *pfd;
	int type;

	pthread_mutex_lock(&ring->poll_lock);
	pfd = nw_fdcache_get(ring, fd, false);
	type = pfd ? pfd->sock_type : 0;
	pthread_mutex_unlock(&ring->poll_lock);
	return type;
}

void nw_fd_set_sock_type(struct nw_ring *ring, int fd, int type)
{
	struct nw_pollfd *pfd;

	pthread_mutex_lock(&ring->poll_lock);
	pfd = nw_fdcache_get(ring, fd, true);
	if (pfd) {
		pfd->sock_type = (signed char)type;
		nw_fd_seen(fd);
	}
	pthread_mutex_unlock(&ring->poll_lock);
}

void nw_fd_forget(struct nw_ring *ring, int fd)
{
	struct nw_pollfd *pfd;

	pthread_mutex_lock(&ring->poll_lock);
	pfd = nw_fdcache_get(ring, fd, false);
	if (pfd && !pfd->target) {
		/* The file may live on in another fd: no stale edges. */
		if (pfd->watched && nw_loop_ready(&ring->loop))
			nw_loop_del(&ring->loop, fd);
		pfd->watched = false;
		nw_fdcache_reset(pfd);
	}
	pthread_mutex_unlock(&ring->poll_lock);
}
