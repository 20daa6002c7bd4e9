/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_EPOLL_CTL (io_uring/epoll.c): ADD, MOD and DEL of pipes and
 * sockets on the program's epoll set, which epoll_wait then reports; the
 * prep checks (buf_index, splice_fd_in, the event copied unless DEL, a bad
 * pointer -EFAULT), the system call's own errors in the CQE, a failure
 * breaking its link, and the probe. A ring fd added to an epoll set gives
 * what the plain epoll_ctl gives on it (the kernel's ring fd is pollable;
 * nowait's is a memfd, -EPERM: readiness of the ring fd is another part);
 * every other error for a ring's fd is the kernel's, on both engines.
 */
#include <fcntl.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include "helpers.h"

static void prep_epctl(struct io_uring_sqe *sqe, int epfd, int op, int fd,
		       const void *ev, uint64_t user_data)
{
	sqe->opcode = IORING_OP_EPOLL_CTL;
	sqe->fd = epfd;
	sqe->len = (unsigned int)op;
	sqe->off = (uint64_t)(unsigned int)fd;
	sqe->addr = (uint64_t)(uintptr_t)ev;
	sqe->user_data = user_data;
}

/* One EPOLL_CTL through the ring: its CQE's res. */
static int epctl(struct t_ring *r, int epfd, int op, int fd, uint32_t events,
		 uint64_t data)
{
	struct epoll_event ev = {.events = events, .data.u64 = data};

	prep_epctl(t_get_sqe(r), epfd, op, fd, &ev, 7);
	return t_run(r, 7);
}

/* What epoll_wait reports now (no wait): the count, one event in *out. */
static int ready(int epfd, struct epoll_event *out)
{
	struct epoll_event evs[4];
	int n = epoll_wait(epfd, evs, 4, 0);

	T_ASSERT_GE(n, 0);
	if (n > 0)
		*out = evs[0];
	return n;
}

static void test_pipe(struct t_ring *r, int epfd)
{
	struct epoll_event ev;
	int p[2];
	char c;

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_ADD, p[0], EPOLLIN, 0x1234), 0);
	T_ASSERT_EQ(ready(epfd, &ev), 0);
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	T_ASSERT_EQ(ready(epfd, &ev), 1);
	T_ASSERT_EQ(ev.events, EPOLLIN);
	T_ASSERT_EQ(ev.data.u64, 0x1234);
	/* Twice: the system call's -EEXIST, in the CQE. */
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_ADD, p[0], EPOLLIN, 0), -EEXIST);

	/* MOD: new data, and the write end for EPOLLOUT too. */
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_MOD, p[0], EPOLLIN, 0x5678), 0);
	T_ASSERT_EQ(ready(epfd, &ev), 1);
	T_ASSERT_EQ(ev.data.u64, 0x5678);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_MOD, p[1], EPOLLOUT, 0), -ENOENT);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_ADD, p[1], EPOLLOUT, 0x9), 0);
	T_ASSERT_EQ(read(p[0], &c, 1), 1);
	T_ASSERT_EQ(ready(epfd, &ev), 1);
	T_ASSERT_EQ(ev.events, EPOLLOUT);
	T_ASSERT_EQ(ev.data.u64, 0x9);

	/* DEL: the event is not read (a bad pointer is fine), then gone. */
	prep_epctl(t_get_sqe(r), epfd, EPOLL_CTL_DEL, p[1], (void *)8, 8);
	T_ASSERT_EQ(t_run(r, 8), 0);
	T_ASSERT_EQ(write(p[1], "y", 1), 1);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_DEL, p[0], 0, 0), 0);
	T_ASSERT_EQ(ready(epfd, &ev), 0);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_DEL, p[0], 0, 0), -ENOENT);
	close(p[0]);
	close(p[1]);
}

static void test_socket(struct t_ring *r, int epfd)
{
	struct epoll_event ev;
	int s[2];

	t_tcp_pair(s);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_ADD, s[0],
			  EPOLLIN | EPOLLOUT | EPOLLET, 0xabc),
		    0);
	T_ASSERT_EQ(ready(epfd, &ev), 1);
	T_ASSERT_EQ(ev.events, EPOLLOUT);
	T_ASSERT_EQ(ev.data.u64, 0xabc);
	T_ASSERT_EQ(ready(epfd, &ev), 0); /* edge-triggered: reported once */
	T_ASSERT_EQ(send(s[1], "hi", 2, 0), 2);
	/* Loopback delivers at once, but give it a bounded number of looks. */
	for (int i = 0; i < 1000 && epoll_wait(epfd, &ev, 1, 10) == 0; i++)
		;
	T_ASSERT(ev.events & EPOLLIN);
	T_ASSERT_EQ(ev.data.u64, 0xabc);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_DEL, s[0], 0, 0), 0);
	close(s[0]);
	close(s[1]);
}

