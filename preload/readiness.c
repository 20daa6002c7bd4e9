/* SPDX-License-Identifier: MIT */
/*
 * libnowait-preload.so, the readiness of ring fds: poll, ppoll, select,
 * pselect, epoll_ctl, epoll_wait, epoll_pwait and epoll_pwait2 (and their
 * syscall() forms, through route.c) on a nowait ring fd answer as on the
 * kernel's (io_uring_poll: POLLIN while CQEs wait, POLLOUT while the SQ
 * has room, a wake-up at each CQ post). The ring fd is a memfd, which
 * poll calls always ready and epoll refuses, so each call that names one
 * stands a pollfd of the engine's in for it (nowait_ring_pollfd, an
 * eventfd written at every CQ commit of the ring) and reads the ring's
 * mask itself (nowait_ring_poll_mask). docs/ring-readiness.md has the
 * design; in short:
 * - poll and select: answered from the mask when it already says what is
 *   wanted (the other fds polled with a zero timeout); otherwise a pollfd
 *   per ring fd is opened (the announcement), drained, the mask read
 *   again, and the sleep is on the pollfds; a wake-up is translated back
 *   through the mask, so a commit that brought nothing wanted is not
 *   reported and the sleep goes on (drained: no busy loop).
 * - epoll: each (epoll fd, ring fd) registration is a pollfd in the
 *   program's set, EPOLLET, with a tag of ours as its data; epoll_wait*
 *   translate tagged events into the program's data and events through
 *   the mask. Level-triggered registrations stay ready by a write of
 *   their own pollfd after each report (the next wait looks again), edge
 *   ones report at each CQ commit, EPOLLONESHOT ones disarm until MOD.
 * Without a ring fd in the call (or in any epoll set) every call goes
 * straight to libc: a bitmap load, or one load of the registration count.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <nowait.h>
#include <nowait-hook.h>

#define PUBLIC __attribute__((visibility("default")))

/* Registrations of ring fds in epoll sets, process-wide. */
#define REG_MAX	     4096
#define TAG_MAGIC    0x8e57000000000000ULL /* bit 63: no user-space pointer */
#define TAG_MASK     0xffff000000000000ULL
#define POLL_ONSTACK 64

typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *,
			const sigset_t *);
typedef int (*select_fn)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
typedef int (*pselect_fn)(int, fd_set *, fd_set *, fd_set *,
			  const struct timespec *, const sigset_t *);
typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*epoll_ctl_fn)(int, int, int, struct epoll_event *);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int,
			      const sigset_t *);
typedef int (*epoll_wait_fn)(int, struct epoll_event *, int, int);
typedef int (*epoll_pwait2_fn)(int, struct epoll_event *, int,
			       const struct timespec *, const sigset_t *);

static poll_fn real_poll;
static ppoll_fn real_ppoll;
static select_fn real_select;
static pselect_fn real_pselect;
static epoll_ctl_fn real_epoll_ctl;
static epoll_wait_fn real_epoll_wait;
static epoll_pwait_fn real_epoll_pwait;
static epoll_pwait2_fn real_epoll_pwait2;

/* route.c: user mode and fd names a nowait ring (a bitmap load if not). */
int nw_preload_ring_read(int fd);

