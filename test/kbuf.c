/* SPDX-License-Identifier: MIT */
/*
 * Provided buffers (io_uring/kbuf.c): PROVIDE_BUFFERS / REMOVE_BUFFERS
 * and their errors, IOSQE_BUFFER_SELECT on READ, READV, RECV and RECVMSG
 * (pipes and sockets), -ENOBUFS, a request parked on readiness holding no
 * buffer, EOF (consumed by a read, given back by a receive), and buffer
 * rings (IORING_REGISTER_PBUF_RING): registration errors, selection in
 * order across wrap-around, no consumption by a would-block attempt.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "helpers.h"

#define BSEL	IOSQE_BUFFER_SELECT
#define F_BUF	IORING_CQE_F_BUFFER
#define BID(f)	((f) >> IORING_CQE_BUFFER_SHIFT)
#define NBUF	8
#define BUFLEN	64
#define RING_NR 4

static char bufs[NBUF][BUFLEN];

static struct io_uring_sqe *sqe_new(struct t_ring *r, int op, int fd,
				    const void *addr, unsigned int len,
				    uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, op, fd, addr, len, 0, ud);
	return sqe;
}

/* PROVIDE_BUFFERS: nbufs in fd, bid in off, group in buf_group. */
static struct io_uring_sqe *provide(struct t_ring *r, const void *addr,
				    unsigned int len, int nbufs, uint16_t bgid,
				    uint64_t bid, uint64_t ud)
{
	struct io_uring_sqe *sqe =
		sqe_new(r, IORING_OP_PROVIDE_BUFFERS, nbufs, addr, len, ud);

	sqe->off = bid;
	sqe->buf_group = bgid;
	return sqe;
}

static struct io_uring_sqe *remove_bufs(struct t_ring *r, int nbufs,
					uint16_t bgid, uint64_t ud)
{
	struct io_uring_sqe *sqe =
		sqe_new(r, IORING_OP_REMOVE_BUFFERS, nbufs, NULL, 0, ud);

	sqe->buf_group = bgid;
	return sqe;
}

/* An op that selects from group bgid. */
static struct io_uring_sqe *sel(struct t_ring *r, int op, int fd,
				const void *addr, unsigned int len,
				uint16_t bgid, uint64_t ud)
{
	struct io_uring_sqe *sqe = sqe_new(r, op, fd, addr, len, ud);

	sqe->flags |= BSEL;
	sqe->buf_group = bgid;
	return sqe;
}

/* Submit the one prepared SQE; its CQE must be (ud, res): its flags. */
static unsigned int run1(struct t_ring *r, struct io_uring_sqe *sqe, int res)
{
	uint64_t ud = sqe->user_data;

	T_ASSERT_EQ(t_submit_and_wait(r, 1), 1);
	return t_expect_cqe(r, ud, res);
}

