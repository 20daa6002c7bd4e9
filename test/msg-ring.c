/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_MSG_RING against the kernel: MSG_DATA to another ring and to
 * our own (CQE order), FLAGS_PASS, the prep and issue errors, a target
 * that is disabled, full, waited on by another thread or with an eventfd;
 * MSG_SEND_FD into a slot, into an allocated slot, with CQE_SKIP, and the
 * installed file in use.
 */
#include <poll.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "helpers.h"

static struct io_uring_sqe *prep_msg(struct t_ring *r, int fd, unsigned int cmd,
				     unsigned int len, uint64_t data,
				     uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_MSG_RING;
	sqe->fd = fd;
	sqe->addr = cmd;
	sqe->len = len;
	sqe->off = data;
	sqe->user_data = ud;
	return sqe;
}

static void test_data(void)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	struct t_ring a, b;

	T_ASSERT_EQ(t_ring_init(&a, 8, NULL), 0);
	T_ASSERT_EQ(t_ring_init(&b, 8, NULL), 0);
	prep_msg(&a, b.fd, IORING_MSG_DATA, 0x10, 0x1234, 1);
	T_ASSERT_EQ(t_submit(&a), 1);
	t_expect_cqe(&a, 1, 0);
	T_ASSERT_EQ(t_expect_cqe(&b, 0x1234, 0x10), 0);

	/* Our own ring: the message's CQE comes first. */
	prep_msg(&a, a.fd, IORING_MSG_DATA, 0x20, 0x5678, 2);
	T_ASSERT_EQ(t_submit(&a), 1);
	t_expect_cqe(&a, 0x5678, 0x20);
	t_expect_cqe(&a, 2, 0);

	/* FLAGS_PASS: file_index is the target CQE's flags. */
	sqe = prep_msg(&a, b.fd, IORING_MSG_DATA, 7, 0x99, 3);
	sqe->msg_ring_flags = IORING_MSG_RING_FLAGS_PASS;
	sqe->file_index = 0x40;
	T_ASSERT_EQ(t_submit(&a), 1);
	T_ASSERT_EQ(t_wait_cqe(&a, &cqe), 0);
	if (cqe.res == -EINVAL) { /* a kernel before 6.3 */
		t_ring_exit(&a);
		t_ring_exit(&b);
		return;
	}
	T_ASSERT_EQ(cqe.user_data, 3);
	T_ASSERT_EQ(cqe.res, 0);
	T_ASSERT_EQ(t_expect_cqe(&b, 0x99, 7), 0x40);
	t_ring_exit(&a);
	t_ring_exit(&b);
}