struct reg {
	int epfd;    /* -1: a free slot */
	int ring_fd; /* the number registered; -1 once the program closed it */
	int pollfd;  /* ours, in the program's set */
	uint32_t gen;
	uint32_t events; /* the program's */
	epoll_data_t data;
	bool armed; /* EPOLLONESHOT: false after a report, until a MOD */
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reg regs[REG_MAX];
static unsigned int nr_reg_slots; /* slots ever used, under reg_lock */
static unsigned int nr_regs;	  /* atomic: the fast path's one load */
/* This thread holds reg_lock: the close hook must not take it again. */
static __thread int rd_busy;
/* Epoll fds below EPFD_BITS with a registration (atomic; else a scan). */
#define EPFD_BITS 65536
static unsigned long epfd_bits[EPFD_BITS / (8 * sizeof(long))];

static void epfd_mark(int epfd, bool on)
{
	unsigned long bit = 1UL << (epfd % (8 * sizeof(long)));
	unsigned long *w = &epfd_bits[epfd / (8 * sizeof(long))];

	/* The engine's multishot polls on epfd: EPOLL_URING_WAKE's effect. */
	nowait_hook_uring_wake_fd(epfd, on);
	if ((unsigned int)epfd >= EPFD_BITS)
		return;
	if (on)
		__atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(w, ~bit, __ATOMIC_RELAXED);
}

/*
 * reg_lock, marking the thread: what the engine closes under it (the
 * fds of nowait_ring_pollfd's own, a pollfd) comes back through the
 * close interposer to nw_readiness_fd_range_closing.
 */
static void reg_lock_take(void)
{
	pthread_mutex_lock(&reg_lock);
	rd_busy++;
}

static void reg_lock_drop(void)
{
	rd_busy--;
	pthread_mutex_unlock(&reg_lock);
}

static void resolve(void)
{
	real_poll = (poll_fn)dlsym(RTLD_NEXT, "poll");
	real_ppoll = (ppoll_fn)dlsym(RTLD_NEXT, "ppoll");
	real_select = (select_fn)dlsym(RTLD_NEXT, "select");
	real_pselect = (pselect_fn)dlsym(RTLD_NEXT, "pselect");
	real_epoll_ctl = (epoll_ctl_fn)dlsym(RTLD_NEXT, "epoll_ctl");
	real_epoll_wait = (epoll_wait_fn)dlsym(RTLD_NEXT, "epoll_wait");
	real_epoll_pwait = (epoll_pwait_fn)dlsym(RTLD_NEXT, "epoll_pwait");
	real_epoll_pwait2 = (epoll_pwait2_fn)dlsym(RTLD_NEXT, "epoll_pwait2");
}

#define ENSURE(fn)                              \
	do {                                    \
		if (__builtin_expect(!(fn), 0)) \
			resolve();              \
	} while (0)

static int fail(int err)
{
	errno = err;
	return -1;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The time left until deadline (-1: none) as a timespec; false: none left. */
static bool time_left(int64_t deadline, struct timespec *ts)
{
	int64_t left;

	if (deadline < 0)
		return true;
	left = deadline - now_ns();
	if (left < 0)
		left = 0;
	ts->tv_sec = left / 1000000000;
	ts->tv_nsec = left % 1000000000;
	return left > 0;
}

static int64_t deadline_of(const struct timespec *ts)
{
	if (!ts)
		return -1;
	return now_ns() + (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* ---- poll and ppoll ------------------------------------------------------ */

/* What poll reports of ring fd (or pollfd) fd for events. */
static short ring_revents(int fd, short events)
{
	int mask = nowait_ring_poll_mask(fd);

	if (mask < 0)
		return POLLNVAL;
	return (short)(mask & (events | POLLERR | POLLHUP));
}

/*
 * Fill fds[]'s revents: the ring entries (ring[i] >= 0: the fd to ask, a
 * ring fd or its pollfd) from the mask, the others from w[]. The count.
 */
static int merge(struct pollfd *fds, const struct pollfd *w, nfds_t n,
		 const int *ring)
{
	int count = 0;

	for (nfds_t i = 0; i < n; i++) {
		if (ring[i] >= 0)
			fds[i].revents = ring_revents(ring[i], fds[i].events);
		else
			fds[i].revents = w[i].revents;
		count += fds[i].revents != 0;
	}
	return count;
}

/* Is a ring entry of fds ready by its mask? */
static bool any_ring_ready(const struct pollfd *fds, nfds_t n, const int *ring)
{
	for (nfds_t i = 0; i < n; i++)
		if (ring[i] >= 0 && ring_revents(ring[i], fds[i].events))
			return true;
	return false;
}

/* The answer when a ring is ready: the others polled without a wait. */
static int answer_now(struct pollfd *fds, struct pollfd *w, nfds_t n,
		      const int *ring)
{
	static const struct timespec zero;

	for (nfds_t i = 0; i < n; i++) {
		w[i] = fds[i];
		if (ring[i] >= 0)
			w[i].fd = -1;
	}
	if (real_ppoll(w, n, &zero, NULL) < 0)
		return -1;
	return merge(fds, w, n, ring);
}

static void drain(int fd)
{
	eventfd_t v;

	eventfd_read(fd, &v);
}

/*
 * Sleep with a pollfd of each ring entry in its place (ring[i]: the
 * pollfd), until something wanted is ready or deadline. The pollfds are
 * open already: each round drains them, then reads the masks, then
 * sleeps, so a CQE posted after the look ends the sleep.
 */
static int sleep_rounds(struct pollfd *fds, struct pollfd *w, nfds_t n,
			const int *ring, int64_t deadline,
			const sigset_t *sigmask)
{
	struct timespec left;
	bool more;
	int r;

	for (;;) {
		for (nfds_t i = 0; i < n; i++)
			if (ring[i] >= 0)
				drain(ring[i]);
		if (any_ring_ready(fds, n, ring))
			return answer_now(fds, w, n, ring);
		for (nfds_t i = 0; i < n; i++) {
			w[i] = fds[i];
			if (ring[i] >= 0) {
				w[i].fd = ring[i];
				w[i].events = POLLIN;
			}
		}
		more = time_left(deadline, &left);
		r = real_ppoll(w, n, deadline < 0 ? NULL : &left, sigmask);
		if (r < 0)
			return -1;
		r = merge(fds, w, n, ring);
		if (r > 0 || !more)
			return r;
	}
}

/* poll over fds with at least one ring fd; ring[] and w[] are scratch. */
static int poll_rings(struct pollfd *fds, nfds_t n, int *ring, struct pollfd *w,
		      const struct timespec *ts, const sigset_t *sigmask)
{
	int64_t deadline = deadline_of(ts);
	int r, err;

	for (nfds_t i = 0; i < n; i++)
		ring[i] = nw_preload_ring_read(fds[i].fd) ? fds[i].fd : -1;
	if (any_ring_ready(fds, n, ring) || (ts && !ts->tv_sec && !ts->tv_nsec))
		return answer_now(fds, w, n, ring);
	r = 0;
	for (nfds_t i = 0; i < n && !r; i++) {
		if (ring[i] < 0)
			continue;
		ring[i] = nowait_ring_pollfd(fds[i].fd);
		if (ring[i] < 0) {
			ring[i] = fds[i].fd;
			r = -1;
		}
	}
	/* No pollfd (no fd left): answer as if from the mask alone. */
	r = r ? answer_now(fds, w, n, ring)
	      : sleep_rounds(fds, w, n, ring, deadline, sigmask);
	err = errno;
	for (nfds_t i = 0; i < n; i++)
		if (ring[i] >= 0 && ring[i] != fds[i].fd)
			nowait_ring_pollfd_close(ring[i]);
	errno = err;
	return r;
}

static bool has_ring(const struct pollfd *fds, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (fds[i].fd >= 0 && nw_preload_ring_read(fds[i].fd))
			return true;
	return false;
}

static int do_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		    const sigset_t *sigmask)
{
	struct pollfd w_stack[POLL_ONSTACK], *w = w_stack;
	int ring_stack[POLL_ONSTACK], *ring = ring_stack;
	int r;

	if (n > POLL_ONSTACK) {
		w = malloc(n * sizeof(*w));
		ring = malloc(n * sizeof(*ring));
		if (!w || !ring) {
			free(w);
			free(ring);
			return fail(ENOMEM);
		}
	}
	r = poll_rings(fds, n, ring, w, ts, sigmask);
	if (n > POLL_ONSTACK) {
		int err = errno;

		free(w);
		free(ring);
		errno = err;
	}
	return r;
}

PUBLIC int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	struct timespec ts;

	ENSURE(real_poll);
	if (__builtin_expect(!has_ring(fds, n), 1))
		return real_poll(fds, n, timeout_ms);
	ts.tv_sec = timeout_ms / 1000;
	ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
	return do_ppoll(fds, n, timeout_ms < 0 ? NULL : &ts, NULL);
}

PUBLIC int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		 const sigset_t *sigmask)
{
	ENSURE(real_ppoll);
	if (__builtin_expect(!has_ring(fds, n), 1))
		return real_ppoll(fds, n, ts, sigmask);
	if (ts &&
	    (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000))
		return fail(EINVAL);
	return do_ppoll(fds, n, ts, sigmask);
}

/* _FORTIFY_SOURCE builds call these for poll() and ppoll(). */
PUBLIC int __poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms,
		      size_t fdslen);
