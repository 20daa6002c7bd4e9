/* SPDX-License-Identifier: MIT */
/*
 * Multishot RECV and RECVMSG (IORING_RECV_MULTISHOT, io_uring/net.c): one
 * CQE with IORING_CQE_F_MORE and a provided buffer per chunk while armed;
 * the end (EOF, -ENOBUFS, cancel) without F_MORE; prep errors; a buffer
 * ring refilled as CQEs come (wrap-around); RECVMSG's io_uring_recvmsg_out
 * layout on a UDP socket.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>
#include "helpers.h"

#define MULTISHOT  (1U << 1) /* IORING_RECV_MULTISHOT */
#define F_BUF	   IORING_CQE_F_BUFFER
#define F_MORE	   IORING_CQE_F_MORE
#define F_NONEMPTY IORING_CQE_F_SOCK_NONEMPTY
#define BID(f)	   ((f) >> IORING_CQE_BUFFER_SHIFT)
#define BUFLEN	   16

static char bufs[64][BUFLEN];

static struct io_uring_sqe *sqe_new(struct t_ring *r, int op, int fd,
				    const void *addr, unsigned int len,
				    uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, op, fd, addr, len, 0, ud);
	return sqe;
}

static void provide(struct t_ring *r, int nbufs, uint16_t bgid, uint16_t bid)
{
	struct io_uring_sqe *sqe = sqe_new(r, IORING_OP_PROVIDE_BUFFERS, nbufs,
					   bufs[bid], BUFLEN, 99);

	sqe->off = bid;
	sqe->buf_group = bgid;
	T_ASSERT_EQ(t_submit_and_wait(r, 1), 1);
	t_expect_cqe(r, 99, 0);
}

static struct io_uring_sqe *recv_mshot(struct t_ring *r, int op, int fd,
				       const void *addr, uint16_t bgid,
				       uint64_t ud)
{
	struct io_uring_sqe *sqe =
		sqe_new(r, op, fd, addr, op == IORING_OP_RECVMSG, ud);

	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	sqe->ioprio = MULTISHOT;
	return sqe;
}

/* Wait for a CQE of ud: res, flags as given (bid included). */
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
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int s[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	sqe = recv_mshot(&r, IORING_OP_RECV, s[0], NULL, 1, 1);
	sqe->flags &= ~IOSQE_BUFFER_SELECT;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 1, -EINVAL, 0);
	recv_mshot(&r, IORING_OP_RECV, s[0], NULL, 1, 3)->msg_flags =
		MSG_WAITALL;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 3, -EINVAL, 0);
	/* No buffer at all: ends at once. */
	recv_mshot(&r, IORING_OP_RECV, s[0], NULL, 1, 4);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 4, -ENOBUFS, 0);
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

/*
 * Chunks as they come, a buffer each (SOCK_NONEMPTY while more is queued);
 * out of buffers it ends with -ENOBUFS; re-armed, EOF ends it with 0.
 */
static void test_recv_stream(void)
{
	char big[40];
	struct t_ring r;
	int s[2];

	for (unsigned int i = 0; i < sizeof(big); i++)
		big[i] = (char)('A' + i);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	provide(&r, 4, 1, 0);
	/* Data already there when it is armed. */
	T_ASSERT_EQ(write(s[1], "hello", 5), 5);
	recv_mshot(&r, IORING_OP_RECV, s[0], NULL, 1, 10);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect(&r, 10, 5, F_MORE | F_BUF | (0 << 16));
	T_ASSERT_EQ(memcmp(bufs[0], "hello", 5), 0);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(s[1], big, sizeof(big)), (ssize_t)sizeof(big));
	expect(&r, 10, 16, F_MORE | F_BUF | F_NONEMPTY | (1 << 16));
	expect(&r, 10, 16, F_MORE | F_BUF | F_NONEMPTY | (2 << 16));
	expect(&r, 10, 8, F_MORE | F_BUF | (3 << 16));
	T_ASSERT_EQ(memcmp(bufs[1], big, 16), 0);
	T_ASSERT_EQ(memcmp(bufs[3], big + 32, 8), 0);
	t_expect_no_cqe(&r, 20);
	T_ASSERT_EQ(write(s[1], "x", 1), 1);
	expect(&r, 10, -ENOBUFS, 0);

	/* Armed again: the byte left, then EOF. */
	provide(&r, 2, 1, 4);
	recv_mshot(&r, IORING_OP_RECV, s[0], NULL, 1, 11);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect(&r, 11, 1, F_MORE | F_BUF | (4 << 16));
	T_ASSERT_EQ(shutdown(s[1], SHUT_WR), 0);
	expect(&r, 11, 0, 0);
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