static void test_errors(void)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	struct t_ring a, d;
	int pfd[2];

	T_ASSERT_EQ(pipe(pfd), 0);
	T_ASSERT_EQ(t_ring_init(&a, 16, NULL), 0);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_R_DISABLED;
	T_ASSERT_EQ(t_ring_init(&d, 8, &p), 0);
	prep_msg(&a, pfd[0], IORING_MSG_DATA, 0, 0, 1);
	prep_msg(&a, 1000, IORING_MSG_DATA, 0, 0, 2);
	prep_msg(&a, a.fd, 77, 0, 0, 3);
	sqe = prep_msg(&a, a.fd, IORING_MSG_DATA, 0, 0, 4);
	sqe->msg_ring_flags = IORING_MSG_RING_CQE_SKIP;
	sqe = prep_msg(&a, a.fd, IORING_MSG_DATA, 0, 0, 5);
	sqe->file_index = 3; /* without FLAGS_PASS */
	sqe = prep_msg(&a, a.fd, IORING_MSG_DATA, 0, 0, 6);
	sqe->addr3 = 1;
	prep_msg(&a, d.fd, IORING_MSG_DATA, 0, 0, 7);
	prep_msg(&a, d.fd, IORING_MSG_SEND_FD, 0, 0, 8);
	T_ASSERT_EQ(t_submit(&a), 8);
	t_expect_cqe(&a, 1, -EBADFD);
	t_expect_cqe(&a, 2, -EBADF);
	t_expect_cqe(&a, 3, -EINVAL);
	t_expect_cqe(&a, 4, -EINVAL);
	t_expect_cqe(&a, 5, -EINVAL);
	t_expect_cqe(&a, 6, -EINVAL);
	t_expect_cqe(&a, 7, -EBADFD);
	t_expect_cqe(&a, 8, -EBADFD);
	/* Prep: unknown flags, buf_index. */
	sqe = prep_msg(&a, a.fd, IORING_MSG_DATA, 0, 0, 9);
	sqe->msg_ring_flags = 1U << 7;
	T_ASSERT_EQ(t_submit(&a), 1);
	t_expect_cqe(&a, 9, -EINVAL);
	sqe = prep_msg(&a, a.fd, IORING_MSG_DATA, 0, 0, 10);
	sqe->buf_index = 1;
	T_ASSERT_EQ(t_submit(&a), 1);
	t_expect_cqe(&a, 10, -EINVAL);
	/* Enabled: the message goes through. */
	T_ASSERT_EQ(t_register(d.fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	prep_msg(&a, d.fd, IORING_MSG_DATA, 5, 55, 11);
	T_ASSERT_EQ(t_submit(&a), 1);
	t_expect_cqe(&a, 11, 0);
	t_expect_cqe(&d, 55, 5);
	close(pfd[0]);
	close(pfd[1]);
	t_ring_exit(&a);
	t_ring_exit(&d);
}

/* A full target keeps the CQEs on its overflow list, in order. */
static void test_overflow(void)
{
	struct io_uring_params p;
	struct t_ring a, b;

	T_ASSERT_EQ(t_ring_init(&a, 16, NULL), 0);
	memset(&p, 0, sizeof(p));
	T_ASSERT_EQ(t_ring_init(&b, 2, &p), 0); /* 4 CQ entries */
	for (unsigned int i = 0; i < 10; i++)
		prep_msg(&a, b.fd, IORING_MSG_DATA, i, 100 + i, i);
	T_ASSERT_EQ(t_submit(&a), 10);
	for (unsigned int i = 0; i < 10; i++)
		t_expect_cqe(&a, i, 0);
	T_ASSERT_EQ(t_cq_ready(&b), 4);
	T_ASSERT(*b.sq_flags & IORING_SQ_CQ_OVERFLOW);
	for (unsigned int i = 0; i < 10; i++)
		t_expect_cqe(&b, 100 + i, (int)i);
	T_ASSERT_EQ(*b.cq_overflow, 0);
	t_ring_exit(&a);
	t_ring_exit(&b);
}

static void *waiter(void *arg)
{
	struct t_ring *r = arg;
	struct io_uring_cqe cqe;

	if (t_wait_cqe(r, &cqe) || cqe.user_data != 0xabc || cqe.res != 3)
		return (void *)1;
	return NULL;
}

/* A thread waiting in enter on the target wakes; so does its eventfd. */
static void test_wake(void)
{
	struct pollfd pfd;
	struct t_ring a, b;
	pthread_t th;
	void *ret;
	int efd;

	T_ASSERT_EQ(t_ring_init(&a, 8, NULL), 0);
	T_ASSERT_EQ(t_ring_init(&b, 8, NULL), 0);
	T_ASSERT_EQ(pthread_create(&th, NULL, waiter, &b), 0);
	usleep(20000);
	prep_msg(&a, b.fd, IORING_MSG_DATA, 3, 0xabc, 1);
	T_ASSERT_EQ(t_submit(&a), 1);
	t_expect_cqe(&a, 1, 0);
	T_ASSERT_EQ(pthread_join(th, &ret), 0);
	T_ASSERT_EQ(ret, NULL);

	efd = eventfd(0, EFD_CLOEXEC);
	T_ASSERT_GE(efd, 0);
	T_ASSERT_EQ(t_register(b.fd, IORING_REGISTER_EVENTFD, &efd, 1), 0);
	prep_msg(&a, b.fd, IORING_MSG_DATA, 4, 0xdef, 2);
	T_ASSERT_EQ(t_submit(&a), 1);
	t_expect_cqe(&a, 2, 0);
	pfd.fd = efd;
	pfd.events = POLLIN;
	T_ASSERT_EQ(poll(&pfd, 1, 1000), 1);
	t_expect_cqe(&b, 0xdef, 4);
	close(efd);
	t_ring_exit(&a);
	t_ring_exit(&b);
}

static struct io_uring_sqe *prep_send_fd(struct t_ring *r, int fd,
					 unsigned int src, unsigned int dst,
					 uint64_t data, uint64_t ud)
{
	struct io_uring_sqe *sqe =
		prep_msg(r, fd, IORING_MSG_SEND_FD, 0, data, ud);

	sqe->addr3 = src;
	sqe->file_index = dst;
	return sqe;
}

/* Write through fixed slot idx of r, then read it back from rfd. */
static void check_slot(struct t_ring *r, unsigned int idx, int rfd)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);
	char buf[4];

	t_prep_rw(sqe, IORING_OP_WRITE, (int)idx, "wxyz", 4, 0, 50);
	sqe->flags |= IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit(r), 1);
	t_expect_cqe(r, 50, 4);
	T_ASSERT_EQ(read(rfd, buf, 4), 4);
	T_ASSERT_EQ(memcmp(buf, "wxyz", 4), 0);
}

