/* SPDX-License-Identifier: MIT */
/*
 * The fd numbers a program sees. The kernel's io_uring gives the program
 * one fd, the ring's, at the lowest free number, and keeps every other
 * file it uses without a number: after setup returns N the next open
 * returns N + 1, whatever the ring does meanwhile (a registered eventfd,
 * a parked read, a timeout, a poll on another ring, SQPOLL, registered
 * and direct files). The engine's own fds must stay out of that range, and
 * a program that closes one of its fds twice must not take one of them.
 * Every check here is also a fact of the kernel: the program's fds below
 * half the RLIMIT_NOFILE soft limit are exactly the ones it opened.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include "helpers.h"

#define MAX_FD 256

static bool inherited[MAX_FD]; /* open before main: not ours to check */
static bool mine[MAX_FD];      /* what the test opened and still holds */
static int scan_limit;	       /* fds below this are checked */

static int track(int fd)
{
	T_ASSERT_GE(fd, 0);
	T_ASSERT_LT(fd, MAX_FD);
	T_ASSERT(!mine[fd]);
	mine[fd] = true;
	return fd;
}

static void untrack_close(int fd)
{
	T_ASSERT(mine[fd]);
	mine[fd] = false;
	T_ASSERT_EQ(close(fd), 0);
}

static int open_null(void)
{
	return track(open("/dev/null", O_RDONLY | O_CLOEXEC));
}

/* What the next two opens return, without keeping them. */
static void next_two(int *a, int *b)
{
	*a = open("/dev/null", O_RDONLY | O_CLOEXEC);
	*b = open("/dev/null", O_RDONLY | O_CLOEXEC);
	T_ASSERT_GE(*a, 0);
	T_ASSERT_GE(*b, 0);
	close(*a);
	close(*b);
}

/* Every fd of the process below scan_limit is the program's own. */
static void check_fds(int line)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int fd, self;

	T_ASSERT(d != NULL);
	self = dirfd(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		if (fd == self || fd >= scan_limit)
			continue;
		if (fd >= MAX_FD || (!mine[fd] && !inherited[fd])) {
			fprintf(stderr, "line %d: fd %d is not the program's\n",
				line, fd);
			T_ASSERT(false);
		}
	}
	closedir(d);
}

static void snapshot_inherited(void)
{
	struct rlimit rl;
	int fd;

	T_ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 1024 && rl.rlim_max > rl.rlim_cur) {
		rl.rlim_cur = rl.rlim_max < 1024 ? rl.rlim_max : 1024;
		setrlimit(RLIMIT_NOFILE, &rl);
		T_ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	scan_limit = rl.rlim_cur / 2 > MAX_FD ? MAX_FD : (int)rl.rlim_cur / 2;
	for (fd = 0; fd < MAX_FD; fd++)
		inherited[fd] = fcntl(fd, F_GETFD) >= 0;
}

/*
 * Set up a ring and check it took the lowest free number; *next: the
 * number after it that was free before (what the next open must return).
 */
static void ring_init(struct t_ring *r, int *next)
{
	int want, after;

	next_two(&want, &after);
	T_ASSERT_EQ(t_ring_init(r, 8, NULL), 0);
	T_ASSERT_EQ(r->fd, want);
	track(r->fd);
	if (next)
		*next = after;
}

static void ring_exit(struct t_ring *r)
{
	mine[r->fd] = false;
	t_ring_exit(r);
}

static void prep_timeout(struct io_uring_sqe *sqe, struct __kernel_timespec *ts,
			 uint64_t ud)
{
	sqe->opcode = IORING_OP_TIMEOUT;
	sqe->fd = -1;
	sqe->addr = (uintptr_t)ts;
	sqe->len = 1;
	sqe->user_data = ud;
}

static void nop_round(struct t_ring *r, uint64_t ud)
{
	t_prep_nop(t_get_sqe(r), ud);
	T_ASSERT_EQ(t_run(r, ud), 0);
}

