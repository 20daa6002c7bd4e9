/* SPDX-License-Identifier: MIT */
/*
 * READ, WRITE, READV, WRITEV at an offset on anon-inode files (eventfd,
 * timerfd): they have no pread (pread(2) gives -ESPIPE), but io_uring
 * passes the SQE's offset to their read and write, which take no
 * position: the transfer happens, at any offset. An empty eventfd parks
 * the read until a write. Found by diff-fuzz (a READV at a large offset
 * on the environment's eventfd: the kernel parked, nowait said -ESPIPE).
 */
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <unistd.h>
#include "helpers.h"

static struct io_uring_sqe *queue_rw(struct t_ring *r, int op, int fd,
				     const void *addr, unsigned int len,
				     uint64_t off)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, op, fd, addr, len, off, 1);
	return sqe;
}

static void test_eventfd(struct t_ring *r)
{
	static const uint64_t offs[] = {0, 8, 12345, 0x2d746961776f6e3aULL};
	int efd = eventfd(0, 0);
	uint64_t v = 0, w;
	struct iovec iov = {&v, sizeof(v)};

	T_ASSERT_GE(efd, 0);
	T_ASSERT_EQ(pread(efd, &v, sizeof(v), 8), -1);
	T_ASSERT_EQ(errno, ESPIPE);
	for (unsigned int i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		w = 3 + i;
		queue_rw(r, IORING_OP_WRITE, efd, &w, sizeof(w), offs[i]);
		T_ASSERT_EQ(t_run(r, 1), sizeof(w));
		v = 0;
		queue_rw(r, IORING_OP_READV, efd, &iov, 1, offs[i]);
		T_ASSERT_EQ(t_run(r, 1), sizeof(v));
		T_ASSERT_EQ(v, 3 + i);
	}
	/* Empty: a read at an offset waits for the counter, then takes it. */
	v = 0;
	queue_rw(r, IORING_OP_READ, efd, &v, sizeof(v), 4096);
	T_ASSERT_EQ(t_submit(r), 1);
	t_expect_no_cqe(r, 50);
	w = 42;
	T_ASSERT_EQ(write(efd, &w, sizeof(w)), sizeof(w));
	t_expect_cqe(r, 1, sizeof(v));
	T_ASSERT_EQ(v, 42);
	/* eventfd's own checks still apply: a short buffer is -EINVAL. */
	queue_rw(r, IORING_OP_READ, efd, &v, 4, 77);
	T_ASSERT_EQ(t_run(r, 1), -EINVAL);
	close(efd);
}

static void test_timerfd(struct t_ring *r)
{
	struct itimerspec its = {.it_value = {.tv_nsec = 1000}};
	int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	uint64_t v = 0;

	T_ASSERT_GE(tfd, 0);
	T_ASSERT_EQ(timerfd_settime(tfd, 0, &its, NULL), 0);
	queue_rw(r, IORING_OP_READ, tfd, &v, sizeof(v), 100);
	T_ASSERT_EQ(t_run(r, 1), sizeof(v));
	T_ASSERT_EQ(v, 1);
	close(tfd);
}

int main(void)
{
	struct t_ring r;

	t_require_engine();
	t_watchdog(30);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	test_eventfd(&r);
	test_timerfd(&r);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
