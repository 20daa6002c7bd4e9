/* SPDX-License-Identifier: MIT */
/*
 * READ, WRITE, READV, WRITEV at an offset on anon-inode files (eventfd,
 * timerfd): they have no pread (pread(2) gives -ESPIPE), but io_uring
 * passes the SQE's offset to their read and write, which take no
 * position: the transfer happens, at any offset. An empty eventfd parks
 * the read until a write. Found by diff-fuzz (a READV at a large offset
 * on the environment's eventfd: the kernel parked, nowait said -ESPIPE).
 * RWF_NOWAIT on an eventfd's write is the kernel's loop_rw_iter's answer.
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

/*
 * RWF_NOWAIT on an eventfd's write: eventfd_write is a plain ->write, no
 * write_iter, and the kernel's loop_rw_iter refuses IOCB_NOWAIT on a file
 * without O_NONBLOCK: -EAGAIN, whatever the length, 0 included, and
 * nothing written; on an O_NONBLOCK one the writes are made (eventfd's
 * own checks then: a short buffer -EINVAL, a full counter -EAGAIN).
 * Reads have read_iter: RWF_NOWAIT reads the counter. diff-fuzz found
 * nowait's 0 for the empty write (pwritev2 returns before its flags).
 */
static void test_eventfd_nowait(struct t_ring *r)
{
	uint64_t w = 5, v = 0, full = 0xfffffffffffffffeULL;
	struct iovec iov = {&w, sizeof(w)};
	struct io_uring_sqe *sqe;
	int efd = eventfd(0, 0), nb = eventfd(0, EFD_NONBLOCK);

	T_ASSERT_GE(efd, 0);
	T_ASSERT_GE(nb, 0);
	for (unsigned int len = 0; len <= 8; len += 4) {
		sqe = queue_rw(r, IORING_OP_WRITE, efd, &w, len, 0);
		sqe->rw_flags = RWF_NOWAIT;
		T_ASSERT_EQ(t_run(r, 1), -EAGAIN);
		sqe = queue_rw(r, IORING_OP_WRITEV, efd, &iov, 1, 0);
		sqe->rw_flags = RWF_NOWAIT;
		T_ASSERT_EQ(t_run(r, 1), -EAGAIN);
	}
	sqe = queue_rw(r, IORING_OP_WRITE, efd, &w, 8, 0);
	sqe->rw_flags = RWF_NOWAIT | RWF_DSYNC;
	T_ASSERT_EQ(t_run(r, 1), -EAGAIN);
	/* Nothing was written; without the flag the write goes through. */
	queue_rw(r, IORING_OP_WRITE, efd, &w, 8, 0);
	T_ASSERT_EQ(t_run(r, 1), 8);
	sqe = queue_rw(r, IORING_OP_READ, efd, &v, 8, 0);
	sqe->rw_flags = RWF_NOWAIT;
	T_ASSERT_EQ(t_run(r, 1), 8);
	T_ASSERT_EQ(v, 5);

	sqe = queue_rw(r, IORING_OP_WRITE, nb, &w, 0, 0);
	sqe->rw_flags = RWF_NOWAIT;
	T_ASSERT_EQ(t_run(r, 1), 0);
	sqe = queue_rw(r, IORING_OP_WRITE, nb, &w, 4, 0);
	sqe->rw_flags = RWF_NOWAIT;
	T_ASSERT_EQ(t_run(r, 1), -EINVAL);
	sqe = queue_rw(r, IORING_OP_WRITEV, nb, &iov, 1, 0);
	sqe->rw_flags = RWF_NOWAIT;
	T_ASSERT_EQ(t_run(r, 1), 8);
	T_ASSERT_EQ(read(nb, &v, sizeof(v)), sizeof(v));
	T_ASSERT_EQ(v, 5);
	T_ASSERT_EQ(write(nb, &full, sizeof(full)), sizeof(full));
	sqe = queue_rw(r, IORING_OP_WRITE, nb, &w, 8, 0);
	sqe->rw_flags = RWF_NOWAIT;
	T_ASSERT_EQ(t_run(r, 1), -EAGAIN);
	close(efd);
	close(nb);
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
	test_eventfd_nowait(&r);
	test_timerfd(&r);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
