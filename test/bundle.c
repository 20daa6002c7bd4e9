/* SPDX-License-Identifier: MIT */
/*
 * Bundles (IORING_RECVSEND_BUNDLE, io_uring/net.c and kbuf.c's
 * io_ring_buffers_peek): RECV and multishot RECV take several ring
 * buffers at once, SEND with provided buffers sends several; the CQE's
 * result is the bytes in all, its buffer id the first's, and the ring's
 * head moves past the buffers used (PBUF_STATUS), not those left over.
 * A plain ring's entries keep their len when a bundle cuts one short.
 * Also SEND with one provided buffer, multishot RECV's optlen limit,
 * IORING_FEAT_RECVSEND_BUNDLE, and the prep errors.
 */
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "helpers.h"

#define BUNDLE	 (1U << 4) /* IORING_RECVSEND_BUNDLE */
#define RBGID	 1
#define SBGID	 2
#define NBUF	 8
#define BLEN	 64
#define BID(f)	 ((f) >> IORING_CQE_BUFFER_SHIFT)
#define F_BUF	 IORING_CQE_F_BUFFER
#define F_MORE	 IORING_CQE_F_MORE
#define MSHOT_UD 77

struct pring {
	struct io_uring_buf_ring *br;
	uint16_t tail;
	uint16_t bgid;
};

static char rmem[NBUF][BLEN];
static char smem[4][BLEN];
static char data[1024];

static void pring_add(struct pring *p, void *addr, unsigned int len,
		      uint16_t bid)
{
	struct io_uring_buf *b = &p->br->bufs[p->tail & (NBUF - 1)];

	b->addr = (uintptr_t)addr;
	b->len = len;
	b->bid = bid;
	p->tail++;
	__atomic_store_n(&p->br->tail, p->tail, __ATOMIC_RELEASE);
}

static void pring_init(struct t_ring *r, struct pring *p, uint16_t bgid)
{
	struct io_uring_buf_reg reg;

	p->br = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(p->br != MAP_FAILED);
	p->tail = 0;
	p->bgid = bgid;
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)p->br;
	reg.ring_entries = NBUF;
	reg.bgid = bgid;
	T_ASSERT_EQ(t_register(r->fd, IORING_REGISTER_PBUF_RING, &reg, 1), 0);
}

static unsigned int pring_head(struct t_ring *r, uint16_t bgid)
{
	uint32_t st[10] = {bgid};

	T_ASSERT_EQ(t_register(r->fd, IORING_REGISTER_PBUF_STATUS, st, 1), 0);
	return st[1];
}

/* Wait (bounded) until fd has n bytes queued, so one receive sees all. */
static void wait_queued(int fd, int n)
{
	for (int i = 0; i < 1000; i++) {
		int q = 0;

		T_ASSERT_EQ(ioctl(fd, FIONREAD, &q), 0);
		if (q >= n)
			return;
		poll(NULL, 0, 1);
	}
	T_ASSERT(false);
}

static struct io_uring_sqe *sr_sqe(struct t_ring *r, int op, int fd,
				   unsigned int len, unsigned int ioprio,
				   uint16_t bgid, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, op, fd, NULL, len, 0, ud);
	sqe->ioprio = (uint16_t)ioprio;
	sqe->flags = IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	return sqe;
}

/* Run one SQE: its result checked, its flags returned. */
#define run_one(r, res) run_one_at(r, res, __LINE__)
static unsigned int run_one_at(struct t_ring *r, int res, int line)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_submit(r), 1);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	if (cqe.res != res)
		fprintf(stderr, "line %d: res %d, want %d\n", line, cqe.res,
			res);
	T_ASSERT_EQ(cqe.res, res);
	return cqe.flags;
}

