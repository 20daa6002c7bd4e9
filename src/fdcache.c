/* SPDX-License-Identifier: MIT */
/*
 * Per-fd state of a ring, by fd number: a two-level table (a directory
 * of leaves of NW_PFD_LEAF entries, made as fds are used) with what was
 * learnt of each fd (kind, SO_TYPE) and poll.c's readiness counters and
 * parked list. A pfd is made only for an fd that is open (fcntl F_GETFD,
 * once per number): a bad fd gets -EBADF and costs nothing, as in the
 * kernel, and a high one costs one leaf. Learning an fd's kind costs a
 * system call (fstat, getsockopt), so it is done once per fd and
 * forgotten when the number is known to name another file (close, a
 * watch that epoll says is new, a direct-descriptor install).
 *
 * Process-wide, each fd number some ring has state for (a watch, a kind)
 * has an owner record: the rings that have it. The close hooks take the
 * record (nw_fd_owners_take) and visit those rings only, so a close costs
 * one load for an fd no ring knows and O(rings that know it) otherwise,
 * not O(rings of the process). The records are under owners_lock, a
 * leaf, taken under a ring's poll_lock; a bitmap of the low fd numbers
 * (and a count of the high ones) makes the unknown fd's close lock-free.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fdcache.h"

#define NW_FD_SEEN_MAX 65536
#define NW_LONG_BITS   (8 * sizeof(long))
#define NW_OWN_SHIFT   8 /* an owner leaf: 256 fds */
#define NW_OWN_LEAF    (1U << NW_OWN_SHIFT)

struct nw_fd_owner {
	struct nw_ring **rings;
	unsigned int nr, cap;
};

static pthread_mutex_t owners_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nw_fd_owner **own_dir; /* by fd >> NW_OWN_SHIFT */
static unsigned int nr_own_dir;
static bool owners_lost; /* a record could not be kept: visit every ring */
/* Low fds with a record (the close's lock-free look), high ones counted. */
static unsigned long seen_bits[NW_FD_SEEN_MAX / NW_LONG_BITS];
static unsigned int nr_big;
static unsigned long close_visits;

/* Grow a directory of pointers to cover index i: false without memory. */
static bool dir_grow(void ***dir, unsigned int *nr, unsigned int i)
{
	unsigned int n = *nr ? *nr : 1;
	void **tab;

	while (n <= i)
		n *= 2;
	tab = realloc(*dir, n * sizeof(*tab));
	if (!tab)
		return false;
	memset(tab + *nr, 0, (n - *nr) * sizeof(*tab));
	*dir = tab;
	*nr = n;
	return true;
}

/* fd's owner record, made when create. Under owners_lock. */
static struct nw_fd_owner *owner_slot(int fd, bool create)
{
	unsigned int hi = (unsigned int)fd >> NW_OWN_SHIFT;

	if (hi >= nr_own_dir &&
	    (!create || !dir_grow((void ***)&own_dir, &nr_own_dir, hi)))
		return NULL;
	if (!own_dir[hi] && create)
		own_dir[hi] = calloc(NW_OWN_LEAF, sizeof(struct nw_fd_owner));
	if (!own_dir[hi])
		return NULL;
	return &own_dir[hi][(unsigned int)fd & (NW_OWN_LEAF - 1)];
}

static bool owner_push(struct nw_fd_owner *o, struct nw_ring *ring)
{
	if (o->nr == o->cap) {
		unsigned int cap = o->cap ? o->cap * 2 : 2;
		struct nw_ring **r = realloc(o->rings, cap * sizeof(*r));

		if (!r)
			return false;
		o->rings = r;
		o->cap = cap;
	}
	o->rings[o->nr++] = ring;
	return true;
}

/* Note whether fd has a record, for the lock-free look. Under owners_lock. */
static void owner_mark(int fd, bool on)
{
	unsigned long bit = 1UL << ((unsigned int)fd % NW_LONG_BITS);
	unsigned long *w = &seen_bits[(unsigned int)fd / NW_LONG_BITS];

	if (fd >= NW_FD_SEEN_MAX)
		__atomic_add_fetch(&nr_big, on ? 1U : -1U, __ATOMIC_RELAXED);
	else if (on)
		__atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(w, ~bit, __ATOMIC_RELAXED);
}