PUBLIC int __poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms,
		      size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();
	return poll(fds, n, timeout_ms);
}

PUBLIC int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		       const sigset_t *sigmask, size_t fdslen);
PUBLIC int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		       const sigset_t *sigmask, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();
	return ppoll(fds, n, ts, sigmask);
}

/* ---- select and pselect: the same, through a pollfd array ---------------- */

#define SEL_IN	(POLLIN | POLLRDNORM | POLLRDBAND | POLLHUP | POLLERR)
#define SEL_OUT (POLLOUT | POLLWRNORM | POLLWRBAND | POLLERR)

static bool sets_have_ring(int nfds, fd_set *r, fd_set *w, fd_set *e)
{
	for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++)
		if (((r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w)) ||
		     (e && FD_ISSET(fd, e))) &&
		    nw_preload_ring_read(fd))
			return true;
	return false;
}

/* The sets as pollfds (the kernel's select asks what poll would). */
static nfds_t sets_to_poll(int nfds, fd_set *r, fd_set *w, fd_set *e,
			   struct pollfd *p)
{
	nfds_t n = 0;

	for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++) {
		short ev = 0;

		if (r && FD_ISSET(fd, r))
			ev |= POLLIN | POLLRDNORM | POLLRDBAND;
		if (w && FD_ISSET(fd, w))
			ev |= POLLOUT | POLLWRNORM | POLLWRBAND;
		if (e && FD_ISSET(fd, e))
			ev |= POLLPRI;
		if (ev)
			p[n++] = (struct pollfd){.fd = fd, .events = ev};
	}
	return n;
}