static void test_errors(struct t_ring *r, int fd)
{
	struct io_uring_sqe *sqe;
	struct io_uring_params p;
	struct t_ring r2;

	memset(&p, 0, sizeof(p));
	T_ASSERT_EQ(t_ring_init(&r2, 4, &p), 0);
	T_ASSERT(p.features & IORING_FEAT_RECVSEND_BUNDLE);
	t_ring_exit(&r2);
	/* RECVMSG and SENDMSG take no bundle. */
	sr_sqe(r, IORING_OP_RECVMSG, fd, 0, BUNDLE, RBGID, 1);
	run_one(r, -EINVAL);
	sqe = sr_sqe(r, IORING_OP_SENDMSG, fd, 0, BUNDLE, SBGID, 1);
	sqe->flags = 0;
	run_one(r, -EINVAL);
	/* Without provided buffers, a bundle is a plain SEND or RECV. */
	sqe = sr_sqe(r, IORING_OP_SEND, fd, 0, BUNDLE, SBGID, 1);
	sqe->flags = 0;
	run_one(r, 0);
	sqe = sr_sqe(r, IORING_OP_RECV, fd, 0, BUNDLE, SBGID, 1);
	sqe->flags = 0;
	sqe->msg_flags = MSG_DONTWAIT;
	run_one(r, -EAGAIN);
	/* optlen is multishot RECV's only. */
	sqe = sr_sqe(r, IORING_OP_RECV, fd, 0, 0, RBGID, 1);
	sqe->file_index = 10; /* optlen */
	run_one(r, -EINVAL);
	/* No such group: -ENOENT for a bundle; no buffers: -ENOBUFS. */
	sr_sqe(r, IORING_OP_RECV, fd, 0, BUNDLE, 9, 1);
	run_one(r, -ENOENT);
	sr_sqe(r, IORING_OP_RECV, fd, 0, 0, 9, 1);
	run_one(r, -ENOBUFS);
	sr_sqe(r, IORING_OP_RECV, fd, 0, BUNDLE, RBGID, 1);
	run_one(r, -ENOBUFS);
}

/* RECV bundles: all that is queued, or sqe->len's worth. */
static void test_recv(struct t_ring *r, struct pring *p, int s[2])
{
	unsigned int f;

	for (int i = 0; i < NBUF; i++)
		pring_add(p, rmem[i], BLEN, (uint16_t)(10 + i));
	/* Nothing there, MSG_DONTWAIT: no buffer used. */
	sr_sqe(r, IORING_OP_RECV, s[1], 1, BUNDLE, RBGID, 1)->msg_flags =
		MSG_DONTWAIT;
	f = run_one(r, -EAGAIN);
	T_ASSERT(!(f & F_BUF));
	T_ASSERT_EQ(pring_head(r, RBGID), 0);
	T_ASSERT_EQ(p->br->bufs[0].len, BLEN);
	/*
	 * 200 queued: one buffer (the size is not known yet), then, for the
	 * 136 left, as many as that needs; the third would be cut, so the
	 * bundle stops at 192 (the kernel's partial map: no more rounds).
	 */
	T_ASSERT_EQ(send(s[0], data, 200, 0), 200);
	wait_queued(s[1], 200);
	sr_sqe(r, IORING_OP_RECV, s[1], 0, BUNDLE, RBGID, 1);
	f = run_one(r, 192);
	T_ASSERT(f & F_BUF);
	T_ASSERT_EQ(BID(f), 10);
	T_ASSERT_EQ(memcmp(rmem, data, 192), 0);
	T_ASSERT_EQ(pring_head(r, RBGID), 3);
	/*
	 * sqe->len caps it: 100 bytes would cut the second buffer, which
	 * a plain ring's bundle leaves, so 64.
	 */
	T_ASSERT_EQ(send(s[0], data + 200, 150, 0), 150);
	wait_queued(s[1], 158);
	sr_sqe(r, IORING_OP_RECV, s[1], 100, BUNDLE, RBGID, 1);
	f = run_one(r, 64);
	T_ASSERT_EQ(BID(f), 13);
	T_ASSERT_EQ(memcmp(rmem[3], data + 192, 64), 0);
	T_ASSERT_EQ(pring_head(r, RBGID), 4);
	/* A cut first buffer keeps its len in the ring. */
	sr_sqe(r, IORING_OP_RECV, s[1], 10, BUNDLE, RBGID, 1);
	f = run_one(r, 10);
	T_ASSERT_EQ(BID(f), 14);
	T_ASSERT_EQ(p->br->bufs[4].len, BLEN);
	T_ASSERT_EQ(pring_head(r, RBGID), 5);
	/* The last 84: a buffer, then a second round of one cut to 20. */
	sr_sqe(r, IORING_OP_RECV, s[1], 0, BUNDLE, RBGID, 1);
	f = run_one(r, 84);
	T_ASSERT_EQ(BID(f), 15);
	T_ASSERT_EQ(memcmp(rmem[5], data + 266, 64), 0);
	T_ASSERT_EQ(memcmp(rmem[6], data + 330, 20), 0);
	T_ASSERT_EQ(pring_head(r, RBGID), 7);
}