/* The prep checks, and the call's errors. */
static void test_errors(struct t_ring *r, int epfd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct io_uring_sqe *sqe;
	char path[] = "/tmp/nowait-epctl-XXXXXX";
	int p[2], file, closed, ep2;

	T_ASSERT_EQ(pipe(p), 0);
	file = mkstemp(path);
	T_ASSERT_GE(file, 0);
	unlink(path);
	closed = dup(p[0]);
	close(closed);

	sqe = t_get_sqe(r);
	prep_epctl(sqe, epfd, EPOLL_CTL_ADD, p[0], &ev, 1);
	sqe->buf_index = 1;
	T_ASSERT_EQ(t_run(r, 1), -EINVAL);
	sqe = t_get_sqe(r);
	prep_epctl(sqe, epfd, EPOLL_CTL_ADD, p[0], &ev, 2);
	sqe->splice_fd_in = 1;
	T_ASSERT_EQ(t_run(r, 2), -EINVAL);
	sqe = t_get_sqe(r);
	prep_epctl(sqe, epfd, EPOLL_CTL_ADD, p[0], &ev, 3);
	sqe->ioprio = 1;
	T_ASSERT_EQ(t_run(r, 3), -EINVAL);

	/* The event is read for every op but DEL: first -EFAULT, then op. */
	prep_epctl(t_get_sqe(r), epfd, EPOLL_CTL_ADD, p[0], (void *)8, 4);
	T_ASSERT_EQ(t_run(r, 4), -EFAULT);
	prep_epctl(t_get_sqe(r), epfd, 99, p[0], (void *)8, 5);
	T_ASSERT_EQ(t_run(r, 5), -EFAULT);
	T_ASSERT_EQ(epctl(r, epfd, 99, p[0], EPOLLIN, 0), -EINVAL);

	T_ASSERT_EQ(epctl(r, closed, EPOLL_CTL_ADD, p[0], EPOLLIN, 0), -EBADF);
	T_ASSERT_EQ(epctl(r, -1, EPOLL_CTL_ADD, p[0], EPOLLIN, 0), -EBADF);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_ADD, closed, EPOLLIN, 0), -EBADF);
	T_ASSERT_EQ(epctl(r, p[1], EPOLL_CTL_ADD, p[0], EPOLLIN, 0), -EINVAL);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_ADD, epfd, EPOLLIN, 0), -EINVAL);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_ADD, file, EPOLLIN, 0), -EPERM);
	/* EPOLLEXCLUSIVE cannot be MODded in. */
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_ADD, p[0], EPOLLIN, 0), 0);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_MOD, p[0],
			  EPOLLIN | EPOLLEXCLUSIVE, 0),
		    -EINVAL);
	/* An epoll set inside another. */
	ep2 = epoll_create1(EPOLL_CLOEXEC);
	T_ASSERT_GE(ep2, 0);
	T_ASSERT_EQ(epctl(r, ep2, EPOLL_CTL_ADD, epfd, EPOLLIN, 0), 0);
	T_ASSERT_EQ(epctl(r, ep2, EPOLL_CTL_DEL, epfd, 0, 0), 0);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_DEL, p[0], 0, 0), 0);
	close(ep2);
	close(file);
	close(p[0]);
	close(p[1]);
}

/* A failed EPOLL_CTL fails its link; the event is copied at submit. */
static void test_link_and_copy(struct t_ring *r, int epfd)
{
	struct epoll_event *ev, got;
	struct io_uring_sqe *sqe;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	sqe = t_get_sqe(r);
	prep_epctl(sqe, epfd, EPOLL_CTL_DEL, p[0], NULL, 10);
	sqe->flags |= IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(r), 11);
	T_ASSERT_EQ(t_submit(r), 2);
	t_expect_cqe(r, 10, -ENOENT);
	t_expect_cqe(r, 11, -ECANCELED);

	/* The event's memory is gone once submit returns. */
	ev = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(ev != MAP_FAILED);
	ev->events = EPOLLOUT;
	ev->data.u64 = 0x77;
	prep_epctl(t_get_sqe(r), epfd, EPOLL_CTL_ADD, p[1], ev, 12);
	T_ASSERT_EQ(t_submit(r), 1);
	munmap(ev, 4096);
	t_expect_cqe(r, 12, 0);
	T_ASSERT_EQ(ready(epfd, &got), 1);
	T_ASSERT_EQ(got.events, EPOLLOUT);
	T_ASSERT_EQ(got.data.u64, 0x77);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_DEL, p[1], 0, 0), 0);
	close(p[0]);
	close(p[1]);
}