/* ASYNC_CANCEL ends it: -ECANCELED without F_MORE. */
static void test_cancel(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int s[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	provide(&r, 4, 2, 0);
	recv_mshot(&r, IORING_OP_RECV, s[0], NULL, 2, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(write(s[1], "ab", 2), 2);
	expect(&r, 1, 2, F_MORE | F_BUF | (0 << 16));
	sqe = t_get_sqe(&r);
	t_prep_nop(sqe, 2);
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->addr = 1;
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 1);
	for (int i = 0; i < 2; i++) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		if (cqe.user_data == 1) {
			T_ASSERT_EQ(cqe.res, -ECANCELED);
			T_ASSERT_EQ(cqe.flags, 0);
		} else {
			T_ASSERT_EQ(cqe.user_data, 2);
			T_ASSERT_EQ(cqe.res, 0);
		}
	}
	/* The buffers it did not use are still there. */
	sqe = sqe_new(&r, IORING_OP_REMOVE_BUFFERS, 8, NULL, 0, 3);
	sqe->buf_group = 2;
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 3, 3, 0);
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

/*
 * Data sent right before the cancel is received first (recv-multishot.t's
 * early_error=3): the kernel's wake-up receives it in task work before
 * the send returns; the engine's cancel gives the recv that last turn.
 */
static void test_cancel_pending(void)
{
	struct io_uring_cqe cqe;
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int s[2], data = 0, done = 0;

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	provide(&r, 4, 2, 0);
	recv_mshot(&r, IORING_OP_RECV, s[0], NULL, 2, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(write(s[1], "cd", 2), 2);
	sqe = t_get_sqe(&r);
	t_prep_nop(sqe, 2);
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->addr = 1;
	T_ASSERT_EQ(t_submit(&r), 1);
	while (done != 2) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		if (cqe.user_data == 2) {
			T_ASSERT_EQ(cqe.res, 0);
			done++;
		} else if (cqe.flags & F_MORE) {
			T_ASSERT_EQ(cqe.user_data * 100 + cqe.res, 100 + 2);
			data++;
		} else {
			T_ASSERT_EQ(cqe.user_data * 100 - cqe.res,
				    100 + ECANCELED);
			done++;
		}
	}
	T_ASSERT_EQ(data, 1);
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

/* Take CQEs until the recv's last one (no F_MORE); returns its res. */
static int race_collect(struct t_ring *r, int *nbufs, int *nbytes)
{
	for (;;) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe_timeout(r, &cqe, 2000), 0);
		T_ASSERT_EQ(cqe.user_data, 1);
		if (!(cqe.flags & F_MORE))
			return cqe.res;
		T_ASSERT_GT(cqe.res, 0);
		T_ASSERT(cqe.flags & F_BUF);
		(*nbufs)++;
		*nbytes += cqe.res;
	}
}

