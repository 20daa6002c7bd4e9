/* SPDX-License-Identifier: MIT */
/*
 * The readiness backend: all epoll calls of the engine live here, behind
 * the few functions of loop.h (the shape of Redis' ae_epoll.c). Each fd is
 * added once, edge-triggered for in and out together, and stays until its
 * file goes away; arming a request then costs no system call of its own.
 * Runs on whichever thread drives the ring's reactor (poll.c). The
 * program's own epoll sets are reached from here too (nw_loop_ctl,
 * nw_loop_wait_user).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <poll.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include "fdhigh.h"
#include "loop.h"
#include "util.h"

_Static_assert(NW_POLLIN == EPOLLIN && NW_POLLOUT == EPOLLOUT &&
		       NW_POLLERR == EPOLLERR && NW_POLLHUP == EPOLLHUP &&
		       NW_POLLPRI == EPOLLPRI && NW_POLLRDHUP == EPOLLRDHUP,
	       "NW_POLL* are the epoll bits");
_Static_assert(sizeof(struct epoll_event) == NW_EP_EVENT_SIZE,
	       "struct nw_ep_event is the system call's event");

static int loop_init(struct nw_loop *loop)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET};

	loop->epfd = nw_fd_hide(epoll_create1(EPOLL_CLOEXEC));
	if (loop->epfd < 0)
		return -errno;
	loop->wake_fd = nw_fd_hide(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (loop->wake_fd < 0)
		goto err;
	ev.data.ptr = NULL;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->wake_fd, &ev) < 0)
		goto err;
	return 0;
err:
	nw_loop_free(loop);
	return -errno;
}

int nw_loop_ensure(struct nw_loop *loop)
{
	int ret;

	if (loop->ready)
		return 0;
	ret = loop_init(loop);
	if (!ret)
		__atomic_store_n(&loop->ready, true, __ATOMIC_RELEASE);
	return ret;
}

void nw_loop_free(struct nw_loop *loop)
{
	if (loop->wake_fd >= 0)
		close(loop->wake_fd);
	if (loop->epfd >= 0)
		close(loop->epfd);
	loop->wake_fd = loop->epfd = -1;
}

/*
 * The epoll data of io's watch: its address, and io->gen in the top 16
 * bits, which a user-space address leaves clear (47 or 48 bits of
 * virtual address unless mmap is asked for more; the engine never asks).
 */
#define NW_LOOP_GEN_SHIFT 48
static uint64_t io_data(const struct nw_io *io)
{
	NW_BUG_ON((uintptr_t)io >> NW_LOOP_GEN_SHIFT);
	return (uintptr_t)io | (uint64_t)io->gen << NW_LOOP_GEN_SHIFT;
}

int nw_loop_add(struct nw_loop *loop, int fd, struct nw_io *io)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLOUT | EPOLLPRI | EPOLLRDHUP | EPOLLET,
		.data.u64 = io_data(io),
	};

	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) == 0)
		return 0;
	if (errno == EEXIST)
		return 1;
	return -errno;
}

int nw_loop_mod(struct nw_loop *loop, int fd, struct nw_io *io)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLOUT | EPOLLPRI | EPOLLRDHUP | EPOLLET,
		.data.u64 = io_data(io),
	};

	return epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ev) ? -errno : 0;
}

void nw_loop_del(struct nw_loop *loop, int fd)
{
	epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
}

/*
 * epoll_pwait2 takes a timespec and a mask, atomically (5.11+). Where it
 * is missing (an older kernel, valgrind), epoll_pwait with the timeout in
 * milliseconds, rounded up so that a deadline is never reported early.
 */
static int ep_pwait(int epfd, struct epoll_event *ev, int max,
		    const struct timespec *timeout, const sigset_t *sig)
{
	static bool no_pwait2;
	long long ms;
	int n;

	if (!__atomic_load_n(&no_pwait2, __ATOMIC_RELAXED)) {
		n = (int)syscall(SYS_epoll_pwait2, epfd, ev, max, timeout, sig,
				 (size_t)(_NSIG / 8));
		if (n >= 0 || errno != ENOSYS)
			return n;
		__atomic_store_n(&no_pwait2, true, __ATOMIC_RELAXED);
	}
	ms = -1;
	if (timeout) {
		ms = timeout->tv_sec * 1000LL +
		     (timeout->tv_nsec + 999999) / 1000000;
		if (ms > INT_MAX)
			ms = INT_MAX;
	}
	return (int)syscall(SYS_epoll_pwait, epfd, ev, max, (int)ms, sig,
			    (size_t)(_NSIG / 8));
}