/* poll's answer back into the sets: the count of bits, or -1 (EBADF). */
static int poll_to_sets(const struct pollfd *p, nfds_t n, fd_set *r, fd_set *w,
			fd_set *e)
{
	int count = 0;

	for (nfds_t i = 0; i < n; i++)
		if (p[i].revents & POLLNVAL)
			return fail(EBADF);
	for (nfds_t i = 0; i < n; i++) {
		int fd = p[i].fd;
		short rv = p[i].revents;

		if (r && FD_ISSET(fd, r) && !(rv & SEL_IN))
			FD_CLR(fd, r);
		if (w && FD_ISSET(fd, w) && !(rv & SEL_OUT))
			FD_CLR(fd, w);
		if (e && FD_ISSET(fd, e) && !(rv & POLLPRI))
			FD_CLR(fd, e);
		count += (r && FD_ISSET(fd, r)) + (w && FD_ISSET(fd, w)) +
			 (e && FD_ISSET(fd, e));
	}
	return count;
}

static int select_rings(int nfds, fd_set *r, fd_set *w, fd_set *e,
			const struct timespec *ts, const sigset_t *sigmask)
{
	struct pollfd p[FD_SETSIZE];
	nfds_t n;
	int ret;

	if (nfds < 0)
		return fail(EINVAL);
	n = sets_to_poll(nfds, r, w, e, p);
	ret = do_ppoll(p, n, ts, sigmask);
	if (ret < 0)
		return ret;
	return poll_to_sets(p, n, r, w, e);
}

PUBLIC int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	struct timespec ts;
	int64_t deadline;
	int ret;

	ENSURE(real_select);
	if (__builtin_expect(!sets_have_ring(nfds, r, w, e), 1))
		return real_select(nfds, r, w, e, tv);
	if (tv && (tv->tv_sec < 0 || tv->tv_usec < 0))
		return fail(EINVAL);
	if (tv) {
		ts.tv_sec = tv->tv_sec + tv->tv_usec / 1000000;
		ts.tv_nsec = (tv->tv_usec % 1000000) * 1000;
	}
	deadline = deadline_of(tv ? &ts : NULL);
	ret = select_rings(nfds, r, w, e, tv ? &ts : NULL, NULL);
	if (tv) {
		/* Linux's select leaves the time not slept in *tv. */
		time_left(deadline, &ts);
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return ret;
}

