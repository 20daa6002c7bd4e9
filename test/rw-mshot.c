/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_READ_MULTISHOT (io_uring/rw.c io_read_mshot): one CQE with
 * IORING_CQE_F_MORE and a provided buffer per read on a pipe or eventfd
 * while armed; the end without F_MORE at EOF (res 0, no buffer), at
 * -ENOBUFS (at once with no buffer, else when data comes), at cancel, and
 * when a CQE would overflow; prep errors and -EBADFD on a regular file.
 */
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include "helpers.h"

#define F_BUF	 IORING_CQE_F_BUFFER
#define F_MORE	 IORING_CQE_F_MORE
#define BID(f)	 ((f) >> IORING_CQE_BUFFER_SHIFT)
#define BUFLEN	 64
#define NBUF	 8
#define BGID	 3
#define ENTRIES	 8
#define RD_MSHOT NW_OP_READ_MULTISHOT

static char bufs[NBUF][BUFLEN];

struct pbuf {
	struct io_uring_buf_ring *br;
};

static void pbuf_setup(struct t_ring *r, struct pbuf *pb)
{
	struct io_uring_buf_reg reg;

	T_ASSERT_EQ(posix_memalign((void **)&pb->br, 4096, 4096), 0);
	memset(pb->br, 0, 4096);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)pb->br;
	reg.ring_entries = ENTRIES;
	reg.bgid = BGID;
	T_ASSERT_EQ(t_register(r->fd, IORING_REGISTER_PBUF_RING, &reg, 1), 0);
}

/* Publish bufs[bid] (len bytes of it) as buffer bid. */
static void pbuf_add(struct pbuf *pb, uint16_t bid, uint32_t len)
{
	uint16_t tail = pb->br->tail;
	struct io_uring_buf *e = &pb->br->bufs[tail & (ENTRIES - 1)];

	e->addr = (uintptr_t)bufs[bid];
	e->len = len;
	e->bid = bid;
	__atomic_store_n(&pb->br->tail, (uint16_t)(tail + 1), __ATOMIC_RELEASE);
}

static struct io_uring_sqe *read_mshot(struct t_ring *r, int fd, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, RD_MSHOT, fd, NULL, 0, 0, ud);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	return sqe;
}

/* Wait for a CQE of ud: res, and flags as given (bid included). */
static void expect(struct t_ring *r, uint64_t ud, int res, unsigned int flags)
{
	unsigned int f = t_expect_cqe(r, ud, res);

	if (f != flags) {
		fprintf(stderr, "[%s] CQE %llu res %d: flags 0x%x, want 0x%x\n",
			t_engine_name(), (unsigned long long)ud, res, f, flags);
		abort();
	}
}

static void test_prep_errors(void)
{
	char path[] = "/tmp/nowait-rw-mshot.XXXXXX";
	struct io_uring_sqe *sqe;
	struct t_ring r;
	struct pbuf pb;
	int p[2], fd;

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	pbuf_setup(&r, &pb);
	pbuf_add(&pb, 0, BUFLEN);
	/* Provided buffers are a must; no address, no length. */
	sqe = read_mshot(&r, p[0], 1);
	sqe->flags &= (uint8_t)~IOSQE_BUFFER_SELECT;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 1, -EINVAL, 0);
	sqe = read_mshot(&r, p[0], 2);
	sqe->addr = (uintptr_t)bufs[0];
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 2, -EINVAL, 0);
	sqe = read_mshot(&r, p[0], 3);
	sqe->len = 16;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 3, -EINVAL, 0);
	sqe = read_mshot(&r, p[0], 4);
	sqe->ioprio = 1;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 4, -EINVAL, 0);
	/* A pipe ignores the offset, -1 or any other. */
	T_ASSERT_EQ(write(p[1], "o", 1), 1);
	read_mshot(&r, p[0], 15)->off = 5;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 15, 1, F_BUF | F_MORE);
	close(p[1]);
	expect(&r, 15, -ENOBUFS, 0);
	/* A regular file cannot be polled. */
	fd = mkstemp(path);
	T_ASSERT_GE(fd, 0);
	unlink(path);
	T_ASSERT_EQ(write(fd, "data", 4), 4);
	read_mshot(&r, fd, 5);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 5, -EBADFD, 0);
	read_mshot(&r, fd, 6)->flags |= IOSQE_ASYNC;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 6, -EBADFD, 0);
	close(fd);
	t_ring_exit(&r);
	free(pb.br);
	close(p[0]);
}