/* SEND bundles: the group's buffers in order, as one stream. */
static void test_send(struct t_ring *r, struct pring *p, int s[2])
{
	char got[128];
	unsigned int f;

	for (int i = 0; i < 3; i++) {
		memset(smem[i], 'a' + i, BLEN);
		pring_add(p, smem[i], (unsigned int)(10 * (i + 1)),
			  (uint16_t)(20 + i));
	}
	sr_sqe(r, IORING_OP_SEND, s[0], 0, BUNDLE, SBGID, 1);
	f = run_one(r, 60);
	T_ASSERT(f & F_BUF);
	T_ASSERT_EQ(BID(f), 20);
	T_ASSERT_EQ(pring_head(r, SBGID), 3);
	wait_queued(s[1], 60);
	T_ASSERT_EQ(recv(s[1], got, sizeof(got), 0), 60);
	T_ASSERT_EQ(got[0], 'a');
	T_ASSERT_EQ(got[10], 'b');
	T_ASSERT_EQ(got[29], 'b');
	T_ASSERT_EQ(got[30], 'c');
	T_ASSERT_EQ(got[59], 'c');
	/* A plain SEND takes one buffer, len caps it. */
	memset(smem[3], 'd', BLEN);
	pring_add(p, smem[3], BLEN, 23);
	sr_sqe(r, IORING_OP_SEND, s[0], 16, 0, SBGID, 1);
	f = run_one(r, 16);
	T_ASSERT_EQ(BID(f), 23);
	wait_queued(s[1], 16);
	T_ASSERT_EQ(recv(s[1], got, sizeof(got), 0), 16);
	T_ASSERT_EQ(got[15], 'd');
	/* The group is empty now. */
	sr_sqe(r, IORING_OP_SEND, s[0], 0, BUNDLE, SBGID, 1);
	run_one(r, -ENOBUFS);
}

/* Multishot RECV bundles, and optlen ending one after so many bytes. */
static void test_mshot(struct t_ring *r, struct pring *p, int s[2])
{
	struct io_uring_cqe cqe;

	/* One left (bid 17): 7 more (ids 30..36). */
	for (int i = 0; i < NBUF - 1; i++)
		pring_add(p, rmem[i], BLEN, (uint16_t)(30 + i));
	T_ASSERT_EQ(send(s[0], data, 100, 0), 100);
	wait_queued(s[1], 100);
	sr_sqe(r, IORING_OP_RECV, s[1], 0, BUNDLE | IORING_RECV_MULTISHOT,
	       RBGID, MSHOT_UD)
		->file_index = 150; /* optlen */
	T_ASSERT_EQ(t_submit(r), 1);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, MSHOT_UD);
	T_ASSERT_EQ(cqe.res, 100);
	T_ASSERT_EQ(cqe.flags & (F_BUF | F_MORE), F_BUF | F_MORE);
	T_ASSERT_EQ(BID(cqe.flags), 17);
	T_ASSERT_EQ(memcmp(rmem[7], data, 64), 0);
	T_ASSERT_EQ(memcmp(rmem[0], data + 64, 36), 0);
	T_ASSERT_EQ(pring_head(r, RBGID), 9);
	/* 50 more would pass the 150 limit: the CQE is the last. */
	T_ASSERT_EQ(send(s[0], data + 100, 80, 0), 80);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, MSHOT_UD);
	T_ASSERT_EQ(cqe.res, 50);
	T_ASSERT(cqe.flags & F_BUF);
	T_ASSERT(!(cqe.flags & F_MORE));
	T_ASSERT_EQ(BID(cqe.flags), 31);
	T_ASSERT_EQ(pring_head(r, RBGID), 10);
}

int main(void)
{
	struct pring rp, sp;
	struct t_ring r;
	int s[2];

	t_require_engine();
	t_watchdog(30);
	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 + 3);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	t_tcp_pair(s);
	pring_init(&r, &rp, RBGID);
	pring_init(&r, &sp, SBGID);
	test_errors(&r, s[1]);
	test_recv(&r, &rp, s);
	test_send(&r, &sp, s);
	test_mshot(&r, &rp, s);
	close(s[0]);
	close(s[1]);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
