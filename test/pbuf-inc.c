/* SPDX-License-Identifier: MIT */
/*
 * Incrementally consumed buffer rings (IOU_PBUF_RING_INC, io_uring/kbuf.c
 * io_kbuf_inc_commit): a buffer is used in parts, each CQE reports its id
 * and IORING_CQE_F_BUF_MORE while it has room left, and the ring entry's
 * addr and len advance by what each op moved. READ on a pipe (EOF
 * included), RECV on a socket (a part that uses a buffer up moves the
 * head: PBUF_STATUS), multishot RECV, a RECV bundle over TCP and AF_UNIX,
 * and the registration's flags.
 */
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "helpers.h"

#define INC	 2 /* IOU_PBUF_RING_INC */
#define BGID	 3
#define ENTRIES	 4
#define BID(f)	 ((f) >> IORING_CQE_BUFFER_SHIFT)
#define F_BUF	 IORING_CQE_F_BUFFER
#define F_BMORE	 IORING_CQE_F_BUF_MORE
#define MSHOT_UD 99

static char mem[2][256];
static struct io_uring_buf_ring *br;
static uint16_t tail;

static int reg_ring(struct t_ring *r, unsigned int flags)
{
	struct io_uring_buf_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)br;
	reg.ring_entries = ENTRIES;
	reg.bgid = BGID;
	reg.pad = (uint16_t)flags;
	tail = 0;
	memset(br, 0, 4096);
	return t_register(r->fd, IORING_REGISTER_PBUF_RING, &reg, 1);
}

static void unreg_ring(struct t_ring *r)
{
	struct io_uring_buf_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.bgid = BGID;
	T_ASSERT_EQ(t_register(r->fd, IORING_UNREGISTER_PBUF_RING, &reg, 1), 0);
}

static void add_buf(void *addr, unsigned int len, uint16_t bid)
{
	struct io_uring_buf *b = &br->bufs[tail & (ENTRIES - 1)];

	b->addr = (uintptr_t)addr;
	b->len = len;
	b->bid = bid;
	tail++;
	__atomic_store_n(&br->tail, tail, __ATOMIC_RELEASE);
}

static unsigned int ring_head(struct t_ring *r)
{
	uint32_t st[10] = {BGID};

	T_ASSERT_EQ(t_register(r->fd, IORING_REGISTER_PBUF_STATUS, st, 1), 0);
	return st[1];
}

/* Queue op on fd selecting from BGID, len the most to move. */
static struct io_uring_sqe *sel(struct t_ring *r, int op, int fd,
				unsigned int len, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, op, fd, NULL, len, op == IORING_OP_READ ? -1ULL : 0, ud);
	sqe->flags = IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	return sqe;
}

/* Run one selecting op: its res and flags checked, the flags returned. */
static unsigned int run_sel(struct t_ring *r, int op, int fd, unsigned int len,
			    int res, uint16_t bid, bool more)
{
	struct io_uring_cqe cqe;

	sel(r, op, fd, len, 1);
	T_ASSERT_EQ(t_submit(r), 1);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.res, res);
	T_ASSERT(cqe.flags & F_BUF);
	T_ASSERT_EQ(BID(cqe.flags), bid);
	T_ASSERT_EQ(!!(cqe.flags & F_BMORE), more);
	return cqe.flags;
}

static void test_register(struct t_ring *r)
{
	T_ASSERT_EQ(reg_ring(r, 4), -EINVAL);
	T_ASSERT_EQ(reg_ring(r, INC | 4), -EINVAL);
	T_ASSERT_EQ(reg_ring(r, INC), 0);
	T_ASSERT_EQ(reg_ring(r, INC), -EEXIST);
	unreg_ring(r);
}

/* READ from a pipe: parts of one buffer, then EOF with the room still. */
static void test_read_pipe(struct t_ring *r)
{
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(reg_ring(r, INC), 0);
	memset(mem, 0, sizeof(mem));
	add_buf(mem[0], 256, 7);
	T_ASSERT_EQ(write(p[1], "hello world!", 12), 12);
	run_sel(r, IORING_OP_READ, p[0], 32, 12, 7, true);
	T_ASSERT_EQ(br->bufs[0].addr, (uintptr_t)mem[0] + 12);
	T_ASSERT_EQ(br->bufs[0].len, 244);
	T_ASSERT_EQ(write(p[1], "0123456789abcdefghij", 20), 20);
	/* A part as long as asked: len caps it (16 of 20). */
	run_sel(r, IORING_OP_READ, p[0], 16, 16, 7, true);
	T_ASSERT_EQ(memcmp(mem[0], "hello world!0123456789abcdef", 28), 0);
	T_ASSERT_EQ(br->bufs[0].len, 228);
	run_sel(r, IORING_OP_READ, p[0], 32, 4, 7, true);
	close(p[1]);
	/* EOF moves nothing: the buffer is reported, still with room. */
	run_sel(r, IORING_OP_READ, p[0], 32, 0, 7, true);
	T_ASSERT_EQ(br->bufs[0].addr, (uintptr_t)mem[0] + 32);
	T_ASSERT_EQ(br->bufs[0].len, 224);
	T_ASSERT_EQ(ring_head(r), 0);
	close(p[0]);
	unreg_ring(r);
}