/* The ring's own fd: whatever the plain system call says of it. */
static void test_ring_fd(struct t_ring *r, int epfd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int plain;

	plain = epoll_ctl(epfd, EPOLL_CTL_ADD, r->fd, &ev) < 0 ? -errno : 0;
	if (t_engine() == T_ENGINE_USER)
		T_ASSERT_EQ(plain, -EPERM); /* a memfd, not pollable */
	if (!plain)
		T_ASSERT_EQ(epoll_ctl(epfd, EPOLL_CTL_DEL, r->fd, NULL), 0);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_ADD, r->fd, EPOLLIN, 1), plain);
	if (!plain)
		T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_DEL, r->fd, 0, 0), 0);
}

/*
 * Every other answer for a ring's fd is the kernel's, whose ring file is
 * pollable: the checks after the poll test (epfd another file and a set,
 * EPOLLEXCLUSIVE's rules, the op) in do_epoll_ctl's order, the same on
 * both engines (diff-fuzz found nowait's -EPERM for them).
 */
static void test_ring_fd_errors(struct t_ring *r, int epfd)
{
	int p[2], closed;

	T_ASSERT_EQ(pipe(p), 0);
	closed = dup(p[0]);
	close(closed);
	/* The epoll fd: bad, no set, the ring itself. */
	T_ASSERT_EQ(epctl(r, closed, EPOLL_CTL_ADD, r->fd, EPOLLIN, 0), -EBADF);
	T_ASSERT_EQ(epctl(r, p[1], EPOLL_CTL_ADD, r->fd, EPOLLIN, 0), -EINVAL);
	T_ASSERT_EQ(epctl(r, p[1], 200, r->fd, EPOLLIN, 0), -EINVAL);
	T_ASSERT_EQ(epctl(r, p[1], EPOLL_CTL_DEL, r->fd, 0, 0), -EINVAL);
	T_ASSERT_EQ(epctl(r, r->fd, EPOLL_CTL_ADD, r->fd, EPOLLIN, 0), -EINVAL);
	T_ASSERT_EQ(epctl(r, r->fd, EPOLL_CTL_DEL, r->fd, 0, 0), -EINVAL);
	/* A set that does not hold it; an unknown op. */
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_DEL, r->fd, 0, 0), -ENOENT);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_MOD, r->fd, EPOLLIN, 0), -ENOENT);
	T_ASSERT_EQ(epctl(r, epfd, 200, r->fd, EPOLLIN, 0), -EINVAL);
	T_ASSERT_EQ(epctl(r, epfd, 0, r->fd, EPOLLIN, 0), -EINVAL);
	/* EPOLLEXCLUSIVE: never with MOD, on ADD only with its few bits. */
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_MOD, r->fd,
			  EPOLLIN | EPOLLEXCLUSIVE, 0),
		    -EINVAL);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_ADD, r->fd,
			  EPOLLIN | EPOLLPRI | EPOLLEXCLUSIVE, 0),
		    -EINVAL);
	T_ASSERT_EQ(epctl(r, epfd, EPOLL_CTL_ADD, r->fd,
			  EPOLLIN | EPOLLONESHOT | EPOLLEXCLUSIVE, 0),
		    -EINVAL);
	T_ASSERT_EQ(epctl(r, epfd, 200, r->fd, EPOLLIN | EPOLLEXCLUSIVE, 0),
		    -EINVAL);
	close(p[0]);
	close(p[1]);
}

static void test_probe(struct t_ring *r)
{
	struct {
		struct io_uring_probe hdr;
		struct io_uring_probe_op ops[256];
	} probe;

	memset(&probe, 0, sizeof(probe));
	T_ASSERT_EQ(t_register(r->fd, IORING_REGISTER_PROBE, &probe, 256), 0);
	T_ASSERT_GT(probe.hdr.ops_len, IORING_OP_EPOLL_CTL);
	T_ASSERT(probe.ops[IORING_OP_EPOLL_CTL].flags & IO_URING_OP_SUPPORTED);
}

int main(void)
{
	struct t_ring r;
	int epfd;

	t_require_engine();
	t_watchdog(60);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	T_ASSERT_GE(epfd, 0);
	test_probe(&r);
	test_pipe(&r, epfd);
	test_socket(&r, epfd);
	test_errors(&r, epfd);
	test_link_and_copy(&r, epfd);
	test_ring_fd(&r, epfd);
	test_ring_fd_errors(&r, epfd);
	close(epfd);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
