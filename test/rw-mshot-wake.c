/* SPDX-License-Identifier: MIT */
/*
 * A READ_MULTISHOT on a pipe reads each write of the program by itself:
 * the kernel's pipe wake-up queues the read's task work, which runs as
 * the write(2) returns, so its CQE is there at once and the next write's
 * data is not in that read (liburing 2.15's read-mshot writes every 1 ms
 * and counts one buffer per write). The engine learns of the write from
 * the preload's write interposers (nowait_hook_wrote, called here by
 * hand when the test is linked with the engine; the preloaded rerun has
 * the real interposer), and harvests after its reactor thread's round,
 * which may have taken the edge first. Without that a late reactor
 * thread reads two writes at once, or the CQE is not there yet.
 */
#include <stdlib.h>
#include <unistd.h>
#include <nowait-hook.h>
#include "helpers.h"

#define CHILD_ENV "NOWAIT_TEST_MSHOTWAKE_CHILD"
#define BUFLEN	  32
#define NBUF	  8
#define BGID	  5
#define ROUNDS	  6

static char bufs[NBUF][BUFLEN];

static struct io_uring_buf_ring *pbuf_setup(struct t_ring *r)
{
	struct io_uring_buf_ring *br;
	struct io_uring_buf_reg reg;

	T_ASSERT_EQ(posix_memalign((void **)&br, 4096, 4096), 0);
	memset(br, 0, 4096);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)br;
	reg.ring_entries = NBUF;
	reg.bgid = BGID;
	T_ASSERT_EQ(t_register(r->fd, IORING_REGISTER_PBUF_RING, &reg, 1), 0);
	for (uint16_t bid = 0; bid < NBUF; bid++) {
		struct io_uring_buf *e = &br->bufs[bid];

		e->addr = (uintptr_t)bufs[bid];
		e->len = BUFLEN;
		e->bid = bid;
	}
	__atomic_store_n(&br->tail, (uint16_t)NBUF, __ATOMIC_RELEASE);
	return br;
}

/* write(2), then what the preload's interposer does after it. */
static void do_write(int fd, const char *msg, size_t len)
{
	T_ASSERT_EQ(write(fd, msg, len), (ssize_t)len);
	if (t_engine() == T_ENGINE_USER)
		nowait_hook_wrote();
}

static void run_checks(void)
{
	static const char msg[] = "this is message N\n"; /* 18 bytes */
	struct io_uring_buf_ring *br;
	struct io_uring_cqe cqe;
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	br = pbuf_setup(&r);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, NW_OP_READ_MULTISHOT, p[0], NULL, 0, 0, 1);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), -EAGAIN);
	for (int i = 0; i < ROUNDS; i++) {
		unsigned int f;

		do_write(p[1], msg, sizeof(msg) - 1);
		/* Read by the time write returned, and by itself. */
		T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, 1);
		T_ASSERT_EQ(cqe.res, (int)sizeof(msg) - 1);
		f = cqe.flags;
		T_ASSERT(f & IORING_CQE_F_MORE);
		T_ASSERT(f & IORING_CQE_F_BUFFER);
		T_ASSERT_EQ(f >> IORING_CQE_BUFFER_SHIFT, (unsigned int)i);
		T_ASSERT_EQ(memcmp(bufs[i], msg, sizeof(msg) - 1), 0);
		T_ASSERT_EQ(t_peek_cqe(&r, &cqe), -EAGAIN);
	}
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_ASYNC_CANCEL, -1, NULL, 0, 0, 2);
	sqe->addr = 1;
	T_ASSERT_EQ(t_submit_and_wait(&r, 2), 1);
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.res, cqe.user_data == 2 ? 0 : -ECANCELED);
		T_ASSERT(!(cqe.flags & IORING_CQE_F_MORE));
	}
	t_ring_exit(&r);
	free(br);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	t_watchdog(60);
	return t_run_also_preloaded(CHILD_ENV, run_checks);
}