/* Reads as data comes, buffer by buffer, then -ENOBUFS when data comes. */
static void test_pipe(bool async)
{
	static char big[100];
	struct t_ring r;
	struct pbuf pb;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	pbuf_setup(&r, &pb);
	for (uint16_t i = 0; i < 4; i++)
		pbuf_add(&pb, i, BUFLEN);
	T_ASSERT_EQ(write(p[1], "abc", 3), 3);
	read_mshot(&r, p[0], 7)->flags |= async ? IOSQE_ASYNC : 0;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 7, 3, F_BUF | F_MORE | (0 << 16));
	T_ASSERT(!memcmp(bufs[0], "abc", 3));
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(p[1], "de", 2), 2);
	expect(&r, 7, 2, F_BUF | F_MORE | (1 << 16));
	T_ASSERT(!memcmp(bufs[1], "de", 2));
	/* More than a buffer holds: two reads. */
	memset(big, 'z', sizeof(big));
	T_ASSERT_EQ(write(p[1], big, sizeof(big)), (ssize_t)sizeof(big));
	expect(&r, 7, BUFLEN, F_BUF | F_MORE | (2 << 16));
	expect(&r, 7, 100 - BUFLEN, F_BUF | F_MORE | (3 << 16));
	/* Out of buffers: it waits for data, which then ends it. */
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	expect(&r, 7, -ENOBUFS, 0);
	/* No buffer at the start: -ENOBUFS at once, data or not. */
	T_ASSERT_EQ(read(p[0], big, sizeof(big)), 1);
	read_mshot(&r, p[0], 8);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 8, -ENOBUFS, 0);
	/* EOF: res 0, the buffer not used. */
	pbuf_add(&pb, 5, BUFLEN);
	read_mshot(&r, p[0], 9);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	close(p[1]);
	expect(&r, 9, 0, 0);
	/* The buffer is still there for the next one. */
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(write(p[1], "q", 1), 1);
	read_mshot(&r, p[0], 10);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 10, 1, F_BUF | F_MORE | (5 << 16));
	/* A hang-up with no buffer left is -ENOBUFS, not EOF. */
	close(p[1]);
	expect(&r, 10, -ENOBUFS, 0);
	t_ring_exit(&r);
	free(pb.br);
	close(p[0]);
}

/* An armed multishot read is cancelled: -ECANCELED, no F_MORE. */
static void test_cancel(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	struct pbuf pb;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	pbuf_setup(&r, &pb);
	pbuf_add(&pb, 0, BUFLEN);
	read_mshot(&r, p[0], 11);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 12);
	sqe->addr = 11;
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 1);
	expect(&r, 12, 0, 0);
	expect(&r, 11, -ECANCELED, 0);
	t_ring_exit(&r);
	free(pb.br);
	close(p[0]);
	close(p[1]);
}

/* A stream socket: offset 0 reads; another is -ESPIPE at the read. */
static void test_socket(void)
{
	struct t_ring r;
	struct pbuf pb;
	int s[2], t[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, t), 0);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	pbuf_setup(&r, &pb);
	pbuf_add(&pb, 0, BUFLEN);
	pbuf_add(&pb, 1, BUFLEN);
	T_ASSERT_EQ(write(s[1], "sock", 4), 4);
	read_mshot(&r, s[0], 16);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 16, 4, F_BUF | F_MORE);
	shutdown(s[1], SHUT_WR);
	expect(&r, 16, 0, 0);
	T_ASSERT_EQ(write(t[1], "et", 2), 2);
	read_mshot(&r, t[0], 17)->off = 5;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 17, -ESPIPE, 0);
	t_ring_exit(&r);
	free(pb.br);
	close(s[0]);
	close(s[1]);
	close(t[0]);
	close(t[1]);
}

/* An eventfd: each read takes its 8-byte count. */
static void test_eventfd(void)
{
	struct t_ring r;
	struct pbuf pb;
	uint64_t v;
	int efd;

	efd = eventfd(0, EFD_CLOEXEC);
	T_ASSERT_GE(efd, 0);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	pbuf_setup(&r, &pb);
	pbuf_add(&pb, 0, 8);
	pbuf_add(&pb, 1, 8);
	read_mshot(&r, efd, 13);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(eventfd_write(efd, 5), 0);
	expect(&r, 13, 8, F_BUF | F_MORE | (0 << 16));
	memcpy(&v, bufs[0], 8);
	T_ASSERT_EQ(v, 5);
	T_ASSERT_EQ(eventfd_write(efd, 7), 0);
	expect(&r, 13, 8, F_BUF | F_MORE | (1 << 16));
	memcpy(&v, bufs[1], 8);
	T_ASSERT_EQ(v, 7);
	T_ASSERT_EQ(eventfd_write(efd, 1), 0);
	expect(&r, 13, -ENOBUFS, 0);
	t_ring_exit(&r);
	free(pb.br);
	close(efd);
}

/* The CQ fills: the read whose CQE would overflow ends it, data kept. */
static void test_overflow(void)
{
	struct io_uring_params prm;
	static char big[6 * BUFLEN];
	struct t_ring r;
	struct pbuf pb;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	memset(&prm, 0, sizeof(prm));
	prm.flags = IORING_SETUP_CQSIZE;
	prm.cq_entries = 4;
	T_ASSERT_EQ(t_ring_init(&r, 1, &prm), 0);
	pbuf_setup(&r, &pb);
	for (uint16_t i = 0; i < 6; i++)
		pbuf_add(&pb, i, BUFLEN);
	memset(big, 'o', sizeof(big));
	T_ASSERT_EQ(write(p[1], big, sizeof(big)), (ssize_t)sizeof(big));
	read_mshot(&r, p[0], 14);
	T_ASSERT_EQ(t_submit_and_wait(&r, 4), 1);
	for (unsigned int i = 0; i < 4; i++)
		expect(&r, 14, BUFLEN, F_BUF | F_MORE | (i << 16));
	expect(&r, 14, BUFLEN, F_BUF | (4 << 16));
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(read(p[0], big, sizeof(big)), BUFLEN);
	t_ring_exit(&r);
	free(pb.br);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_prep_errors();
	test_pipe(false);
	test_pipe(true);
	test_cancel();
	test_socket();
	test_eventfd();
	test_overflow();
	return T_EXIT_PASS;
}
