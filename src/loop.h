/* SPDX-License-Identifier: MIT */
/*
 * The readiness backend (loop.c): one epoll instance per ring plus an
 * eventfd that wakes whoever sleeps in it. The only file that calls
 * epoll_*. The rest of the engine talks in NW_POLL* masks.
 */
#ifndef NW_LOOP_H
#define NW_LOOP_H

#include <signal.h>
#include <time.h>

#define NW_POLLIN    0x001U
#define NW_POLLPRI   0x002U
#define NW_POLLOUT   0x004U
#define NW_POLLERR   0x008U
#define NW_POLLHUP   0x010U
#define NW_POLLRDHUP 0x2000U

struct nw_loop {
	int epfd;
	int wake_fd; /* eventfd in the epoll set, data NULL */
};

struct nw_loop_event {
	void *data;	     /* NULL for the wake eventfd */
	unsigned int events; /* NW_POLL* (the epoll bits) */
};

/* Create the epoll instance and its wake eventfd: 0 or -errno. */
int nw_loop_init(struct nw_loop *loop);
void nw_loop_free(struct nw_loop *loop);
/*
 * Watch fd edge-triggered for in, out, pri and hang-ups, with data.
 * Returns 0 when newly added, 1 when (fd, file) was already watched,
 * -EPERM for files epoll cannot watch (regular files), or -errno.
 */
int nw_loop_add(struct nw_loop *loop, int fd, void *data);
/* Stop watching fd (ignores fds already gone). */
void nw_loop_del(struct nw_loop *loop, int fd);
/*
 * Wait for events (timeout NULL: forever; sig: mask while waiting).
 * Returns the number of events, 0 on time-out, -EINTR, or -errno.
 * The wake eventfd is drained here and reported with data NULL.
 */
int nw_loop_wait(struct nw_loop *loop, struct nw_loop_event *ev, int max,
		 const struct timespec *timeout, const sigset_t *sig);
/* Make a sleeper in nw_loop_wait return. */
void nw_loop_wake(struct nw_loop *loop);

#endif