/* Setup returns the lowest free fd, a hole below the others included. */
static void test_plain(void)
{
	struct t_ring r;
	int a, b, c, next;

	a = open_null();
	b = open_null();
	untrack_close(a);
	ring_init(&r, &next);
	T_ASSERT_EQ(r.fd, a);
	nop_round(&r, 1);
	c = open_null();
	T_ASSERT_EQ(c, next);
	check_fds(__LINE__);
	untrack_close(c);
	untrack_close(b);
	ring_exit(&r);
	check_fds(__LINE__);
}

/* REGISTER_EVENTFD keeps a reference, not a number. */
static void test_eventfd(void)
{
	struct t_ring r;
	uint64_t v = 0;
	int efd, x, next, after;

	ring_init(&r, &next);
	efd = track(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	T_ASSERT_EQ(efd, next);
	next_two(&next, &after);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &efd, 1), 0);
	x = open_null();
	T_ASSERT_EQ(x, next);
	nop_round(&r, 2);
	T_ASSERT_EQ(read(efd, &v, sizeof(v)), sizeof(v));
	T_ASSERT_GE(v, 1);
	check_fds(__LINE__);
	/* The program's eventfd closed: the ring's reference still works. */
	untrack_close(efd);
	nop_round(&r, 3);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_EVENTFD, NULL, 0), 0);
	untrack_close(x);
	ring_exit(&r);
	check_fds(__LINE__);
}

/*
 * A read that must wait (nowait: the ring's epoll set and wake eventfd
 * appear now), with a double close by the program around it: the second
 * close finds nothing, and the read still completes.
 */
static void test_parked_read(void)
{
	struct io_uring_cqe cqe;
	struct t_ring r;
	char buf[8];
	int p[2], x, y;

	ring_init(&r, NULL);
	T_ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	track(p[0]);
	track(p[1]);
	x = open_null();
	untrack_close(x);
	t_prep_rw(t_get_sqe(&r), IORING_OP_READ, p[0], buf, sizeof(buf), 0, 4);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_wait_cqe_timeout(&r, &cqe, 20), -ETIME);
	errno = 0;
	T_ASSERT_EQ(close(x), -1);
	T_ASSERT_EQ(errno, EBADF);
	y = open_null();
	T_ASSERT_EQ(y, x);
	check_fds(__LINE__);
	T_ASSERT_EQ(write(p[1], "abc", 3), 3);
	t_expect_cqe(&r, 4, 3);
	T_ASSERT_EQ(memcmp(buf, "abc", 3), 0);
	/* Parked again after the double close: the engine still hears. */
	t_prep_rw(t_get_sqe(&r), IORING_OP_READ, p[0], buf, sizeof(buf), 0, 5);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_wait_cqe_timeout(&r, &cqe, 20), -ETIME);
	T_ASSERT_EQ(write(p[1], "de", 2), 2);
	t_expect_cqe(&r, 5, 2);
	untrack_close(y);
	untrack_close(p[0]);
	untrack_close(p[1]);
	ring_exit(&r);
	check_fds(__LINE__);
}

/* A timeout (nowait: a timerfd), waited for by this thread. */
static void test_timeout(void)
{
	struct __kernel_timespec ts = {0, 20000000};
	struct t_ring r;
	int x, y, next, after;

	ring_init(&r, &next);
	prep_timeout(t_get_sqe(&r), &ts, 6);
	T_ASSERT_EQ(t_submit(&r), 1);
	x = open_null();
	T_ASSERT_EQ(x, next);
	next_two(&next, &after);
	t_expect_cqe(&r, 6, -ETIME);
	y = open_null();
	T_ASSERT_EQ(y, next);
	check_fds(__LINE__);
	untrack_close(y);
	untrack_close(x);
	ring_exit(&r);
	check_fds(__LINE__);
}

static void *waiter_main(void *arg)
{
	struct t_ring *r = arg;
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 7);
	T_ASSERT_EQ(cqe.res, -ETIME);
	return NULL;
}