PUBLIC int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e,
		   const struct timespec *ts, const sigset_t *sigmask)
{
	ENSURE(real_pselect);
	if (__builtin_expect(!sets_have_ring(nfds, r, w, e), 1))
		return real_pselect(nfds, r, w, e, ts, sigmask);
	if (ts &&
	    (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000))
		return fail(EINVAL);
	return select_rings(nfds, r, w, e, ts, sigmask);
}

/* ---- epoll --------------------------------------------------------------- */

static uint64_t tag_of(unsigned int i)
{
	return TAG_MAGIC | ((uint64_t)(regs[i].gen & 0xffffff) << 24) | i;
}

/* The live registration a tag names, or NULL. Under reg_lock. */
static struct reg *reg_of_tag(int epfd, uint64_t tag)
{
	unsigned int i = tag & 0xffffff;
	struct reg *g;

	if (i >= nr_reg_slots)
		return NULL;
	g = &regs[i];
	if (g->epfd != epfd || tag != tag_of(i))
		return NULL;
	return g;
}

/* The registration of ring fd fd in epfd, or NULL. Under reg_lock. */
static struct reg *reg_find(int epfd, int fd)
{
	for (unsigned int i = 0; i < nr_reg_slots; i++)
		if (regs[i].epfd == epfd && regs[i].ring_fd == fd)
			return &regs[i];
	return NULL;
}

/* Drop registration g (its pollfd leaves the set). Under reg_lock. */
static void reg_drop(struct reg *g, bool del)
{
	int epfd = g->epfd;

	if (del)
		real_epoll_ctl(g->epfd, EPOLL_CTL_DEL, g->pollfd, NULL);
	nowait_ring_pollfd_close(g->pollfd);
	g->epfd = -1;
	g->gen++;
	__atomic_sub_fetch(&nr_regs, 1, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < nr_reg_slots; i++)
		if (regs[i].epfd == epfd)
			return;
	epfd_mark(epfd, false);
}

/* A wake-up of g's pollfd for the next epoll_wait to look at g. */
static void reg_kick(struct reg *g)
{
	eventfd_write(g->pollfd, 1);
}

/*
 * After ADD or MOD: the kernel polls the file then, and a ready one is
 * reported (and wakes a waiter). g's pollfd is in the set already, so a
 * post after this look is an edge of its own. Under reg_lock.
 */
static void reg_look(struct reg *g)
{
	int mask = nowait_ring_poll_mask(g->pollfd);

	if (mask > 0 && (mask & (g->events | EPOLLERR | EPOLLHUP)))
		reg_kick(g);
}

static int reg_add(int epfd, int fd, const struct epoll_event *ev)
{
	struct epoll_event mine = {.events = EPOLLIN | EPOLLET};
	unsigned int i;
	int pfd;

	for (i = 0; i < nr_reg_slots && regs[i].epfd >= 0; i++)
		;
	if (i == REG_MAX)
		return -ENOSPC;
	pfd = nowait_ring_pollfd(fd);
	if (pfd < 0)
		return pfd;
	if (i == nr_reg_slots) {
		regs[i].epfd = -1;
		nr_reg_slots++;
	}
	mine.data.u64 = tag_of(i);
	if (real_epoll_ctl(epfd, EPOLL_CTL_ADD, pfd, &mine) < 0) {
		int err = errno;

		nowait_ring_pollfd_close(pfd);
		return -err;
	}
	regs[i] = (struct reg){.epfd = epfd,
			       .ring_fd = fd,
			       .pollfd = pfd,
			       .gen = regs[i].gen,
			       .events = ev->events,
			       .data = ev->data,
			       .armed = true};
	__atomic_add_fetch(&nr_regs, 1, __ATOMIC_RELAXED);
	epfd_mark(epfd, true);
	reg_look(&regs[i]);
	return 0;
}