void nw_fd_seen(struct nw_ring *ring, struct nw_pollfd *pfd)
{
	struct nw_fd_owner *o;

	if (pfd->owned || pfd->fd < 0)
		return;
	pfd->owned = true;
	pthread_mutex_lock(&owners_lock);
	o = owner_slot(pfd->fd, true);
	if (o && owner_push(o, ring)) {
		if (o->nr == 1)
			owner_mark(pfd->fd, true);
	} else {
		__atomic_store_n(&owners_lost, true, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&owners_lock);
}

/* Take ring off fd's owner record (a torn-down ring). */
static void owner_remove(int fd, struct nw_ring *ring)
{
	struct nw_fd_owner *o;

	pthread_mutex_lock(&owners_lock);
	o = owner_slot(fd, false);
	for (unsigned int i = 0; o && i < o->nr; i++) {
		if (o->rings[i] != ring)
			continue;
		o->rings[i] = o->rings[--o->nr];
		if (!o->nr)
			owner_mark(fd, false);
		break;
	}
	pthread_mutex_unlock(&owners_lock);
}

void nw_fdcache_free(struct nw_ring *ring)
{
	for (unsigned int hi = 0; hi < ring->nr_pfd_dir; hi++) {
		struct nw_pollfd **leaf = ring->pfd_dir[hi];

		for (unsigned int i = 0; leaf && i < NW_PFD_LEAF; i++) {
			struct nw_pollfd *pfd = leaf[i];

			if (!pfd)
				continue;
			if (pfd->owned)
				owner_remove(pfd->fd, ring);
			if (pfd->target)
				close(pfd->watch_fd);
			free(pfd);
		}
		free(leaf);
	}
	if (ring->pfd_dir) {
		struct nw_pollfd ***base = ring->pfd_dir - 1;

		while (base) { /* this directory and those it replaced */
			struct nw_pollfd ***old = (void *)base[0];

			free(base);
			base = old;
		}
	}
	ring->pfd_dir = NULL;
	ring->nr_pfd_dir = 0;
}

static bool fd_maybe_owned(int fd)
{
	if (fd >= NW_FD_SEEN_MAX)
		return __atomic_load_n(&nr_big, __ATOMIC_RELAXED) != 0;
	return __atomic_load_n(&seen_bits[(unsigned int)fd / NW_LONG_BITS],
			       __ATOMIC_RELAXED) &
	       (1UL << ((unsigned int)fd % NW_LONG_BITS));
}

int nw_fd_owners_take(int fd, struct nw_ring ***rings)
{
	struct nw_fd_owner *o;
	int nr = 0;

	if (fd < 0)
		return 0;
	nw_fd_set_file_hint(fd, false);
	if (unlikely(__atomic_load_n(&owners_lost, __ATOMIC_RELAXED)))
		return -1;
	if (likely(!fd_maybe_owned(fd)))
		return 0;
	pthread_mutex_lock(&owners_lock);
	o = owner_slot(fd, false);
	if (o && o->nr) {
		*rings = o->rings;
		nr = (int)o->nr;
		o->rings = NULL;
		o->nr = o->cap = 0;
		owner_mark(fd, false);
	}
	pthread_mutex_unlock(&owners_lock);
	return nr;
}

int nw_fd_owned_next(int fd)
{
	unsigned int i, end;
	int found = -1;

	if (fd < 0)
		fd = 0;
	pthread_mutex_lock(&owners_lock);
	end = nr_own_dir << NW_OWN_SHIFT;
	for (i = (unsigned int)fd; i < end && found < 0; i++) {
		struct nw_fd_owner *leaf = own_dir[i >> NW_OWN_SHIFT];

		if (!leaf) /* a whole missing leaf */
			i |= NW_OWN_LEAF - 1;
		else if (leaf[i & (NW_OWN_LEAF - 1)].nr)
			found = (int)i;
	}
	pthread_mutex_unlock(&owners_lock);
	return found;
}

unsigned long nw_fd_close_visits(void)
{
	return __atomic_load_n(&close_visits, __ATOMIC_RELAXED);
}

void nw_fd_close_visit(void)
{
	__atomic_add_fetch(&close_visits, 1, __ATOMIC_RELAXED);
}

/*
 * Grow the ring's directory to cover index hi. nw_fdcache_peek reads it
 * without the lock, so the old one is not freed but kept until teardown:
 * the slot before each directory holds the one it replaced. The new one
 * is filled before it is seen, and its size is stored after it.
 */
static bool pfd_dir_grow(struct nw_ring *ring, unsigned int hi)
{
	unsigned int nr = ring->nr_pfd_dir, n = nr ? nr : 1;
	struct nw_pollfd ***base;

	while (n <= hi)
		n *= 2;
	base = calloc(n + 1, sizeof(*base));
	if (!base)
		return false;
	base[0] =
		(struct nw_pollfd **)(void *)(ring->pfd_dir ? ring->pfd_dir - 1
							    : NULL);
	if (nr)
		memcpy(base + 1, ring->pfd_dir, nr * sizeof(*base));
	__atomic_store_n(&ring->pfd_dir, base + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&ring->nr_pfd_dir, n, __ATOMIC_RELEASE);
	return true;
}

/* A new pfd for fd, if the fd is open. Under poll_lock. */
static struct nw_pollfd *pfd_make(struct nw_ring *ring, int fd)
{
	unsigned int hi = (unsigned int)fd >> NW_PFD_SHIFT;
	struct nw_pollfd *pfd;

	if (fcntl(fd, F_GETFD) < 0) {
		errno = EBADF;
		return NULL;
	}
	errno = ENOMEM;
	if (hi >= ring->nr_pfd_dir && !pfd_dir_grow(ring, hi))
		return NULL;
	if (!ring->pfd_dir[hi])
		__atomic_store_n(&ring->pfd_dir[hi],
				 calloc(NW_PFD_LEAF, sizeof(pfd)),
				 __ATOMIC_RELEASE);
	if (!ring->pfd_dir[hi])
		return NULL;
	pfd = calloc(1, sizeof(*pfd));
	if (!pfd)
		return NULL;
	pfd->fd = fd;
	nw_list_init(&pfd->parked);
	/* made before it is seen: nw_fdcache_peek reads without the lock */
	__atomic_store_n(
		&ring->pfd_dir[hi][(unsigned int)fd & (NW_PFD_LEAF - 1)], pfd,
		__ATOMIC_RELEASE);
	return pfd;
}

struct nw_pollfd *nw_fdcache_get(struct nw_ring *ring, int fd, bool create)
{
	unsigned int hi = (unsigned int)fd >> NW_PFD_SHIFT;
	struct nw_pollfd *pfd = NULL;

	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	if (likely(hi < ring->nr_pfd_dir && ring->pfd_dir[hi]))
		pfd = ring->pfd_dir[hi][(unsigned int)fd & (NW_PFD_LEAF - 1)];
	if (!pfd && create)
		pfd = pfd_make(ring, fd);
	return pfd;
}

void nw_fdcache_reset(struct nw_pollfd *pfd)
{
	nw_pfd_store(&pfd->kind, NW_FD_UNKNOWN);
	nw_pfd_store(&pfd->sock_type, 0);
	nw_pfd_store(&pfd->in_idle, false);
	nw_pfd_store(&pfd->out_idle, false);
	nw_pfd_store(&pfd->in_seq, pfd->in_seq + 1);
	nw_pfd_store(&pfd->out_seq, pfd->out_seq + 1);
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
		nw_pfd_store(&pfd->kind, (unsigned char)kind);
		if (kind == NW_FD_UNKNOWN)
			nw_pfd_store(&pfd->sock_type, 0);
		else
			nw_fd_seen(ring, pfd);
	}
	pthread_mutex_unlock(&ring->poll_lock);
}

