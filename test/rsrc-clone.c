/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_CLONE_BUFFERS (io_uring/rsrc.c io_register_clone_buffers):
 * another ring's registered buffers, by fd or registered ring index, whole
 * or a range (src_off, dst_off, nr), into an empty table or replacing one
 * (DST_REPLACE: the slots outside the range kept);
 * the clones outlive the source's unregistration; and the errors in the
 * kernel's order (-EBUSY first, -EINVAL, -EBADF, -EOPNOTSUPP, -ENXIO,
 * -EOVERFLOW).
 */
#include <sys/uio.h>
#include <unistd.h>
#include "helpers.h"

#define NBUF 3
#define BLEN 4096

static char bufs[NBUF][BLEN] __attribute__((aligned(4096)));
static int pfd[2];

static int clone_bufs(struct t_ring *dst, unsigned int src_fd,
		      unsigned int flags, unsigned int src_off,
		      unsigned int dst_off, unsigned int nr)
{
	struct nw_clone_buffers cb;

	memset(&cb, 0, sizeof(cb));
	cb.src_fd = src_fd;
	cb.flags = flags;
	cb.src_off = src_off;
	cb.dst_off = dst_off;
	cb.nr = nr;
	return t_register(dst->fd, IORING_REGISTER_CLONE_BUFFERS, &cb, 1);
}

/* READ_FIXED of the pipe into buf (slot idx): res must be want. */
static void read_fixed(struct t_ring *r, unsigned int idx, char *buf, int want)
{
	struct io_uring_sqe *sqe;

	if (want > 0)
		T_ASSERT_EQ(write(pfd[1], "clone", 5), 5);
	sqe = t_get_sqe(r);
	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_READ_FIXED, pfd[0], buf, 5, 0, 0x42);
	sqe->buf_index = (uint16_t)idx;
	T_ASSERT_EQ(t_submit_and_wait(r, 1), 1);
	t_expect_cqe(r, 0x42, want);
	if (want > 0) {
		T_ASSERT(!memcmp(buf, "clone", 5));
		memset(buf, 0, 5);
	}
}

static void reg_bufs(struct t_ring *r)
{
	struct iovec iov[NBUF];

	for (int i = 0; i < NBUF; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = BLEN;
	}
	T_ASSERT_EQ(t_register(r->fd, IORING_REGISTER_BUFFERS, iov, NBUF), 0);
}

static void test_errors(void)
{
	struct t_ring a, b, c;
	struct nw_clone_buffers cb;

	T_ASSERT_EQ(t_ring_init(&a, 4, NULL), 0);
	T_ASSERT_EQ(t_ring_init(&b, 4, NULL), 0);
	T_ASSERT_EQ(t_ring_init(&c, 4, NULL), 0);
	/* A source without buffers. */
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 0, 0, 0, 0), -ENXIO);
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 0, 0, 0, 1), -ENXIO);
	reg_bufs(&a);
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 4, 0, 0, 0), -EINVAL);
	memset(&cb, 0, sizeof(cb));
	cb.src_fd = (unsigned int)a.fd;
	cb.pad[1] = 1;
	T_ASSERT_EQ(t_register(b.fd, IORING_REGISTER_CLONE_BUFFERS, &cb, 1),
		    -EINVAL);
	cb.pad[1] = 0;
	T_ASSERT_EQ(t_register(b.fd, IORING_REGISTER_CLONE_BUFFERS, &cb, 2),
		    -EINVAL);
	T_ASSERT_EQ(t_register(b.fd, IORING_REGISTER_CLONE_BUFFERS, NULL, 1),
		    -EINVAL);
	T_ASSERT_EQ(clone_bufs(&b, 999, 0, 0, 0, 0), -EBADF);
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)pfd[0], 0, 0, 0, 0),
		    -EOPNOTSUPP);
	T_ASSERT_EQ(clone_bufs(&b, 100, NW_REGISTER_SRC_REGISTERED, 0, 0, 0),
		    -EINVAL);
	T_ASSERT_EQ(clone_bufs(&b, 7, NW_REGISTER_SRC_REGISTERED, 0, 0, 0),
		    -EBADF);
	/* Offsets need nr; ranges past the source or wrapping. */
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 0, 1, 0, 0), -EINVAL);
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 0, 0, 1, 0), -EINVAL);
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 0, 0, 0, NBUF + 1),
		    -EINVAL);
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 0, 2, 0, 2), -EOVERFLOW);
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 0, 0, 0xffffffffU, 1),
		    -EOVERFLOW);
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 0, 0, 16384, 1),
		    -EINVAL);
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 0, 0xffffffffU, 0, 1),
		    -EOVERFLOW);
	/* Nothing failed changed b: it is still empty. */
	read_fixed(&b, 0, bufs[0], -EFAULT);
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 0, 0, 0, 0), 0);
	/* -EBUSY comes before anything else is looked at. */
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 0, 0, 0, 0), -EBUSY);
	T_ASSERT_EQ(clone_bufs(&b, 999, 4, 0, 0, 0), -EINVAL);
	T_ASSERT_EQ(clone_bufs(&b, 999, 0, 0, 0, 0), -EBUSY);
	/* A target with buffers: REPLACE, but the source has none. */
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)c.fd, NW_REGISTER_DST_REPLACE,
			       0, 0, 0),
		    -ENXIO);
	read_fixed(&b, 2, bufs[2], 5);
	t_ring_exit(&a);
	t_ring_exit(&b);
	t_ring_exit(&c);
}