/* Is epfd an epoll fd? 0, -EBADF or -EINVAL, as epoll_ctl checks it. */
static int epoll_kind(int epfd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", epfd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -EBADF;
	target[n] = 0;
	return strcmp(target, "anon_inode:[eventpoll]") ? -EINVAL : 0;
}

/* The kernel's EPOLLEXCLUSIVE_OK_BITS. */
#define EXCLUSIVE_OK                                                        \
	(EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP | EPOLLWAKEUP | EPOLLET | \
	 EPOLLEXCLUSIVE)

/* epoll_ctl on ring fd fd, in the kernel's order of checks. -errno. */
static int ring_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct epoll_event e = {0};
	struct reg *g;
	int ret;

	if (op != EPOLL_CTL_DEL) {
		if (!ev)
			return -EFAULT;
		e = *ev;
	}
	ret = epoll_kind(epfd);
	if (ret)
		return ret;
	if (op != EPOLL_CTL_DEL && (e.events & EPOLLEXCLUSIVE) &&
	    (op == EPOLL_CTL_MOD ||
	     (op == EPOLL_CTL_ADD && (e.events & ~EXCLUSIVE_OK))))
		return -EINVAL;
	reg_lock_take();
	g = reg_find(epfd, fd);
	if (op == EPOLL_CTL_ADD) {
		ret = g ? -EEXIST : reg_add(epfd, fd, &e);
	} else if (op == EPOLL_CTL_MOD) {
		ret = !g ? -ENOENT : (g->events & EPOLLEXCLUSIVE) ? -EINVAL : 0;
		if (!ret) {
			g->events = e.events;
			g->data = e.data;
			g->armed = true;
			reg_look(g);
		}
	} else if (op == EPOLL_CTL_DEL) {
		ret = g ? 0 : -ENOENT;
		if (g)
			reg_drop(g, true);
	} else {
		ret = -EINVAL;
	}
	reg_lock_drop();
	return ret;
}

PUBLIC int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	int ret;

	ENSURE(real_epoll_ctl);
	if (__builtin_expect(!nw_preload_ring_read(fd), 1)) {
		ret = real_epoll_ctl(epfd, op, fd, ev);
		/* EPERM: a file epoll cannot poll, maybe a ring fd not seen. */
		if (ret == 0 || errno != EPERM ||
		    !nowait_hook_ring_fd_learn(fd))
			return ret;
	}
	ret = ring_epoll_ctl(epfd, op, fd, ev);
	return ret < 0 ? fail(-ret) : ret;
}

/*
 * A tagged event of g's pollfd: what to report, into *out, or false
 * (spurious, disarmed, or the ring is gone). Under reg_lock.
 */
static bool reg_event(struct reg *g, struct epoll_event *out)
{
	int mask;

	if (!g->armed)
		return false;
	if (g->ring_fd < 0 &&
	    nowait_hook_ring_pollfd_referenced(g->pollfd) <= 0) {
		/* The kernel releases the file, and the registration with it. */
		reg_drop(g, true);
		return false;
	}
	mask = nowait_ring_poll_mask(g->pollfd);
	if (mask < 0)
		return false;
	mask &= g->events | EPOLLERR | EPOLLHUP;
	if (!mask)
		return false;
	out->events = (uint32_t)mask;
	out->data = g->data;
	if (g->events & EPOLLONESHOT)
		g->armed = false;
	else if (!(g->events & EPOLLET))
		reg_kick(g); /* level-triggered: look again at the next wait */
	return true;
}

/* Translate what the real wait returned: the count left to report. */
static int translate(int epfd, struct epoll_event *ev, int n)
{
	int k = 0;

	reg_lock_take();
	for (int i = 0; i < n; i++) {
		struct reg *g;

		if ((ev[i].data.u64 & TAG_MASK) != TAG_MAGIC) {
			ev[k++] = ev[i];
			continue;
		}
		g = reg_of_tag(epfd, ev[i].data.u64);
		if (g && reg_event(g, &ev[k]))
			k++;
	}
	reg_lock_drop();
	return k;
}