static void test_provide_errors(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	run1(&r, remove_bufs(&r, 1, 7, 1), -ENOENT);
	run1(&r, provide(&r, bufs, BUFLEN, 0, 7, 0, 2), -E2BIG);
	run1(&r, provide(&r, bufs, BUFLEN, -1, 7, 0, 3), -E2BIG);
	run1(&r, provide(&r, bufs, BUFLEN, 1, 7, 65536, 4), -E2BIG);
	run1(&r, provide(&r, bufs, BUFLEN, 2, 7, 65535, 5), -EINVAL);
	run1(&r, provide(&r, (void *)~0xfULL, BUFLEN, 2, 7, 0, 6), -EOVERFLOW);
	run1(&r, provide(&r, (void *)0xffff800000000000ULL, BUFLEN, 2, 7, 0, 7),
	     -EFAULT);
	run1(&r, provide(&r, bufs, 1U << 31, 65535, 7, 0, 7), -EFAULT);
	provide(&r, bufs, BUFLEN, 2, 7, 0, 8)->rw_flags = 1;
	run1(&r, &r.sqes[(r.sqe_tail - 1) & (r.p.sq_entries - 1)], -EINVAL);
	provide(&r, bufs, BUFLEN, 2, 7, 0, 9)->flags |= BSEL;
	run1(&r, &r.sqes[(r.sqe_tail - 1) & (r.p.sq_entries - 1)], -EOPNOTSUPP);
	run1(&r, remove_bufs(&r, 0, 7, 10), -EINVAL);
	remove_bufs(&r, 1, 7, 11)->addr = 1;
	run1(&r, &r.sqes[(r.sqe_tail - 1) & (r.p.sq_entries - 1)], -EINVAL);
	remove_bufs(&r, 1, 7, 12)->off = 1;
	run1(&r, &r.sqes[(r.sqe_tail - 1) & (r.p.sq_entries - 1)], -EINVAL);

	/* The result of PROVIDE is 0; REMOVE says how many went. */
	run1(&r, provide(&r, bufs, BUFLEN, 2, 7, 0, 13), 0);
	run1(&r, provide(&r, bufs, 0, 1, 7, 0, 14), -EINVAL);
	run1(&r, provide(&r, NULL, BUFLEN, 1, 7, 65535, 14), 0);
	run1(&r, remove_bufs(&r, 5, 7, 15), 3);
	run1(&r, remove_bufs(&r, 5, 7, 16), 0); /* the group stays, empty */
	run1(&r, remove_bufs(&r, 1, 8, 17), -ENOENT);
	/* A failed REMOVE breaks its link. */
	remove_bufs(&r, 1, 9, 18)->flags |= IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&r), 19);
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 2);
	t_expect_cqe(&r, 18, -ENOENT);
	t_expect_cqe(&r, 19, -ECANCELED);
	t_ring_exit(&r);
}

/* READ and READV into provided buffers of a pipe. */
static void test_pipe_read(void)
{
	struct iovec iov[2] = {{NULL, 10}, {NULL, 10}};
	struct t_ring r;
	unsigned int f;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	run1(&r, provide(&r, bufs, BUFLEN, 4, 20, 100, 1), 0);
	T_ASSERT_EQ(write(p[1], "hello", 5), 5);
	/* len 0: a whole buffer; bids in the order provided. */
	f = run1(&r, sel(&r, IORING_OP_READ, p[0], NULL, 0, 20, 2), 5);
	T_ASSERT_EQ(f, F_BUF | (100 << 16));
	T_ASSERT_EQ(memcmp(bufs[0], "hello", 5), 0);
	T_ASSERT_EQ(write(p[1], "world", 5), 5);
	f = run1(&r, sel(&r, IORING_OP_READ, p[0], (void *)0x1234, 3, 20, 3),
		 3);
	T_ASSERT_EQ(f, F_BUF | (101 << 16));
	T_ASSERT_EQ(memcmp(bufs[1], "wor", 3), 0);
	run1(&r, sel(&r, IORING_OP_READ, p[0], NULL, 3, 21, 4), -ENOBUFS);

	/* READV: one iovec, its length the most to read. */
	run1(&r, sel(&r, IORING_OP_READV, p[0], iov, 2, 20, 5), -EINVAL);
	run1(&r, sel(&r, IORING_OP_READV, p[0], (void *)8, 1, 20, 6), -EFAULT);
	iov[0].iov_len = 1;
	f = run1(&r, sel(&r, IORING_OP_READV, p[0], iov, 1, 20, 7), 1);
	T_ASSERT_EQ(f, F_BUF | (102 << 16));
	T_ASSERT_EQ(bufs[2][0], 'l');
	/* Ops without buffer select refuse it. */
	run1(&r, sel(&r, IORING_OP_WRITE, p[1], NULL, 3, 20, 8), -EOPNOTSUPP);
	run1(&r, sel(&r, IORING_OP_NOP, -1, NULL, 0, 20, 9), -EOPNOTSUPP);

	/* EOF consumes the buffer (the read completed, with 0 bytes). */
	T_ASSERT_EQ(write(p[1], "d", 1), 1);
	close(p[1]);
	f = run1(&r, sel(&r, IORING_OP_READ, p[0], NULL, 0, 20, 10), 2);
	T_ASSERT_EQ(f, F_BUF | (103 << 16));
	run1(&r, provide(&r, bufs, BUFLEN, 2, 20, 0, 11), 0);
	f = run1(&r, sel(&r, IORING_OP_READ, p[0], NULL, 0, 20, 12), 0);
	T_ASSERT_EQ(f, F_BUF | (0 << 16));
	run1(&r, remove_bufs(&r, 8, 20, 13), 1);
	/* A bad fd takes no buffer. */
	run1(&r, provide(&r, bufs, BUFLEN, 1, 20, 0, 14), 0);
	run1(&r, sel(&r, IORING_OP_READ, 1000, NULL, 0, 20, 15), -EBADF);
	run1(&r, remove_bufs(&r, 8, 20, 16), 1);
	t_ring_exit(&r);
	close(p[0]);
}