/* Whole, ranges, REPLACE, the registered index, and outliving the source. */
static void test_clone(void)
{
	struct io_uring_rsrc_update up = {.offset = 3};
	struct t_ring a, b;

	T_ASSERT_EQ(t_ring_init(&a, 4, NULL), 0);
	T_ASSERT_EQ(t_ring_init(&b, 4, NULL), 0);
	reg_bufs(&a);
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, 0, 0, 0, 0), 0);
	for (int i = 0; i < NBUF; i++)
		read_fixed(&b, (unsigned int)i, bufs[i], 5);
	/* Slot 1 from a's slot 2; slots 0 and 2 kept. */
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, NW_REGISTER_DST_REPLACE,
			       2, 1, 1),
		    0);
	read_fixed(&b, 0, bufs[0], 5);
	read_fixed(&b, 1, bufs[2], 5);
	read_fixed(&b, 1, bufs[1], -EFAULT);
	read_fixed(&b, 2, bufs[2], 5);
	/* From a registered ring index: slots 0-1 of a at 4-5 of b. */
	up.data = (uint64_t)a.fd;
	T_ASSERT_EQ(t_register(b.fd, IORING_REGISTER_RING_FDS, &up, 1), 1);
	T_ASSERT_EQ(
		clone_bufs(&b, 3,
			   NW_REGISTER_SRC_REGISTERED | NW_REGISTER_DST_REPLACE,
			   0, 4, 2),
		0);
	read_fixed(&b, 0, bufs[0], 5);
	read_fixed(&b, 1, bufs[2], 5);
	read_fixed(&b, 2, bufs[2], 5);
	read_fixed(&b, 3, bufs[0], -EFAULT);
	read_fixed(&b, 4, bufs[0], 5);
	read_fixed(&b, 5, bufs[1], 5);
	read_fixed(&b, 6, bufs[1], -EFAULT);
	/* The source lets go: the clones stay usable. */
	T_ASSERT_EQ(t_register(a.fd, IORING_UNREGISTER_BUFFERS, NULL, 0), 0);
	read_fixed(&b, 5, bufs[1], 5);
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)a.fd, NW_REGISTER_DST_REPLACE,
			       0, 0, 0),
		    -ENXIO);
	/* From itself, with REPLACE: slots 4-5 to 0-1, the rest kept. */
	T_ASSERT_EQ(clone_bufs(&b, (unsigned int)b.fd, NW_REGISTER_DST_REPLACE,
			       4, 0, 2),
		    0);
	read_fixed(&b, 0, bufs[0], 5);
	read_fixed(&b, 1, bufs[1], 5);
	read_fixed(&b, 2, bufs[2], 5);
	read_fixed(&b, 3, bufs[2], -EFAULT);
	read_fixed(&b, 4, bufs[0], 5);
	T_ASSERT_EQ(t_register(b.fd, IORING_UNREGISTER_BUFFERS, NULL, 0), 0);
	read_fixed(&b, 0, bufs[0], -EFAULT);
	t_ring_exit(&a);
	t_ring_exit(&b);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	T_ASSERT_EQ(pipe(pfd), 0);
	test_errors();
	test_clone();
	return T_EXIT_PASS;
}