/* Without poll_lock (nw_fdcache_peek): a receive asks at each call. */
int nw_fd_sock_type(struct nw_ring *ring, int fd)
{
	struct nw_pollfd *pfd = nw_fdcache_peek(ring, fd);

	return pfd ? nw_pfd_load(&pfd->sock_type) : 0;
}

void nw_fd_set_sock_type(struct nw_ring *ring, int fd, int type)
{
	struct nw_pollfd *pfd;

	pthread_mutex_lock(&ring->poll_lock);
	pfd = nw_fdcache_get(ring, fd, true);
	if (pfd) {
		nw_pfd_store(&pfd->sock_type, (signed char)type);
		nw_fd_seen(ring, pfd);
	}
	pthread_mutex_unlock(&ring->poll_lock);
}

void nw_fd_forget(struct nw_ring *ring, int fd)
{
	struct nw_pollfd *pfd;

	nw_fd_set_file_hint(fd, false);
	pthread_mutex_lock(&ring->poll_lock);
	pfd = nw_fdcache_get(ring, fd, false);
	if (pfd && !pfd->target) {
		/* The file may live on in another fd: no stale edges. */
		if (pfd->watched && nw_loop_ready(&ring->loop))
			nw_loop_del(&ring->loop, fd);
		nw_pfd_store(&pfd->watched, false);
		nw_fdcache_reset(pfd);
	}
	pthread_mutex_unlock(&ring->poll_lock);
}