/*
 * A pipe read that waits for data keeps its provided buffer (as the
 * kernel does); a receive that waits holds none: REMOVE finds it, and the
 * receive takes what is there when data comes.
 */
static void test_parked(void)
{
	struct t_ring r;
	unsigned int f;
	int p[2], s[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	run1(&r, provide(&r, bufs, BUFLEN, 1, 30, 5, 1), 0);
	sel(&r, IORING_OP_READ, p[0], NULL, 0, 30, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	run1(&r, remove_bufs(&r, 4, 30, 3), 0);
	run1(&r, provide(&r, bufs[3], BUFLEN, 1, 30, 9, 4), 0);
	T_ASSERT_EQ(write(p[1], "late", 4), 4);
	f = t_expect_cqe(&r, 2, 4);
	T_ASSERT_EQ(f, F_BUF | (5 << 16));
	T_ASSERT_EQ(memcmp(bufs[0], "late", 4), 0);
	run1(&r, remove_bufs(&r, 4, 30, 6), 1);

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	run1(&r, provide(&r, bufs, BUFLEN, 1, 30, 5, 7), 0);
	sel(&r, IORING_OP_RECV, s[0], NULL, 0, 30, 8);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	run1(&r, remove_bufs(&r, 4, 30, 9), 1);
	run1(&r, provide(&r, bufs[3], BUFLEN, 1, 30, 9, 10), 0);
	T_ASSERT_EQ(write(s[1], "late", 4), 4);
	f = t_expect_cqe(&r, 8, 4);
	T_ASSERT_EQ(f, F_BUF | (9 << 16));
	T_ASSERT_EQ(memcmp(bufs[3], "late", 4), 0);
	close(s[0]);
	close(s[1]);

	/* An empty group fails at once, before there is anything to wait on. */
	run1(&r, sel(&r, IORING_OP_READ, p[0], NULL, 0, 30, 5), -ENOBUFS);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* RECV and RECVMSG into provided buffers; EOF gives the buffer back. */
static void test_socket(void)
{
	struct iovec iov = {NULL, 0};
	struct msghdr msg;
	struct t_ring r;
	unsigned int f;
	int s[2], p[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	/* Not a socket comes before no buffer. */
	run1(&r, sel(&r, IORING_OP_RECV, p[0], NULL, 0, 40, 1), -ENOTSOCK);
	run1(&r, sel(&r, IORING_OP_RECV, s[0], NULL, 0, 40, 2), -ENOBUFS);
	run1(&r, provide(&r, bufs, BUFLEN, 4, 40, 0, 3), 0);
	T_ASSERT_EQ(write(s[1], "abc", 3), 3);
	f = run1(&r, sel(&r, IORING_OP_RECV, s[0], NULL, 0, 40, 4), 3);
	T_ASSERT_EQ(f, F_BUF | (0 << 16));
	T_ASSERT_EQ(memcmp(bufs[0], "abc", 3), 0);

	/* RECVMSG: one iovec at most, len 0 for a whole buffer. */
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 2;
	run1(&r, sel(&r, IORING_OP_RECVMSG, s[0], &msg, 1, 40, 5), -EINVAL);
	msg.msg_iovlen = 1;
	T_ASSERT_EQ(write(s[1], "defg", 4), 4);
	f = run1(&r, sel(&r, IORING_OP_RECVMSG, s[0], &msg, 1, 40, 6), 4);
	T_ASSERT_EQ(f, F_BUF | (1 << 16));
	T_ASSERT_EQ(memcmp(bufs[1], "defg", 4), 0);

	/* Parked, then data: a buffer, in order. */
	sel(&r, IORING_OP_RECV, s[0], NULL, 2, 40, 7);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(s[1], "hij", 3), 3);
	f = t_expect_cqe(&r, 7, 2);
	T_ASSERT_EQ(f, F_BUF | IORING_CQE_F_SOCK_NONEMPTY | (2 << 16));

	/* EOF: res 0, no buffer used. */
	T_ASSERT_EQ(shutdown(s[1], SHUT_WR), 0);
	f = run1(&r, sel(&r, IORING_OP_RECV, s[0], NULL, 0, 40, 8), 1);
	T_ASSERT_EQ(f, F_BUF | (3 << 16));
	run1(&r, provide(&r, bufs[4], BUFLEN, 1, 40, 4, 9), 0);
	f = run1(&r, sel(&r, IORING_OP_RECV, s[0], NULL, 0, 40, 10), 0);
	T_ASSERT_EQ(f, 0);
	run1(&r, remove_bufs(&r, 8, 40, 11), 1);
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
	close(p[0]);
	close(p[1]);
}

struct pbuf {
	struct io_uring_buf_ring *br;
	size_t size;
	unsigned int entries;
	uint16_t tail;
};

static int pbuf_register(struct t_ring *r, struct pbuf *pb, uint16_t bgid)
{
	struct io_uring_buf_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)pb->br;
	reg.ring_entries = pb->entries;
	reg.bgid = bgid;
	return t_register(r->fd, IORING_REGISTER_PBUF_RING, &reg, 1);
}

static int pbuf_unregister(struct t_ring *r, uint16_t bgid)
{
	struct io_uring_buf_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.bgid = bgid;
	return t_register(r->fd, IORING_UNREGISTER_PBUF_RING, &reg, 1);
}

/* Publish one buffer (io_uring_buf_ring_add + advance). */
static void pbuf_add(struct pbuf *pb, void *addr, unsigned int len,
		     uint16_t bid)
{
	struct io_uring_buf *b = &pb->br->bufs[pb->tail & (pb->entries - 1)];

	b->addr = (uintptr_t)addr;
	b->len = len;
	b->bid = bid;
	pb->tail++;
	__atomic_store_n(&pb->br->tail, pb->tail, __ATOMIC_RELEASE);
}

static void pbuf_init(struct pbuf *pb, unsigned int entries)
{
	pb->entries = entries;
	pb->size = 65536;
	pb->br = mmap(NULL, pb->size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(pb->br != MAP_FAILED);
	pb->tail = 0;
}

static void test_pbuf_errors(void)
{
	struct io_uring_buf_reg reg;
	struct t_ring r;
	struct pbuf pb;

	pbuf_init(&pb, RING_NR);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
#define REG(field, val, err)                                                  \
	do {                                                                  \
		memset(&reg, 0, sizeof(reg));                                 \
		reg.ring_addr = (uintptr_t)pb.br;                             \
		reg.ring_entries = RING_NR;                                   \
		reg.bgid = 50;                                                \
		reg.field = val;                                              \
		T_ASSERT_EQ(                                                  \
			t_register(r.fd, IORING_REGISTER_PBUF_RING, &reg, 1), \
			err);                                                 \
	} while (0)
	REG(ring_addr, 0, -EFAULT);
	REG(ring_addr, (uintptr_t)pb.br + 8, -EINVAL);
	REG(ring_entries, 0, -EINVAL);
	REG(ring_entries, 3, -EINVAL);
	REG(ring_entries, 65536, -EINVAL);
	REG(resv[1], 1, -EINVAL);
	REG(pad, 4, -EINVAL);
#undef REG
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PBUF_RING, &reg, 2),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PBUF_RING, NULL, 1),
		    -EINVAL);
	T_ASSERT_EQ(pbuf_unregister(&r, 50), -ENOENT);
	T_ASSERT_EQ(pbuf_register(&r, &pb, 50), 0);
	T_ASSERT_EQ(pbuf_register(&r, &pb, 50), -EEXIST);
	/* A ring takes no PROVIDE or REMOVE. */
	run1(&r, provide(&r, bufs, BUFLEN, 1, 50, 0, 1), -EINVAL);
	run1(&r, remove_bufs(&r, 1, 50, 2), -EINVAL);
	/* A group with provided buffers takes no ring, nor unregister. */
	run1(&r, provide(&r, bufs, BUFLEN, 1, 51, 0, 3), 0);
	T_ASSERT_EQ(pbuf_register(&r, &pb, 51), -EEXIST);
	T_ASSERT_EQ(pbuf_unregister(&r, 51), -EINVAL);
	/* Emptied, it may become a ring. */
	run1(&r, remove_bufs(&r, 1, 51, 4), 1);
	T_ASSERT_EQ(pbuf_register(&r, &pb, 51), 0);
	T_ASSERT_EQ(pbuf_unregister(&r, 51), 0);
	T_ASSERT_EQ(pbuf_unregister(&r, 50), 0);
	T_ASSERT_EQ(pbuf_unregister(&r, 50), -ENOENT);
	t_ring_exit(&r);
	munmap(pb.br, pb.size);
}

