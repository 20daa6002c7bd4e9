/* SPDX-License-Identifier: MIT */
/*
 * nowait: io_uring in user space.
 *
 * The three functions below have the signatures and the semantics of the
 * io_uring_setup(2), io_uring_enter(2) and io_uring_register(2) system calls,
 * but run an engine inside the calling process on ordinary system calls.
 * They return -errno on failure, never -1.
 *
 * The returned ring fd is a memfd laid out at the kernel's mmap offsets
 * (IORING_OFF_SQ_RING, IORING_OFF_CQ_RING, IORING_OFF_SQES), so a program
 * maps it exactly as it maps a kernel ring, and liburing's
 * io_uring_queue_mmap() and inline helpers work on it.
 */
#ifndef NOWAIT_H
#define NOWAIT_H

#include <linux/io_uring.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The project's one version number (the Makefile reads it from here). */
#define NOWAIT_VERSION_MAJOR 0
#define NOWAIT_VERSION_MINOR 1
#define NOWAIT_VERSION_PATCH 0

/* io_uring_setup(2): returns the ring fd or -errno. */
int nowait_setup(unsigned int entries, struct io_uring_params *params);

/* io_uring_enter(2): returns SQEs consumed, 0, or -errno. */
int nowait_enter(int fd, unsigned int to_submit, unsigned int min_complete,
		 unsigned int flags, const void *arg, size_t argsz);

/* io_uring_register(2): returns >= 0 on success or -errno. */
int nowait_register(int fd, unsigned int opcode, void *arg,
		    unsigned int nr_args);

/*
 * nowait_fd_closing(fd): call it just before the program closes fd, or
 * makes the number name another file (dup2(2) or dup3(2) onto it).
 *
 * On the kernel a request holds the file, not the number: a read parked
 * on a pipe or a socket goes on waiting on that file after close(fd)
 * (for a socket, shutdown(2) wakes it), and a new file that gets the same
 * number is unrelated to it. The engine watches fds by number, and learns
 * of a close only through this call (the preload library, nowait-run,
 * makes it from its close, dup2, dup3 and close_range interposers; direct
 * users of the library call it themselves). Then every ring forgets what
 * it learnt of the number, so the next request on the new file is
 * watched at once, and the requests parked on fd keep its file open
 * under an fd of the engine's (closed with the last of them) and complete
 * as on the kernel.
 *
 * Without the call, what is parked on a reused number is found by a
 * periodic re-check of the watches (50 ms at first, backing off to 5 s)
 * and reissued, on the new file. Costs one load for an fd no ring has
 * seen. Safe from any thread; fds the engine never saw are ignored.
 */
void nowait_fd_closing(int fd);

/*
 * The readiness of a ring fd, for programs linked to the library. The
 * kernel's ring fd is pollable: POLLIN|POLLRDNORM while CQEs (or
 * overflowed CQEs, or a DEFER_TASKRUN ring's task work) wait,
 * POLLOUT|POLLWRNORM while the SQ has room, and its pollers wake at each
 * CQE post. A nowait ring fd is a memfd, which poll(2) and select(2)
 * always call ready and epoll_ctl(2) refuses (EPERM); these three calls
 * stand in for it (the preload library, nowait-run, uses them to make
 * poll, select and epoll on a ring fd work in unmodified programs).
 *
 * nowait_ring_pollfd(ring_fd): a new eventfd (nonblocking, close-on-exec)
 * that the engine writes at every CQ commit of the ring from this call
 * on, until nowait_ring_pollfd_close(pollfd). Each caller gets its own,
 * so draining it takes nothing from anyone else; put it in poll(2) or an
 * epoll set (EPOLLET is enough) in place of the ring fd. Returns the fd
 * or -errno (-EBADF, -EOPNOTSUPP when ring_fd is not a nowait ring).
 *
 * nowait_ring_poll_mask(fd): the ring's poll mask now (POLLIN,
 * POLLRDNORM, POLLOUT, POLLWRNORM), fd being the ring fd or one of its
 * pollfds (which keeps naming the ring after the program closed the ring
 * fd), or -errno.
 *
 * The protocol, without a lost wake-up: open the pollfd (the open is the
 * announcement), then loop { drain the pollfd (read(2) it; EAGAIN is
 * fine); mask = nowait_ring_poll_mask(); stop if mask has what is
 * wanted; sleep until the pollfd is readable }. A CQE posted after the
 * mask was read writes the pollfd, so the sleep ends; a wake-up with
 * nothing new (a commit whose CQEs were reaped already) just loops. Any
 * thread; keep the pollfd open across many waits if the waits are many.
 */
int nowait_ring_pollfd(int ring_fd);
int nowait_ring_pollfd_close(int pollfd);
int nowait_ring_poll_mask(int fd);

/* Library version, "MAJOR.MINOR.PATCH". */
const char *nowait_version(void);

/* True when the library is at least MAJOR.MINOR. */
int nowait_version_check(int major, int minor);

#ifdef __cplusplus
}
#endif

#endif /* NOWAIT_H */
