/* SPDX-License-Identifier: MIT */
/*
 * Buffer rings the ring allocates (IOU_PBUF_RING_MMAP, io_uring/kbuf.c and
 * memmap.c): the program maps them at IORING_OFF_PBUF_RING | bgid <<
 * IORING_OFF_PBUF_SHIFT, they start zeroed (again after a re-registration),
 * selection reads the entries published there, several groups stay apart,
 * a mapping outlives the unregistration, and the registration's errors.
 */
#include <sys/mman.h>
#include <unistd.h>
#include "helpers.h"

#define F_BUF	IORING_CQE_F_BUFFER
#define ENTRIES 512
#define NGROUPS 10
#define BGID0	60

static char bufs[NGROUPS][64];

static struct io_uring_buf_ring *map_ring(struct t_ring *r, uint16_t bgid,
					  size_t len)
{
	off_t off = (off_t)(IORING_OFF_PBUF_RING |
			    (uint64_t)bgid << IORING_OFF_PBUF_SHIFT);
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, off);

	T_ASSERT(m != MAP_FAILED);
	return m;
}

static bool all_zero(const void *p, size_t len)
{
	const char *c = p;

	for (size_t i = 0; i < len; i++)
		if (c[i])
			return false;
	return true;
}

static void test_errors(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	/* Unknown flags; an unregistration takes none. */
	T_ASSERT_EQ(t_pbuf_ring_reg(r.fd, 1, 4, NW_PBUF_RING_MMAP | 8, 0),
		    -EINVAL);
	T_ASSERT_EQ(t_pbuf_ring_reg(r.fd, 1, 3, NW_PBUF_RING_MMAP, 0), -EINVAL);
	T_ASSERT_EQ(t_pbuf_ring_reg(r.fd, 1, 65536, NW_PBUF_RING_MMAP, 0),
		    -EINVAL);
	T_ASSERT_EQ(t_pbuf_ring_reg(r.fd, 1, 4, NW_PBUF_RING_MMAP, 0), 0);
	T_ASSERT_EQ(t_pbuf_ring_reg(r.fd, 1, 4, NW_PBUF_RING_MMAP, 0), -EEXIST);
	T_ASSERT_EQ(t_pbuf_ring_unreg(r.fd, 1, NW_PBUF_RING_MMAP), -EINVAL);
	T_ASSERT_EQ(t_pbuf_ring_unreg(r.fd, 1, 0), 0);
	T_ASSERT_EQ(t_pbuf_ring_unreg(r.fd, 1, 0), -ENOENT);
	/* ring_addr is not looked at with MMAP (6.18). */
	T_ASSERT_EQ(t_pbuf_ring_reg(r.fd, 2, 8, NW_PBUF_RING_MMAP, 0x1234), 0);
	/* A bgid past what an offset can name still registers. */
	T_ASSERT_EQ(t_pbuf_ring_reg(r.fd, 4000, 32768, NW_PBUF_RING_MMAP, 0),
		    0);
	T_ASSERT_EQ(t_pbuf_ring_unreg(r.fd, 4000, 0), 0);
	T_ASSERT_EQ(t_pbuf_ring_unreg(r.fd, 2, 0), 0);
	t_ring_exit(&r);
}

/* One group: zeroed, published entries selected in order, re-zeroed. */
static void test_select(void)
{
	struct io_uring_buf_ring *br, *br2;
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	struct t_ring r;
	unsigned int f;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	T_ASSERT_EQ(t_pbuf_ring_reg(r.fd, 5, 1, NW_PBUF_RING_MMAP, 0), 0);
	br = map_ring(&r, 5, len);
	T_ASSERT(all_zero(br, len));
	t_read_select(&r, p[0], 5, -ENOBUFS);
	t_buf_ring_publish(br, 1, bufs[0], sizeof(bufs[0]), 89);
	T_ASSERT_EQ(write(p[1], "Hello", 5), 5);
	f = t_read_select(&r, p[0], 5, 5);
	T_ASSERT_EQ(f, F_BUF | (89 << IORING_CQE_BUFFER_SHIFT));
	T_ASSERT(!memcmp(bufs[0], "Hello", 5));
	t_read_select(&r, p[0], 5, -ENOBUFS);
	/* Anew: fresh zeroed memory at the same offset. */
	T_ASSERT_EQ(t_pbuf_ring_unreg(r.fd, 5, 0), 0);
	T_ASSERT_EQ(t_pbuf_ring_reg(r.fd, 5, 1, NW_PBUF_RING_MMAP, 0), 0);
	br2 = map_ring(&r, 5, len);
	T_ASSERT(all_zero(br2, len));
	t_buf_ring_publish(br2, 1, bufs[1], sizeof(bufs[1]), 3);
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	f = t_read_select(&r, p[0], 5, 1);
	T_ASSERT_EQ(f, F_BUF | (3 << IORING_CQE_BUFFER_SHIFT));
	munmap(br, len);
	munmap(br2, len);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* Several groups side by side; the mappings outlive the unregistration. */
static void test_groups(void)
{
	size_t len = ENTRIES * sizeof(struct io_uring_buf);
	struct io_uring_buf_ring *br[NGROUPS];
	struct t_ring r;
	unsigned int f;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	for (int i = 0; i < NGROUPS; i++) {
		T_ASSERT_EQ(t_pbuf_ring_reg(r.fd, (uint16_t)(BGID0 + i),
					    ENTRIES, NW_PBUF_RING_MMAP, 0),
			    0);
		br[i] = map_ring(&r, (uint16_t)(BGID0 + i), len);
		T_ASSERT(all_zero(br[i], len));
		t_buf_ring_publish(br[i], ENTRIES, bufs[i], sizeof(bufs[i]),
				   (uint16_t)(100 + i));
	}
	for (int i = NGROUPS - 1; i >= 0; i--) {
		char c = (char)('a' + i);

		T_ASSERT_EQ(write(p[1], &c, 1), 1);
		f = t_read_select(&r, p[0], (uint16_t)(BGID0 + i), 1);
		T_ASSERT_EQ(f, F_BUF | ((100U + i) << IORING_CQE_BUFFER_SHIFT));
		T_ASSERT_EQ(bufs[i][0], c);
		t_read_select(&r, p[0], (uint16_t)(BGID0 + i), -ENOBUFS);
	}
	for (int i = 0; i < NGROUPS; i++)
		T_ASSERT_EQ(t_pbuf_ring_unreg(r.fd, (uint16_t)(BGID0 + i), 0),
			    0);
	for (int i = 0; i < NGROUPS; i++) {
		memset(br[i], 0x5a, len);
		munmap(br[i], len);
	}
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_errors();
	test_select();
	test_groups();
	return T_EXIT_PASS;
}