static void test_send_fd(void)
{
	int fds[2] = {-1, -1}, tfds[4] = {-1, -1, -1, -1};
	struct io_uring_sqe *sqe;
	struct t_ring a, b;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	fds[0] = p[1];
	T_ASSERT_EQ(t_ring_init(&a, 8, NULL), 0);
	T_ASSERT_EQ(t_ring_init(&b, 8, NULL), 0);
	T_ASSERT_EQ(t_register(a.fd, IORING_REGISTER_FILES, fds, 2), 0);
	T_ASSERT_EQ(t_register(b.fd, IORING_REGISTER_FILES, tfds, 4), 0);
	prep_send_fd(&a, b.fd, 0, 2, 0x77, 1); /* into slot 1 */
	T_ASSERT_EQ(t_submit(&a), 1);
	t_expect_cqe(&a, 1, 0);
	t_expect_cqe(&b, 0x77, 0);
	check_slot(&b, 1, p[0]);

	/* An allocated slot (after the last one set), on both rings. */
	prep_send_fd(&a, b.fd, 0, IORING_FILE_INDEX_ALLOC, 0x78, 2);
	T_ASSERT_EQ(t_submit(&a), 1);
	t_expect_cqe(&a, 2, 2);
	t_expect_cqe(&b, 0x78, 2);
	check_slot(&b, 2, p[0]);

	/* CQE_SKIP: the target hears nothing. */
	sqe = prep_send_fd(&a, b.fd, 0, 4, 0x79, 3);
	sqe->msg_ring_flags = IORING_MSG_RING_CQE_SKIP;
	T_ASSERT_EQ(t_submit(&a), 1);
	t_expect_cqe(&a, 3, 0);
	t_expect_no_cqe(&b, 10);
	check_slot(&b, 3, p[0]);

	/* Errors: empty source slot, own ring, len, slot out of range. */
	prep_send_fd(&a, b.fd, 1, 3, 0, 4);
	prep_send_fd(&a, a.fd, 0, 1, 0, 5);
	sqe = prep_send_fd(&a, b.fd, 0, 1, 0, 6);
	sqe->len = 1;
	prep_send_fd(&a, b.fd, 0, 9, 0, 7);
	prep_send_fd(&a, b.fd, 5, 1, 0, 8);
	T_ASSERT_EQ(t_submit(&a), 5);
	t_expect_cqe(&a, 4, -EBADF);
	t_expect_cqe(&a, 5, -EINVAL);
	t_expect_cqe(&a, 6, -EINVAL);
	t_expect_cqe(&a, 7, -EINVAL);
	t_expect_cqe(&a, 8, -EBADF);
	t_expect_no_cqe(&b, 10);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&a);
	t_ring_exit(&b);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_data();
	test_errors();
	test_overflow();
	test_wake();
	test_send_fd();
	return T_EXIT_PASS;
}