/*
 * Buffers of a ring are used in ring order, across the wrap of the
 * 16-bit tail over the entries; an empty ring gives -ENOBUFS; a read that
 * waits consumes nothing until it completes.
 */
static void test_pbuf_select(void)
{
	struct t_ring r;
	struct pbuf pb;
	unsigned int f;
	int p[2], s[2];

	pbuf_init(&pb, RING_NR);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pbuf_register(&r, &pb, 60), 0);
	run1(&r, sel(&r, IORING_OP_READ, p[0], NULL, 0, 60, 1), -ENOBUFS);
	for (unsigned int i = 0; i < 3 * RING_NR + 1; i++) {
		char c = (char)('a' + i);

		pbuf_add(&pb, bufs[i % NBUF], BUFLEN, (uint16_t)(1000 + i));
		T_ASSERT_EQ(write(p[1], &c, 1), 1);
		f = run1(&r, sel(&r, IORING_OP_READ, p[0], NULL, 0, 60, 2), 1);
		T_ASSERT_EQ(f, F_BUF | ((1000 + i) << 16));
		T_ASSERT_EQ(bufs[i % NBUF][0], c);
	}
	run1(&r, sel(&r, IORING_OP_READ, p[0], NULL, 0, 60, 3), -ENOBUFS);

	/* Parked: the entry it tried stays first. */
	pbuf_add(&pb, bufs[0], BUFLEN, 7);
	pbuf_add(&pb, bufs[1], BUFLEN, 8);
	sel(&r, IORING_OP_READ, p[0], NULL, 0, 60, 4);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(p[1], "zz", 2), 2);
	f = t_expect_cqe(&r, 4, 2);
	T_ASSERT_EQ(f, F_BUF | (7 << 16));
	/* A receive at EOF consumes nothing; the next one gets bid 8. */
	T_ASSERT_EQ(write(s[1], "q", 1), 1);
	T_ASSERT_EQ(shutdown(s[1], SHUT_WR), 0);
	f = run1(&r, sel(&r, IORING_OP_RECV, s[0], NULL, 0, 60, 5), 1);
	T_ASSERT_EQ(f, F_BUF | (8 << 16));
	pbuf_add(&pb, bufs[2], BUFLEN, 9);
	f = run1(&r, sel(&r, IORING_OP_RECV, s[0], NULL, 0, 60, 6), 0);
	T_ASSERT_EQ(f, 0);
	close(p[1]);
	f = run1(&r, sel(&r, IORING_OP_READ, p[0], NULL, 0, 60, 7), 0);
	T_ASSERT_EQ(f, F_BUF | (9 << 16));
	T_ASSERT_EQ(pbuf_unregister(&r, 60), 0);
	run1(&r, sel(&r, IORING_OP_READ, p[0], NULL, 0, 60, 8), -ENOBUFS);
	t_ring_exit(&r);
	munmap(pb.br, pb.size);
	close(p[0]);
	close(s[0]);
	close(s[1]);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_provide_errors();
	test_pipe_read();
	test_parked();
	test_socket();
	test_pbuf_errors();
	test_pbuf_select();
	return T_EXIT_PASS;
}