/* One real wait of the kind the program called, for the time left. */
static int wait_once(int epfd, struct epoll_event *ev, int max,
		     int64_t deadline, const sigset_t *sigmask, bool pwait2)
{
	struct timespec left;
	int ms;

	time_left(deadline, &left);
	if (pwait2)
		return real_epoll_pwait2(epfd, ev, max,
					 deadline < 0 ? NULL : &left, sigmask);
	ms = deadline < 0 ? -1
			  : (int)(left.tv_sec * 1000 +
				  (left.tv_nsec + 999999) / 1000000);
	return real_epoll_pwait(epfd, ev, max, ms, sigmask);
}

/* The epoll_wait family on a set with ring fds: until a report or deadline. */
static int wait_rings(int epfd, struct epoll_event *ev, int max,
		      int64_t deadline, const sigset_t *sigmask, bool pwait2)
{
	struct timespec left;
	int n;

	for (;;) {
		bool more = time_left(deadline, &left);

		n = wait_once(epfd, ev, max, deadline, sigmask, pwait2);
		if (n <= 0)
			return n;
		n = translate(epfd, ev, n);
		if (n > 0 || !more)
			return n;
	}
}

static bool set_has_ring(int epfd)
{
	bool found = false;

	if (__builtin_expect(!__atomic_load_n(&nr_regs, __ATOMIC_RELAXED), 1))
		return false;
	if ((unsigned int)epfd < EPFD_BITS)
		return __atomic_load_n(&epfd_bits[epfd / (8 * sizeof(long))],
				       __ATOMIC_RELAXED) &
		       (1UL << (epfd % (8 * sizeof(long))));
	reg_lock_take();
	for (unsigned int i = 0; i < nr_reg_slots && !found; i++)
		found = regs[i].epfd == epfd;
	reg_lock_drop();
	return found;
}

PUBLIC int epoll_pwait(int epfd, struct epoll_event *ev, int max, int ms,
		       const sigset_t *sigmask)
{
	ENSURE(real_epoll_pwait);
	if (__builtin_expect(!set_has_ring(epfd), 1))
		return real_epoll_pwait(epfd, ev, max, ms, sigmask);
	return wait_rings(epfd, ev, max,
			  ms < 0 ? -1 : now_ns() + (int64_t)ms * 1000000,
			  sigmask, false);
}

PUBLIC int epoll_wait(int epfd, struct epoll_event *ev, int max, int ms)
{
	ENSURE(real_epoll_wait);
	if (__builtin_expect(!set_has_ring(epfd), 1))
		return real_epoll_wait(epfd, ev, max, ms);
	return epoll_pwait(epfd, ev, max, ms, NULL);
}

PUBLIC int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			const struct timespec *ts, const sigset_t *sigmask)
{
	ENSURE(real_epoll_pwait2);
	if (!real_epoll_pwait2)
		return fail(ENOSYS);
	if (__builtin_expect(!set_has_ring(epfd), 1))
		return real_epoll_pwait2(epfd, ev, max, ts, sigmask);
	if (ts &&
	    (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000))
		return fail(EINVAL);
	return wait_rings(epfd, ev, max, deadline_of(ts), sigmask, true);
}

/* ---- dup: the new number of a ring fd is a ring fd ----------------------- */

typedef int (*dup_fn)(int);
typedef int (*fcntl_fn)(int, int, ...);

static dup_fn real_dup;
static fcntl_fn real_fcntl, real_fcntl64;

/*
 * newfd is a copy of oldfd (dup, F_DUPFD, and pipespin.c's dup2 and dup3):
 * the engine learns that newfd names a ring, so that the bitmap behind
 * nowait_hook_is_ring_fd, this file's fast path, knows it too.
 */
void nw_readiness_dup(int oldfd, int newfd);
void nw_readiness_dup(int oldfd, int newfd)
{
	if (newfd >= 0 && oldfd != newfd && nw_preload_ring_read(oldfd))
		nowait_hook_ring_fd_learn(newfd);
}

PUBLIC int dup(int fd)
{
	int r;

	if (!real_dup)
		real_dup = (dup_fn)dlsym(RTLD_NEXT, "dup");
	r = real_dup(fd);
	nw_readiness_dup(fd, r);
	return r;
}

