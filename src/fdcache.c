/* SPDX-License-Identifier: MIT */
/*
 * Per-fd state of a ring, by fd number: a table that grows to the highest
 * fd the ring has used, with what was learnt of each fd (kind, SO_TYPE)
 * and poll.c's readiness counters and parked list. Learning an fd's kind
 * costs a system call (fstat, getsockopt), so it is done once per fd and
 * forgotten when the number is known to name another file (close, a
 * watch that epoll says is new, a direct-descriptor install).
 */
#include <stdlib.h>
#include <string.h>
#include "fdcache.h"

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
	if (pfd)
		pfd->sock_type = (signed char)type;
	pthread_mutex_unlock(&ring->poll_lock);
}