/* Read what is left in fd; returns the number of bytes. */
static int drain(int fd)
{
	char sink[4096];
	ssize_t n;
	int total = 0;

	while ((n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
		total += (int)n;
	return total;
}

#define RACE_BUFS   1024
#define RACE_ROUNDS 200
#define RACE_CHUNKS 64
static char race_bufs[RACE_BUFS][BUFLEN];

/*
 * The other thread of test_cancel_race: each round it writes RACE_CHUNKS
 * chunks one by one (each an edge, a turn of receives that ends in EAGAIN)
 * and, after a number of them that varies, SYNC_CANCELs user_data 1.
 */
struct racer {
	struct t_ring *r;
	int fd;
	int round; /* the round the test thread has armed */
	int done;  /* rounds finished here */
	int res;   /* SYNC_CANCEL's result */
};

static int race_cancel(struct racer *c, int round)
{
	struct io_uring_sync_cancel_reg reg = {.addr = 1,
					       .timeout = {.tv_sec = 2}};
	uint64_t t0 = t_now_us();

	while (t_now_us() - t0 < (uint64_t)(round % 5) * 4)
		;
	return t_register(c->r->fd, IORING_REGISTER_SYNC_CANCEL, &reg, 1);
}

static void *racer_main(void *arg)
{
	struct racer *c = arg;
	char chunk[BUFLEN];

	memset(chunk, 'x', sizeof(chunk));
	for (int round = 0; round < RACE_ROUNDS; round++) {
		while (__atomic_load_n(&c->round, __ATOMIC_ACQUIRE) <= round)
			;
		for (int i = 0; i < RACE_CHUNKS; i++) {
			if (i == round % RACE_CHUNKS)
				c->res = race_cancel(c, round);
			if (write(c->fd, chunk, sizeof(chunk)) != BUFLEN)
				abort();
		}
		__atomic_store_n(&c->done, round + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * SYNC_CANCEL from another thread, while data flows, of a multishot recv
 * that keeps receiving on the submit side: the cancel finds it (0), the
 * recv always ends with -ECANCELED, the buffers it did not use are still
 * there and no byte is lost.
 */
static void test_cancel_race(void)
{
	struct racer c = {0};
	struct io_uring_sqe *sqe;
	struct t_ring r;
	pthread_t th;
	int s[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, RACE_BUFS / 2, NULL), 0);
	c.r = &r;
	c.fd = s[1];
	T_ASSERT_EQ(pthread_create(&th, NULL, racer_main, &c), 0);
	for (int round = 0; round < RACE_ROUNDS; round++) {
		int nbufs = 0, nbytes = 0, rres;

		sqe = sqe_new(&r, IORING_OP_PROVIDE_BUFFERS, RACE_BUFS,
			      race_bufs, BUFLEN, 99);
		sqe->buf_group = 4;
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		t_expect_cqe(&r, 99, 0);
		recv_mshot(&r, IORING_OP_RECV, s[0], NULL, 4, 1);
		T_ASSERT_EQ(t_submit(&r), 1);
		__atomic_store_n(&c.round, round + 1, __ATOMIC_RELEASE);
		rres = race_collect(&r, &nbufs, &nbytes);
		while (__atomic_load_n(&c.done, __ATOMIC_ACQUIRE) <= round)
			;
		T_ASSERT_EQ(c.res, 0);
		T_ASSERT_EQ(rres, -ECANCELED);
		sqe = sqe_new(&r, IORING_OP_REMOVE_BUFFERS, RACE_BUFS, NULL, 0,
			      3);
		sqe->buf_group = 4;
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		t_expect_cqe(&r, 3, RACE_BUFS - nbufs);
		T_ASSERT_EQ(nbytes + drain(s[0]), RACE_CHUNKS * BUFLEN);
	}
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	t_ring_exit(&r);
	close(s[0]);
	close(s[1]);
}

/*
 * The child of test_exit_armed: a multishot recv and a multishot poll on a
 * registered socket, the ring let go of, then data arrives. Exits 0 if
 * nothing crashed meanwhile.
 */
static void exit_armed_child(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int s[2];

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, &s[0], 1), 0);
	provide(&r, 4, 5, 0);
	recv_mshot(&r, IORING_OP_RECV, 0, NULL, 5, 1)->flags |=
		IOSQE_FIXED_FILE;
	sqe = t_get_sqe(&r);
	t_prep_poll_add(sqe, 0, POLLIN, IORING_POLL_ADD_MULTI, 2);
	sqe->flags |= IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_no_cqe(&r, 20);
	t_ring_exit(&r);
	for (int i = 0; i < 3; i++) {
		T_ASSERT_EQ(write(s[1], "abc", 3), 3);
		usleep(100000);
	}
	_exit(0);
}

/* Multishot requests armed with a fixed file when the ring goes. */
static void test_exit_armed(void)
{
	pid_t pid = fork();
	int status;

	T_ASSERT(pid >= 0);
	if (!pid)
		exit_armed_child();
	status = t_waitpid_timeout(pid, 5000);
	T_ASSERT(status >= 0 && WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* A buffer ring, refilled from each CQE, across several wraps. */
static void test_buf_ring(void)
{
	struct io_uring_buf_reg reg;
	struct io_uring_buf_ring *br;
	const unsigned int entries = 4;
	uint16_t tail = 0;
	struct t_ring r;
	int s[2];

	br = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(br != MAP_FAILED);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, s), 0);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)br;
	reg.ring_entries = entries;
	reg.bgid = 3;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PBUF_RING, &reg, 1), 0);
	for (uint16_t i = 0; i < entries; i++) {
		br->bufs[tail & (entries - 1)] = (struct io_uring_buf){
			.addr = (uintptr_t)bufs[i], .len = BUFLEN, .bid = i};
		tail++;
	}
	__atomic_store_n(&br->tail, tail, __ATOMIC_RELEASE);
	recv_mshot(&r, IORING_OP_RECV, s[0], NULL, 3, 7);
	T_ASSERT_EQ(t_submit(&r), 1);
	for (unsigned int i = 0; i < 5 * entries; i++) {
		char msg[8];
		unsigned int f, bid;
		int len = snprintf(msg, sizeof(msg), "m%u", i);

		T_ASSERT_EQ(write(s[1], msg, (size_t)len), len);
		f = t_expect_cqe(&r, 7, len);
		T_ASSERT_EQ(f & (F_MORE | F_BUF), F_MORE | F_BUF);
		bid = BID(f);
		T_ASSERT_EQ(bid, i % entries);
		T_ASSERT_EQ(memcmp(bufs[bid], msg, (size_t)len), 0);
		/* Give it back at the tail. */
		br->bufs[tail & (entries - 1)] =
			(struct io_uring_buf){.addr = (uintptr_t)bufs[bid],
					      .len = BUFLEN,
					      .bid = (uint16_t)bid};
		tail++;
		__atomic_store_n(&br->tail, tail, __ATOMIC_RELEASE);
	}
	T_ASSERT_EQ(shutdown(s[1], SHUT_WR), 0);
	expect(&r, 7, 0, 0);
	t_ring_exit(&r);
	munmap(br, 4096);
	close(s[0]);
	close(s[1]);
}

