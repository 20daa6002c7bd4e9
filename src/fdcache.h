/* SPDX-License-Identifier: MIT */
/*
 * What the engine keeps per fd number of a ring (fdcache.c): the fd's kind
 * and socket type as learnt, and the readiness state poll.c parks requests
 * on. All of it is under ring->poll_lock, but for the few fields
 * nw_fdcache_peek's reader may load without it (below).
 */
#ifndef NW_FDCACHE_H
#define NW_FDCACHE_H

#include "internal.h"

/* What the engine has learnt of an fd (cached per ring and fd number). */
enum nw_fd_kind {
	NW_FD_UNKNOWN,
	NW_FD_FILE, /* regular file or block device: offsets, short continues */
	NW_FD_STREAM, /* pipe, FIFO, anon inode: the offset is ignored */
	NW_FD_SOCKET, /* socket, tty...: no offsets, 0 and -1 allowed */
};

struct nw_pollfd {
	struct nw_io io; /* its watch in the ring's loop (poll.c) */
	int fd;
	bool watched;		/* in the epoll set, as far as we know */
	bool lazy;		/* parked on unwatched: not verified (poll.c) */
	bool owned;		/* the ring is on the fd's owner record */
	unsigned char kind;	/* enum nw_fd_kind, 0 until learnt */
	signed char sock_type;	/* SO_TYPE of a socket, 0 until learnt */
	bool in_idle, out_idle; /* known not ready at *_idle_seq */
	unsigned int in_seq, out_seq;
	unsigned int in_idle_seq, out_idle_seq;
	long long verify_due_ns; /* next check of the watch (0: unset) */
	long long verify_ivl_ns; /* doubles up to NW_VERIFY_MAX_NS */
	struct nw_list parked;
	struct nw_list
		busy_node; /* on ring->busy_pfds while parked is not empty */
	/* The fd is a ring's: watch_fd, a dup of its poll_evfd (ringpoll.c). */
	struct nw_ring *target;
	int watch_fd;
};

/*
 * The state of fd, made on first use when create, once fcntl says the fd
 * is open. NULL with errno EBADF (not open) or ENOMEM. Under poll_lock.
 */
struct nw_pollfd *nw_fdcache_get(struct nw_ring *ring, int fd, bool create);

#define NW_PFD_SHIFT 6 /* a ring's leaf: 64 fds, 512 bytes */
#define NW_PFD_LEAF  (1U << NW_PFD_SHIFT)

/*
 * The state of fd if it has one, without poll_lock (poll.c's snapshot
 * before an attempt): a ring's pfds, leaves and directories stay until
 * its teardown, and are filled before they are published. Of the fields,
 * only kind, sock_type, watched, in_seq/out_seq, in_idle/out_idle and
 * in_idle_seq/out_idle_seq may be read so, with nw_pfd_load; their writers
 * (under poll_lock, but nw_poll_drained's idle mark) store with
 * nw_pfd_store. fd never changes.
 */
static inline struct nw_pollfd *nw_fdcache_peek(struct nw_ring *ring, int fd)
{
	unsigned int hi = (unsigned int)fd >> NW_PFD_SHIFT;
	struct nw_pollfd **leaf;

	if (fd < 0 ||
	    hi >= __atomic_load_n(&ring->nr_pfd_dir, __ATOMIC_ACQUIRE))
		return NULL;
	leaf = __atomic_load_n(
		&__atomic_load_n(&ring->pfd_dir, __ATOMIC_ACQUIRE)[hi],
		__ATOMIC_ACQUIRE);
	if (!leaf)
		return NULL;
	return __atomic_load_n(&leaf[(unsigned int)fd & (NW_PFD_LEAF - 1)],
			       __ATOMIC_ACQUIRE);
}

#define nw_pfd_load(p)	   __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define nw_pfd_store(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* The fd number now names another file: forget what was learnt of it. */
void nw_fdcache_reset(struct nw_pollfd *pfd);

/* The fd's kind and a socket's SO_TYPE (0: not learnt), taking poll_lock. */
int nw_fd_kind(struct nw_ring *ring, int fd);
void nw_fd_set_kind(struct nw_ring *ring, int fd, int kind);
int nw_fd_sock_type(struct nw_ring *ring, int fd);
void nw_fd_set_sock_type(struct nw_ring *ring, int fd, int type);
/*
 * The engine closes fd, or the number is known to be closed: forget its
 * kind and its watch (the next park watches it afresh). Takes poll_lock.
 */
void nw_fd_forget(struct nw_ring *ring, int fd);

/*
 * The fd's owner record: the rings that have state for an fd number, so
 * that its close visits those rings only. nw_fd_seen puts pfd's ring on
 * its fd's record (under that ring's poll_lock; a leaf lock inside).
 */
void nw_fd_seen(struct nw_ring *ring, struct nw_pollfd *pfd);
/* The ring's state for fd is reset: it may be recorded again. poll_lock. */
static inline void nw_fd_unseen(struct nw_pollfd *pfd)
{
	pfd->owned = false;
}
/*
 * The fd is closing: take its owner record. Returns how many rings were on
 * it (0 costs one load), in *rings (free() it), or -1 when a record could
 * not be kept (no memory): then every ring must be visited.
 */
int nw_fd_owners_take(int fd, struct nw_ring ***rings);
/*
 * Teardown: free every pfd of the ring (closing a ring pfd's watch_fd) and
 * take the ring off the owner records. poll_lock, nothing parked.
 */
void nw_fdcache_free(struct nw_ring *ring);
/* The next fd >= fd with an owner record, or -1 (for close_range). */
int nw_fd_owned_next(int fd);
/* Rings visited by the close hooks so far (for tests: a close's cost). */
unsigned long nw_fd_close_visits(void);
void nw_fd_close_visit(void);
/*
 * fd's wake-ups come from rings' CQ posts (an epoll fd that holds a ring
 * fd, the preload says): a multishot poll on it turns oneshot at its
 * first wake-up, as the kernel's does on EPOLL_URING_WAKE. Any lock.
 */
void nw_fd_set_uring_wake(int fd, bool on);
#define NW_FD_WAKE_MAX 65536
extern unsigned long nw_fd_uring_wake_bits[];

static inline bool nw_fd_uring_wake(int fd)
{
	const unsigned int bits = 8 * sizeof(long);

	if (fd < 0 || fd >= NW_FD_WAKE_MAX)
		return false;
	return __atomic_load_n(&nw_fd_uring_wake_bits[(unsigned int)fd / bits],
			       __ATOMIC_RELAXED) &
	       (1UL << ((unsigned int)fd % bits));
}
/*
 * fd's last positional read or write completed in full inline (rw.c): a
 * regular file, most likely. Only a hint, trusted for no result; cleared
 * when the number is known to close. Any lock.
 */
#define NW_FD_HINT_MAX 65536
extern unsigned long nw_fd_file_hint_bits[];

static inline bool nw_fd_file_hint(int fd)
{
	unsigned int w = (unsigned int)fd / (8 * sizeof(long));

	if ((unsigned int)fd >= NW_FD_HINT_MAX)
		return false;
	return __atomic_load_n(&nw_fd_file_hint_bits[w], __ATOMIC_RELAXED) &
	       (1UL << ((unsigned int)fd % (8 * sizeof(long))));
}
void nw_fd_set_file_hint(int fd, bool on);
void nw_fd_file_hint_clear_range(unsigned int first, unsigned int last);

#endif