static int do_fcntl(fcntl_fn fn, int fd, int cmd, void *arg)
{
	int r = fn(fd, cmd, arg);

	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		nw_readiness_dup(fd, r);
	return r;
}

PUBLIC int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *); /* every argument fits a pointer's register */
	va_end(ap);
	if (!real_fcntl)
		real_fcntl = (fcntl_fn)dlsym(RTLD_NEXT, "fcntl");
	return do_fcntl(real_fcntl, fd, cmd, arg);
}

PUBLIC int fcntl64(int fd, int cmd, ...);
PUBLIC int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real_fcntl64)
		real_fcntl64 = (fcntl_fn)dlsym(RTLD_NEXT, "fcntl64");
	if (!real_fcntl64)
		return fcntl(fd, cmd, arg);
	return do_fcntl(real_fcntl64, fd, cmd, arg);
}

/* ---- the hooks of route.c ------------------------------------------------ */

/*
 * The program is about to close fd (route.c's nw_preload_fd_closing): an
 * epoll fd takes its registrations with it; a registered ring fd leaves
 * them in place, reporting as long as the ring has another fd or a
 * mapping (the kernel keys them by file; reg_event looks).
 */
void nw_readiness_fd_range_closing(unsigned int first, unsigned int last);
void nw_readiness_fd_range_closing(unsigned int first, unsigned int last)
{
	if (__builtin_expect(!__atomic_load_n(&nr_regs, __ATOMIC_RELAXED), 1) ||
	    rd_busy)
		return;
	ENSURE(real_epoll_ctl);
	reg_lock_take();
	for (unsigned int i = 0; i < nr_reg_slots; i++) {
		struct reg *g = &regs[i];

		if (g->epfd < 0)
			continue;
		if ((unsigned int)g->epfd >= first &&
		    (unsigned int)g->epfd <= last)
			reg_drop(g, false);
		else if (g->ring_fd >= 0 && (unsigned int)g->ring_fd >= first &&
			 (unsigned int)g->ring_fd <= last)
			g->ring_fd = -1;
	}
	reg_lock_drop();
}

static bool is_readiness_nr(long nr)
{
	switch (nr) {
	case SYS_poll:
	case SYS_ppoll:
	case SYS_select:
	case SYS_pselect6:
	case SYS_epoll_ctl:
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
		return true;
	}
	return false;
}

/* pselect6's sixth argument. */
struct sigset_arg {
	const sigset_t *ss;
	size_t len;
};

/*
 * route.c's syscall(): the readiness numbers go to the interposers above
 * (which pass to libc when no ring fd is involved). True when handled,
 * the result (-1 and errno on failure) in *res.
 */
bool nw_readiness_syscall(long nr, const long *a, long *res);
bool nw_readiness_syscall(long nr, const long *a, long *res)
{
	const struct sigset_arg *sa = (const void *)a[5];
	void *p1 = (void *)a[1], *p2 = (void *)a[2], *p3 = (void *)a[3];

	if (__builtin_expect(!is_readiness_nr(nr), 1))
		return false;
	if (nr == SYS_poll)
		*res = poll((void *)a[0], a[1], (int)a[2]);
	else if (nr == SYS_ppoll)
		*res = ppoll((void *)a[0], a[1], p2, p3);
	else if (nr == SYS_select)
		*res = select((int)a[0], p1, p2, p3, (void *)a[4]);
	else if (nr == SYS_pselect6)
		*res = pselect((int)a[0], p1, p2, p3, (void *)a[4],
			       sa ? sa->ss : NULL);
	else if (nr == SYS_epoll_ctl)
		*res = epoll_ctl((int)a[0], (int)a[1], (int)a[2], p3);
	else if (nr == SYS_epoll_wait)
		*res = epoll_wait((int)a[0], p1, (int)a[2], (int)a[3]);
	else if (nr == SYS_epoll_pwait)
		*res = epoll_pwait((int)a[0], p1, (int)a[2], (int)a[3],
				   (void *)a[4]);
	else
		*res = epoll_pwait2((int)a[0], p1, (int)a[2], p3, (void *)a[4]);
	return true;
}
