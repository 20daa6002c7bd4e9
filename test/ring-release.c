/* SPDX-License-Identifier: MIT */
/*
 * A ring the program lets go of is torn down with all its state: many
 * rounds (more than the engine keeps torn-down rings around) of a ring
 * with provided buffers (legacy, more than one chunk of records, and a
 * buffer ring), registered buffers with tags, registered files and a
 * personality, used once, then unmapped and closed. Under `make check`
 * LeakSanitizer fails the run if any of it stays allocated and unreachable
 * after its ring was freed; both engines must use each ring alike. The
 * first ring's buffers are cloned into a ring kept to the end, which
 * must still write from them once their first ring is long gone.
 */
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include "helpers.h"

#define ROUNDS	 80  /* more than the engine's grave of torn rings (64) */
#define NLEGACY	 200 /* legacy buffers: more than one chunk of records */
#define BUFLEN	 16
#define PBUF_NR	 8
#define PBUF_GID 2

static char legacy[NLEGACY][BUFLEN];
static char regbuf[2][4096] __attribute__((aligned(4096)));
static struct t_ring keeper; /* holds round 0's buffers, cloned */

static void provide_legacy(struct t_ring *r)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_PROVIDE_BUFFERS, NLEGACY, legacy, BUFLEN, 0,
		  1);
	sqe->buf_group = 1;
	T_ASSERT_EQ(t_run(r, 1), 0);
}

/* A buffer ring in group PBUF_GID with PBUF_NR entries published. */
static void *pbuf_ring(struct t_ring *r)
{
	struct io_uring_buf_reg reg;
	struct io_uring_buf_ring *br;

	br = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(br != MAP_FAILED);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)br;
	reg.ring_entries = PBUF_NR;
	reg.bgid = PBUF_GID;
	T_ASSERT_EQ(t_register(r->fd, IORING_REGISTER_PBUF_RING, &reg, 1), 0);
	for (int i = 0; i < PBUF_NR; i++) {
		br->bufs[i].addr = (uintptr_t)legacy[i];
		br->bufs[i].len = BUFLEN;
		br->bufs[i].bid = i;
	}
	__atomic_store_n(&br->tail, PBUF_NR, __ATOMIC_RELEASE);
	return br;
}

/* Read what the pipe holds into a buffer of group bgid: the CQE flags. */
static unsigned int read_sel(struct t_ring *r, int fd, uint16_t bgid,
			     uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_READ, fd, NULL, BUFLEN, 0, ud);
	sqe->flags = IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	T_ASSERT_EQ(t_submit_and_wait(r, 1), 1);
	return t_expect_cqe(r, ud, 3);
}

static void round_once(int round)
{
	struct iovec iov[2] = {{regbuf[0], sizeof(regbuf[0])},
			       {regbuf[1], sizeof(regbuf[1])}};
	uint64_t tags[2] = {round + 1, 0};
	struct io_uring_rsrc_register rr;
	unsigned int flags;
	struct t_ring r;
	int p[2], fds[2];
	void *br;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	provide_legacy(&r);
	br = pbuf_ring(&r);
	memset(&rr, 0, sizeof(rr));
	rr.nr = 2;
	rr.data = (uintptr_t)iov;
	rr.tags = (uintptr_t)tags;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)),
		    0);
	fds[0] = p[0];
	fds[1] = p[1];
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, fds, 2), 0);
	T_ASSERT_GT(t_register(r.fd, IORING_REGISTER_PERSONALITY, NULL, 0), 0);
	if (!round) {
		struct nw_clone_buffers cb = {.src_fd = (uint32_t)r.fd};

		T_ASSERT_EQ(t_register(keeper.fd, IORING_REGISTER_CLONE_BUFFERS,
				       &cb, 1),
			    0);
	}

	/* Use both kinds of provided buffer once. */
	T_ASSERT_EQ(write(p[1], "abc", 3), 3);
	flags = read_sel(&r, p[0], 1, 2);
	T_ASSERT(flags & IORING_CQE_F_BUFFER);
	/* Legacy buffers are taken from the front: bid 0 first. */
	T_ASSERT_EQ(flags >> IORING_CQE_BUFFER_SHIFT, 0);
	T_ASSERT_EQ(memcmp(legacy[0], "abc", 3), 0);
	T_ASSERT_EQ(write(p[1], "def", 3), 3);
	flags = read_sel(&r, p[0], PBUF_GID, 3);
	T_ASSERT(flags & IORING_CQE_F_BUFFER);
	T_ASSERT_EQ(flags >> IORING_CQE_BUFFER_SHIFT, 0);
	T_ASSERT_EQ(memcmp(legacy[0], "def", 3), 0);

	/* Let go of the ring with everything still registered. */
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
	munmap(br, 4096);
}

/* WRITE_FIXED from the keeper's slot 0 (round 0's regbuf[0]). */
static void keeper_write(void)
{
	struct io_uring_sqe *sqe;
	char got[8];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	memcpy(regbuf[0], "kept-buf", 8);
	sqe = t_get_sqe(&keeper);
	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_WRITE_FIXED, p[1], regbuf[0], 8, 0, 9);
	sqe->buf_index = 0;
	T_ASSERT_EQ(t_run(&keeper, 9), 8);
	T_ASSERT_EQ(read(p[0], got, 8), 8);
	T_ASSERT_EQ(memcmp(got, "kept-buf", 8), 0);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	t_require_engine();
	t_watchdog(120);
	T_ASSERT_EQ(t_ring_init(&keeper, 8, NULL), 0);
	for (int i = 0; i < ROUNDS; i++)
		round_once(i);
	keeper_write();
	t_ring_exit(&keeper);
	/* One more ring: the last one let go of is looked at too. */
	{
		struct t_ring r;

		T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
		t_ring_exit(&r);
	}
	return T_EXIT_PASS;
}