static int udp_socket(struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	T_ASSERT_GE(fd, 0);
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_ASSERT_EQ(bind(fd, (struct sockaddr *)addr, sizeof(*addr)), 0);
	T_ASSERT_EQ(getsockname(fd, (struct sockaddr *)addr, &len), 0);
	return fd;
}

/* RECVMSG multishot: out header, then the name, then the payload. */
static void test_recvmsg_udp(void)
{
	struct sockaddr_in ra, sa, *name;
	struct io_uring_recvmsg_out *out;
	const size_t hdr = sizeof(*out) + sizeof(struct sockaddr_in);
	struct msghdr msg;
	struct t_ring r;
	int rfd, sfd;

	rfd = udp_socket(&ra);
	sfd = udp_socket(&sa);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	provide(&r, 3, 4, 0);
	/* Each buffer: 16 bytes of header + 16 of name: no room for data. */
	memset(&msg, 0, sizeof(msg));
	msg.msg_namelen = sizeof(struct sockaddr_in);
	recv_mshot(&r, IORING_OP_RECVMSG, rfd, &msg, 4, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(
		sendto(sfd, "dgram", 5, 0, (struct sockaddr *)&ra, sizeof(ra)),
		5);
	expect(&r, 1, -EFAULT, 0);

	/* One buffer of 64 bytes: room for 32 of payload. */
	{
		struct io_uring_sqe *sqe =
			sqe_new(&r, IORING_OP_PROVIDE_BUFFERS, 1, bufs[10],
				4 * BUFLEN, 98);

		sqe->off = 1;
		sqe->buf_group = 6;
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		t_expect_cqe(&r, 98, 0);
	}
	recv_mshot(&r, IORING_OP_RECVMSG, rfd, &msg, 6, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	expect(&r, 2, (int)hdr + 5, F_MORE | F_BUF | (1 << 16));
	out = (void *)bufs[10];
	T_ASSERT_EQ(out->namelen, sizeof(struct sockaddr_in));
	T_ASSERT_EQ(out->payloadlen, 5);
	T_ASSERT_EQ(out->controllen, 0);
	name = (void *)(out + 1);
	T_ASSERT_EQ(name->sin_port, sa.sin_port);
	T_ASSERT_EQ(memcmp((char *)bufs[10] + hdr, "dgram", 5), 0);
	/* Out of buffers: -ENOBUFS at the next datagram. */
	T_ASSERT_EQ(
		sendto(sfd, "more", 4, 0, (struct sockaddr *)&ra, sizeof(ra)),
		4);
	expect(&r, 2, -ENOBUFS, 0);
	t_ring_exit(&r);
	close(rfd);
	close(sfd);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_exit_armed(); /* first: it forks, no engine thread yet */
	test_prep_errors();
	test_recv_stream();
	test_cancel();
	test_cancel_pending();
	test_cancel_race();
	test_buf_ring();
	test_recvmsg_udp();
	return T_EXIT_PASS;
}