/*
 * A sleep with a mask waits in ppoll on the epoll fd, then harvests
 * without waiting. An ignored signal the mask lets in (one held pending
 * by a waiter: SIGCHLD at its default, SIGPIPE at SIG_IGN) makes
 * epoll_pwait2 say EINTR, as epoll never restarts; ppoll's
 * ERESTARTNOHAND restarts when no handler ran, so only a signal with a
 * handler ends the sleep (-EINTR), as in the kernel's io_uring wait,
 * without asking any disposition. (One exception: a stop signal at its
 * default, then SIGCONT, restarts the ppoll and the wait goes on, where
 * the kernel's wait says -EINTR.) A look (zero timeout) never reports a
 * signal: one epoll_pwait2. Returns 1 to go on and harvest, else what
 * ended the sleep (0: its timeout; -errno).
 */
static int sleep_masked(int epfd, const struct timespec **timeout,
			const sigset_t **sig)
{
	static const struct timespec zero;
	struct pollfd p = {.fd = epfd, .events = POLLIN};
	int r;

	if (!*sig || (*timeout && !(*timeout)->tv_sec && !(*timeout)->tv_nsec))
		return 1;
	r = ppoll(&p, 1, *timeout, *sig);
	if (r < 0)
		return -errno;
	*timeout = &zero;
	*sig = NULL;
	return r;
}

int nw_loop_wait(struct nw_loop *loop, struct nw_loop_event *out, int max,
		 const struct timespec *timeout, const sigset_t *sig)
{
	struct epoll_event ev[NW_LOOP_BATCH];
	int n, i;

	if (max > NW_LOOP_BATCH)
		max = NW_LOOP_BATCH;
	n = sleep_masked(loop->epfd, &timeout, &sig);
	if (n <= 0)
		return n;
	n = ep_pwait(loop->epfd, ev, max, timeout, sig);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		uint64_t d = ev[i].data.u64;

		out[i].io =
			(struct nw_io *)(uintptr_t)(d &
						    ((1ULL
						      << NW_LOOP_GEN_SHIFT) -
						     1));
		out[i].gen = (unsigned short)(d >> NW_LOOP_GEN_SHIFT);
		out[i].events = ev[i].events;
		if (!d) {
			uint64_t v;

			if (read(loop->wake_fd, &v, sizeof(v)) < 0)
				(void)0; /* already drained by another */
		}
	}
	return n;
}

void nw_loop_wake(struct nw_loop *loop)
{
	uint64_t one = 1;

	if (write(loop->wake_fd, &one, sizeof(one)) < 0)
		(void)0; /* a full counter already wakes */
}

int nw_loop_anon_fd(void)
{
	static int anon = -1;
	int cur = __atomic_load_n(&anon, __ATOMIC_ACQUIRE), fd;

	if (cur >= 0)
		return cur;
	fd = nw_fd_hide(epoll_create1(EPOLL_CLOEXEC));
	if (fd < 0)
		return -errno;
	if (__atomic_compare_exchange_n(&anon, &cur, fd, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return fd;
	close(fd); /* another thread made it first */
	return cur;
}

bool nw_loop_ctl_has_event(int op)
{
	return op != EPOLL_CTL_DEL;
}

int nw_loop_ctl(int epfd, int op, int fd, const struct nw_ep_event *ev)
{
	struct epoll_event e;

	memcpy(&e, ev, sizeof(e));
	return epoll_ctl(epfd, op, fd, &e) < 0 ? -errno : 0;
}

/*
 * The epoll_ctl checks that follow the target's poll test (EPERM for a
 * memfd), in the kernel's order, for a target that is pollable and no
 * epoll set (do_epoll_ctl): the epfd must be another file and a set, then
 * the EPOLLEXCLUSIVE rules, then the op. A DEL of the engine's anon
 * epoll fd, never in a program's set, tells whether epfd is a set
 * (ENOENT) without touching it; a ring's fd as epfd fails there too, as
 * the kernel's f == tf does.
 */
int nw_loop_ctl_ring(int epfd, int op, const struct nw_ep_event *ev)
{
	const uint32_t ok = EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP |
			    EPOLLWAKEUP | EPOLLET | EPOLLEXCLUSIVE;
	int anon = nw_loop_anon_fd();
	uint32_t events;

	if (anon < 0)
		return -EPERM;
	if (epoll_ctl(epfd, EPOLL_CTL_DEL, anon, NULL) == 0)
		return -EINVAL; /* epfd is the anon fd itself: f == tf */
	if (errno != ENOENT)
		return -errno; /* EBADF, EINVAL */
	memcpy(&events, ev->bytes, sizeof(events));
	if (op != EPOLL_CTL_DEL && (events & EPOLLEXCLUSIVE) &&
	    (op == EPOLL_CTL_MOD || (op == EPOLL_CTL_ADD && (events & ~ok))))
		return -EINVAL;
	switch (op) {
	case EPOLL_CTL_ADD:
		return -EPERM; /* no set can hold the memfd */
	case EPOLL_CTL_DEL:
	case EPOLL_CTL_MOD:
		return -ENOENT; /* nor does one */
	}
	return -EINVAL;
}

int nw_loop_wait_user(int epfd, void *events, int maxevents, bool block)
{
	int n = epoll_wait(epfd, events, maxevents, block ? -1 : 0);

	return n < 0 ? -errno : n;
}