/* Another thread sleeps in enter (nowait: its own eventfd). */
static void test_thread_wait(void)
{
	struct __kernel_timespec ts = {0, 30000000};
	struct t_ring r;
	pthread_t th;
	int x, next;

	ring_init(&r, &next);
	prep_timeout(t_get_sqe(&r), &ts, 7);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(pthread_create(&th, NULL, waiter_main, &r), 0);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	x = open_null();
	T_ASSERT_EQ(x, next);
	check_fds(__LINE__);
	untrack_close(x);
	ring_exit(&r);
	check_fds(__LINE__);
}

/* POLL_ADD on another ring's fd (nowait: eventfds to watch it). */
static void test_ring_poll(void)
{
	struct t_ring a, b;
	int x, next, after;

	ring_init(&a, &next);
	ring_init(&b, NULL);
	T_ASSERT_EQ(b.fd, next);
	next_two(&next, &after);
	t_prep_poll_add(t_get_sqe(&a), b.fd, POLLIN, 0, 8);
	T_ASSERT_EQ(t_submit(&a), 1);
	t_expect_no_cqe(&a, 10);
	x = open_null();
	T_ASSERT_EQ(x, next);
	t_prep_nop(t_get_sqe(&b), 9);
	T_ASSERT_EQ(t_submit(&b), 1);
	T_ASSERT(t_expect_cqe(&a, 8, POLLIN) == 0);
	check_fds(__LINE__);
	untrack_close(x);
	ring_exit(&b);
	ring_exit(&a);
	check_fds(__LINE__);
}

/* SQPOLL: the poller thread is no fd either. */
static void test_sqpoll(void)
{
	struct io_uring_params p;
	struct t_ring r;
	int want, next, ret, x;

	next_two(&want, &next);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	p.sq_thread_idle = 20;
	ret = t_ring_init(&r, 8, &p);
	if (ret < 0) {
		fprintf(stderr, "[%s] SQPOLL setup %d: skipped\n",
			t_engine_name(), ret);
		return;
	}
	T_ASSERT_EQ(r.fd, want);
	track(r.fd);
	/* The poller may be asleep already (idle 20 ms): always wake it. */
	t_prep_nop(t_get_sqe(&r), 10);
	t_ring_flush(&r);
	T_ASSERT_EQ(t_enter(r.fd, 1, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0), 1);
	t_expect_cqe(&r, 10, 0);
	x = open_null();
	T_ASSERT_EQ(x, next);
	check_fds(__LINE__);
	untrack_close(x);
	ring_exit(&r);
	check_fds(__LINE__);
}

/* Registered files and a direct OPENAT hold files, not numbers. */
static void test_files(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int fds[2] = {-1, -1}, x, y;

	ring_init(&r, NULL);
	x = open_null();
	fds[0] = x;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, fds, 2), 0);
	untrack_close(x);
	sqe = t_get_sqe(&r);
	sqe->opcode = IORING_OP_OPENAT;
	sqe->fd = AT_FDCWD;
	sqe->addr = (uintptr_t) "/dev/null";
	sqe->open_flags = O_RDONLY;
	sqe->file_index = 2;
	sqe->user_data = 11;
	T_ASSERT_EQ(t_run(&r, 11), 0);
	y = open_null();
	T_ASSERT_EQ(y, x);
	check_fds(__LINE__);
	untrack_close(y);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_FILES, NULL, 0), 0);
	ring_exit(&r);
	check_fds(__LINE__);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	snapshot_inherited();
	if (scan_limit < 64) {
		fprintf(stderr, "RLIMIT_NOFILE too low: skip\n");
		return T_EXIT_SKIP;
	}
	test_plain();
	test_eventfd();
	test_parked_read();
	test_timeout();
	test_thread_wait();
	test_ring_poll();
	test_sqpoll();
	test_files();
	return T_EXIT_PASS;
}