/*
 * Fds whose wake-ups come from rings' CQ posts (the kernel's
 * EPOLL_URING_WAKE): epoll fds that hold a ring fd under the preload.
 * Below NW_FD_SEEN_MAX only.
 */
unsigned long nw_fd_uring_wake_bits[NW_FD_WAKE_MAX / NW_LONG_BITS];
_Static_assert(NW_FD_WAKE_MAX == NW_FD_SEEN_MAX, "the wake bits' bound");

void nw_fd_set_uring_wake(int fd, bool on)
{
	unsigned long bit = 1UL << ((unsigned int)fd % NW_LONG_BITS);
	unsigned long *w =
		&nw_fd_uring_wake_bits[(unsigned int)fd / NW_LONG_BITS];

	if (fd < 0 || fd >= NW_FD_SEEN_MAX)
		return;
	if (on)
		__atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(w, ~bit, __ATOMIC_RELAXED);
}

/*
 * Fds whose last positional read or write completed in full inline: a
 * regular file's next one skips the readiness snapshot (rw.c). Only a
 * hint, process-wide and lock-free: rw.c trusts it for nothing that
 * decides a result, so a stale one (the number closed behind the
 * engine's back and reused for a pipe) costs a system call, no more.
 * Below NW_FD_HINT_MAX only; cleared by the close hooks.
 */
_Static_assert(NW_FD_HINT_MAX == NW_FD_SEEN_MAX, "one bound for fd bitmaps");
unsigned long nw_fd_file_hint_bits[NW_FD_HINT_MAX / NW_LONG_BITS];

void nw_fd_set_file_hint(int fd, bool on)
{
	unsigned long bit = 1UL << ((unsigned int)fd % NW_LONG_BITS);
	unsigned long *w;

	if ((unsigned int)fd >= NW_FD_HINT_MAX || nw_fd_file_hint(fd) == on)
		return; /* no write where nothing changes: the common case */
	w = &nw_fd_file_hint_bits[(unsigned int)fd / NW_LONG_BITS];
	if (on)
		__atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(w, ~bit, __ATOMIC_RELAXED);
}

void nw_fd_file_hint_clear_range(unsigned int first, unsigned int last)
{
	unsigned int fd;

	if (last >= NW_FD_HINT_MAX)
		last = NW_FD_HINT_MAX - 1;
	for (fd = first; fd <= last; fd++) {
		if (!(fd % NW_LONG_BITS) && last - fd >= NW_LONG_BITS - 1) {
			__atomic_store_n(
				&nw_fd_file_hint_bits[fd / NW_LONG_BITS], 0,
				__ATOMIC_RELAXED);
			fd += NW_LONG_BITS - 1;
			continue;
		}
		nw_fd_set_file_hint((int)fd, false);
	}
}
