/* SPDX-License-Identifier: MIT */
/*
 * The readiness backend (loop.c): one epoll instance per ring plus an
 * eventfd that wakes whoever sleeps in it. The only file that calls
 * epoll_*. The rest of the engine talks in NW_POLL* masks.
 *
 * What the loop watches are event sources (struct nw_io), each with the
 * callback the reactor calls for its events, as libuv's uv__io_poll calls
 * w->cb on a uv__io_t: poll.c's per-fd watches, timeout.c's timerfd.
 */
#ifndef NW_LOOP_H
#define NW_LOOP_H

#include <signal.h>
#include <stdbool.h>
#include <time.h>

#define NW_POLLIN    0x001U
#define NW_POLLPRI   0x002U
#define NW_POLLOUT   0x004U
#define NW_POLLERR   0x008U
#define NW_POLLHUP   0x010U
#define NW_POLLRDHUP 0x2000U

/* What one harvest collects: defined by its runner (reactor.c). */
struct nw_harvest;

struct nw_io {
	/* Called by the harvester, under the ring's poll_lock. */
	void (*cb)(struct nw_io *io, unsigned int events, struct nw_harvest *h);
	/*
	 * Written into the watch's epoll data at each add and mod, and read
	 * back with each event: the kernel copies the data as the event is
	 * collected, so an event says which registration it was taken
	 * under (poll.c: a POLL_ADD parked after the collection).
	 */
	unsigned short gen;
};

struct nw_loop {
	int epfd;
	int wake_fd; /* eventfd in the epoll set, io NULL */
	bool ready;  /* made: epfd and wake_fd are valid (acquire) */
};

struct nw_loop_event {
	struct nw_io *io;    /* NULL for the wake eventfd */
	unsigned int events; /* NW_POLL* (the epoll bits) */
	unsigned short gen;  /* io->gen when the event was collected */
};

/*
 * Create the epoll instance and its wake eventfd on first use (the caller
 * serialises, under the ring's poll_lock): 0 or -errno.
 */
int nw_loop_ensure(struct nw_loop *loop);
/* Whether the loop was made (any thread). */
static inline bool nw_loop_ready(struct nw_loop *loop)
{
	return __atomic_load_n(&loop->ready, __ATOMIC_ACQUIRE);
}
void nw_loop_free(struct nw_loop *loop);
/*
 * Watch fd edge-triggered for in, out, pri and hang-ups, for io.
 * Returns 0 when newly added, 1 when (fd, file) was already watched,
 * -EPERM for files epoll cannot watch (regular files), or -errno.
 */
int nw_loop_add(struct nw_loop *loop, int fd, struct nw_io *io);
/* Write io->gen into fd's watch (EPOLL_CTL_MOD): 0 or -errno. */
int nw_loop_mod(struct nw_loop *loop, int fd, struct nw_io *io);
/* Stop watching fd (ignores fds already gone). */
void nw_loop_del(struct nw_loop *loop, int fd);
/* The most events one nw_loop_wait returns: a harvest's batch. */
#define NW_LOOP_BATCH 64

/*
 * Wait for events (timeout NULL: forever; sig: mask while waiting).
 * Returns the number of events, 0 on time-out, -EINTR, or -errno.
 * The wake eventfd is drained here and reported with io NULL.
 */
int nw_loop_wait(struct nw_loop *loop, struct nw_loop_event *ev, int max,
		 const struct timespec *timeout, const sigset_t *sig);
/* Make a sleeper in nw_loop_wait return. */
void nw_loop_wake(struct nw_loop *loop);
/*
 * An epoll fd of no loop, made once and kept high: an anon-inode file
 * with only poll, as the kernel's io_uring file is (nw_ring_fd_as_file).
 * -errno when it cannot be made.
 */
int nw_loop_anon_fd(void);

/*
 * The program's own epoll sets (IORING_OP_EPOLL_CTL, epoll.c): the event
 * exactly as the system call reads it from user memory (packed, 12 bytes,
 * on x86-64), so that the opcode copies it without knowing its layout.
 */
#if defined(__x86_64__)
#define NW_EP_EVENT_SIZE 12
#else
#define NW_EP_EVENT_SIZE 16
#endif
struct nw_ep_event {
	unsigned char bytes[NW_EP_EVENT_SIZE];
};
/* Whether op reads an event (all but EPOLL_CTL_DEL: ep_op_has_event). */
bool nw_loop_ctl_has_event(int op);
/* epoll_ctl(epfd, op, fd, ev) on the program's epfd: 0 or -errno. */
int nw_loop_ctl(int epfd, int op, int fd, const struct nw_ep_event *ev);
/*
 * The rest of epoll_ctl's answer for a target that is a ring's fd (the
 * kernel's ring file is pollable, nowait's memfd is not: the call said
 * -EPERM): -EBADF or -EINVAL for epfd, the EPOLLEXCLUSIVE rules, an
 * unknown op; -ENOENT for DEL and MOD (no set holds it), and -EPERM for
 * an ADD, which the kernel would do and the engine cannot.
 */
int nw_loop_ctl_ring(int epfd, int op, const struct nw_ep_event *ev);
/*
 * epoll_wait on the program's epfd into the program's events array (the
 * call writes it, -EFAULT for a bad one), without waiting unless block:
 * the count, or -errno.
 */
int nw_loop_wait_user(int epfd, void *events, int maxevents, bool block);

#endif