/* RECV: a part that uses the buffer up moves on to the next entry. */
static void test_recv(struct t_ring *r)
{
	char data[100];
	int s[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(reg_ring(r, INC), 0);
	memset(mem, 0, sizeof(mem));
	for (int i = 0; i < 100; i++)
		data[i] = (char)('A' + i % 26);
	add_buf(mem[0], 64, 1);
	add_buf(mem[1], 64, 2);
	T_ASSERT_EQ(send(s[0], data, 40, 0), 40);
	run_sel(r, IORING_OP_RECV, s[1], 0, 40, 1, true);
	T_ASSERT_EQ(send(s[0], data + 40, 40, 0), 40);
	/* The rest of bid 1 (24 bytes) is all it takes: no BUF_MORE. */
	run_sel(r, IORING_OP_RECV, s[1], 0, 24, 1, false);
	T_ASSERT_EQ(memcmp(mem[0], data, 64), 0);
	T_ASSERT_EQ(br->bufs[0].len, 0);
	T_ASSERT_EQ(ring_head(r), 1);
	run_sel(r, IORING_OP_RECV, s[1], 0, 16, 2, true);
	T_ASSERT_EQ(memcmp(mem[1], data + 64, 16), 0);
	T_ASSERT_EQ(br->bufs[1].addr, (uintptr_t)mem[1] + 16);
	T_ASSERT_EQ(br->bufs[1].len, 48);
	close(s[0]);
	close(s[1]);
	unreg_ring(r);
}

/* Multishot RECV: each chunk lands right after the one before. */
static void test_recv_mshot(struct t_ring *r)
{
	struct io_uring_cqe cqe;
	struct io_uring_sqe *sqe;
	int s[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(reg_ring(r, INC), 0);
	memset(mem, 0, sizeof(mem));
	add_buf(mem[0], 256, 5);
	sqe = sel(r, IORING_OP_RECV, s[1], 0, MSHOT_UD);
	sqe->ioprio = IORING_RECV_MULTISHOT;
	T_ASSERT_EQ(t_submit(r), 1);
	for (int i = 0; i < 3; i++) {
		char chunk[10];

		memset(chunk, '0' + i, sizeof(chunk));
		T_ASSERT_EQ(send(s[0], chunk, sizeof(chunk), 0), 10);
		T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, MSHOT_UD);
		T_ASSERT_EQ(cqe.res, 10);
		T_ASSERT_EQ(cqe.flags & (F_BUF | F_BMORE | IORING_CQE_F_MORE),
			    F_BUF | F_BMORE | IORING_CQE_F_MORE);
		T_ASSERT_EQ(BID(cqe.flags), 5);
		T_ASSERT_EQ(mem[0][i * 10], '0' + i);
	}
	T_ASSERT_EQ(br->bufs[0].len, 226);
	close(s[0]);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, MSHOT_UD);
	T_ASSERT_EQ(cqe.res, 0);
	T_ASSERT(!(cqe.flags & IORING_CQE_F_MORE));
	close(s[1]);
	unreg_ring(r);
}

/*
 * A RECV bundle on an incremental ring: one buffer first (the size is not
 * known), then a round for what is left, cut to it; the CQE keeps the
 * first buffer's id and flags.
 */
static void test_recv_bundle(struct t_ring *r, int domain)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	char data[100];
	int s[2];

	if (domain == AF_UNIX)
		T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	else
		t_tcp_pair(s);
	T_ASSERT_EQ(reg_ring(r, INC), 0);
	memset(mem, 0, sizeof(mem));
	for (int i = 0; i < 100; i++)
		data[i] = (char)(i + 1);
	add_buf(mem[0], 64, 1);
	add_buf(mem[1], 64, 2);
	T_ASSERT_EQ(send(s[0], data, 100, 0), 100);
	for (int i = 0; i < 1000; i++) {
		int q = 0;

		T_ASSERT_EQ(ioctl(s[1], FIONREAD, &q), 0);
		if (q >= 100)
			break;
		poll(NULL, 0, 1);
	}
	sqe = sel(r, IORING_OP_RECV, s[1], 0, 1);
	sqe->ioprio = 1U << 4; /* IORING_RECVSEND_BUNDLE */
	T_ASSERT_EQ(t_submit(r), 1);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.res, 100);
	/* BUF_MORE is the last round's: bid 2 has room left. */
	T_ASSERT_EQ(cqe.flags & (F_BUF | F_BMORE), F_BUF | F_BMORE);
	T_ASSERT_EQ(BID(cqe.flags), 1);
	T_ASSERT_EQ(memcmp(mem[0], data, 64), 0);
	T_ASSERT_EQ(memcmp(mem[1], data + 64, 36), 0);
	T_ASSERT_EQ(ring_head(r), 1);
	T_ASSERT_EQ(br->bufs[1].addr, (uintptr_t)mem[1] + 36);
	T_ASSERT_EQ(br->bufs[1].len, 28);
	close(s[0]);
	close(s[1]);
	unreg_ring(r);
}

int main(void)
{
	struct t_ring r;

	t_require_engine();
	t_watchdog(30);
	br = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(br != MAP_FAILED);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	test_register(&r);
	test_read_pipe(&r);
	test_recv(&r);
	test_recv_mshot(&r);
	test_recv_bundle(&r, AF_INET);
	test_recv_bundle(&r, AF_UNIX);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
