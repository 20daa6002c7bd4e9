/* SPDX-License-Identifier: MIT */
/*
 * IOU_PBUF_RING_MMAP on an IORING_SETUP_NO_MMAP ring (io_uring/memmap.c's
 * io_uring_mmap, kbuf.c's io_register_pbuf_ring): the rings and SQEs are
 * the program's and the ring fd does not map them, but a buffer ring the
 * ring allocates is mapped through the ring fd at IORING_OFF_PBUF_RING |
 * bgid << IORING_OFF_PBUF_SHIFT, as on any ring: selection reads the
 * entries published there, two mappings share the pages, a group of
 * another kind or none at that offset is -ENOMEM, and a new registration
 * starts zeroed. nowait serves these mappings through the preload's mmap
 * (docs/ring-memory.md): run directly on the library, the registration is
 * -EINVAL (a kernel without the feature); the rest runs again under the
 * preload and on the kernel.
 */
#include <sys/mman.h>
#include <unistd.h>
#include "helpers.h"

#define CHILD_ENV "NOWAIT_TEST_PBUF_NOMMAP_CHILD"
#define BGID	  5
#define F_BUF	  IORING_CQE_F_BUFFER

static size_t page_sz;
static char mem[4][65536] __attribute__((aligned(65536)));

/* A NO_MMAP ring of 8 entries over mem[0] (rings) and mem[1] (SQEs). */
static void ring_init(struct t_ring *r)
{
	struct io_uring_params p;
	char *rings = mem[0], *sqes = mem[1];
	int fd;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_NO_MMAP;
	NW_OFF_USER_ADDR(p.cq_off) = (uintptr_t)rings;
	NW_OFF_USER_ADDR(p.sq_off) = (uintptr_t)sqes;
	fd = t_setup(8, &p);
	T_ASSERT_GE(fd, 0);
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->p = p;
	r->sq_head = (unsigned int *)(rings + p.sq_off.head);
	r->sq_tail = (unsigned int *)(rings + p.sq_off.tail);
	r->sq_mask = (unsigned int *)(rings + p.sq_off.ring_mask);
	r->sq_entries = (unsigned int *)(rings + p.sq_off.ring_entries);
	r->sq_flags = (unsigned int *)(rings + p.sq_off.flags);
	r->sq_dropped = (unsigned int *)(rings + p.sq_off.dropped);
	r->sq_array = (unsigned int *)(rings + p.sq_off.array);
	r->cq_head = (unsigned int *)(rings + p.cq_off.head);
	r->cq_tail = (unsigned int *)(rings + p.cq_off.tail);
	r->cq_mask = (unsigned int *)(rings + p.cq_off.ring_mask);
	r->cq_entries = (unsigned int *)(rings + p.cq_off.ring_entries);
	r->cq_overflow = (unsigned int *)(rings + p.cq_off.overflow);
	r->cq_flags = (unsigned int *)(rings + p.cq_off.flags);
	r->cqes = (struct io_uring_cqe *)(rings + p.cq_off.cqes);
	r->sqes = (struct io_uring_sqe *)sqes;
}

/* mmap of the ring fd at off: the mapping, or MAP_FAILED with errno. */
static void *map_at(struct t_ring *r, uint64_t off, size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		    (off_t)off);
}

static uint64_t pbuf_off(uint16_t bgid)
{
	return IORING_OFF_PBUF_RING | (uint64_t)bgid << IORING_OFF_PBUF_SHIFT;
}

/* mmap at off fails with want (0: any error). */
static void map_fails(struct t_ring *r, uint64_t off, int want)
{
	errno = 0;
	T_ASSERT(map_at(r, off, page_sz) == MAP_FAILED);
	if (want && errno != want)
		fprintf(stderr, "mmap at %#llx: errno %d, not %d\n",
			(unsigned long long)off, errno, want);
	if (want)
		T_ASSERT_EQ(errno, want);
}

/* Selection through the mapped ring; a second mapping is the same pages. */
static void test_select(struct t_ring *r)
{
	struct io_uring_buf_ring *br, *br2;
	static char buf[2][32];
	unsigned int flags;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_pbuf_ring_reg(r->fd, BGID, 4, NW_PBUF_RING_MMAP, 0), 0);
	br = map_at(r, pbuf_off(BGID), page_sz);
	T_ASSERT(br != MAP_FAILED);
	T_ASSERT_EQ(br->tail, 0);
	/* The page offset within the group's window is not looked at. */
	br2 = map_at(r, pbuf_off(BGID) + page_sz, page_sz);
	T_ASSERT(br2 != MAP_FAILED);
	t_buf_ring_publish(br, 4, buf[0], sizeof(buf[0]), 89);
	T_ASSERT_EQ(br2->tail, 1);
	T_ASSERT_EQ(br2->bufs[0].bid, 89);
	T_ASSERT_EQ(write(p[1], "Hello", 5), 5);
	flags = t_read_select(r, p[0], BGID, 5);
	T_ASSERT(flags & F_BUF);
	T_ASSERT_EQ(flags >> IORING_CQE_BUFFER_SHIFT, 89);
	T_ASSERT(!memcmp(buf[0], "Hello", 5));
	/* An entry published through the second mapping is selected too. */
	t_buf_ring_publish(br2, 4, buf[1], sizeof(buf[1]), 90);
	T_ASSERT_EQ(write(p[1], "abc", 3), 3);
	flags = t_read_select(r, p[0], BGID, 3);
	T_ASSERT_EQ(flags >> IORING_CQE_BUFFER_SHIFT, 90);
	T_ASSERT(!memcmp(buf[1], "abc", 3));
	/* Empty again: no buffer. */
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	t_read_select(r, p[0], BGID, -ENOBUFS);
	munmap(br2, page_sz);
	/* Gone with the group; a new one starts zeroed. */
	T_ASSERT_EQ(t_pbuf_ring_unreg(r->fd, BGID, 0), 0);
	map_fails(r, pbuf_off(BGID), ENOMEM);
	T_ASSERT_EQ(t_pbuf_ring_reg(r->fd, BGID, 4, NW_PBUF_RING_MMAP, 0), 0);
	br2 = map_at(r, pbuf_off(BGID), page_sz);
	T_ASSERT(br2 != MAP_FAILED);
	T_ASSERT_EQ(br2->tail, 0);
	T_ASSERT_EQ(br2->bufs[0].addr, 0);
	T_ASSERT_EQ(t_pbuf_ring_unreg(r->fd, BGID, 0), 0);
	munmap(br2, page_sz);
	munmap(br, page_sz);
	close(p[0]);
	close(p[1]);
}

/*
 * What the ring fd does not map: -ENOMEM (io_uring_get_unmapped_area finds
 * no region), an address asked for -EINVAL, a mapping shorter than the
 * region -EFAULT (io_uring_mmap's vm_insert_pages).
 */
static void test_refused(struct t_ring *r)
{
	void *m;

	/* The rings and SQEs are the program's. */
	map_fails(r, IORING_OFF_SQ_RING, 0);
	map_fails(r, IORING_OFF_CQ_RING, 0);
	map_fails(r, IORING_OFF_SQES, 0);
	/* No group, a legacy group, a ring in program memory. */
	map_fails(r, pbuf_off(6), ENOMEM);
	T_ASSERT_EQ(t_pbuf_ring_reg(r->fd, 7, 4, 0, (uintptr_t)mem[2]), 0);
	map_fails(r, pbuf_off(7), ENOMEM);
	T_ASSERT_EQ(t_pbuf_ring_unreg(r->fd, 7, 0), 0);
	/* A bgid the offset cannot name: bits past IORING_OFF_MMAP_MASK. */
	T_ASSERT_EQ(t_pbuf_ring_reg(r->fd, 8, 512, NW_PBUF_RING_MMAP, 0), 0);
	map_fails(r, pbuf_off(8) | 1ULL << 32, ENOMEM);
	/* Two pages of ring, one mapped. */
	map_fails(r, pbuf_off(8), EFAULT);
	m = map_at(r, pbuf_off(8), 2 * page_sz);
	T_ASSERT(m != MAP_FAILED);
	munmap(m, 2 * page_sz);
	/* The kernel picks the address (a hint is refused too). */
	errno = 0;
	T_ASSERT(mmap(mem[3], 2 * page_sz, PROT_READ | PROT_WRITE, MAP_SHARED,
		      r->fd, (off_t)pbuf_off(8)) == MAP_FAILED);
	T_ASSERT_EQ(errno, EINVAL);
	T_ASSERT_EQ(t_pbuf_ring_unreg(r->fd, 8, 0), 0);
}

/* Two groups' mappings stay apart. */
static void test_groups(struct t_ring *r)
{
	struct io_uring_buf_ring *a, *b;

	T_ASSERT_EQ(t_pbuf_ring_reg(r->fd, 1, 256, NW_PBUF_RING_MMAP, 0), 0);
	T_ASSERT_EQ(t_pbuf_ring_reg(r->fd, 2, 4, NW_PBUF_RING_MMAP, 0), 0);
	a = map_at(r, pbuf_off(1), 256 * sizeof(struct io_uring_buf));
	b = map_at(r, pbuf_off(2), page_sz);
	T_ASSERT(a != MAP_FAILED && b != MAP_FAILED);
	t_buf_ring_publish(a, 256, mem[3], 64, 1);
	T_ASSERT_EQ(a->tail, 1);
	T_ASSERT_EQ(b->tail, 0);
	T_ASSERT_EQ(b->bufs[0].addr, 0);
	munmap(a, 256 * sizeof(struct io_uring_buf));
	munmap(b, page_sz);
	T_ASSERT_EQ(t_pbuf_ring_unreg(r->fd, 1, 0), 0);
	T_ASSERT_EQ(t_pbuf_ring_unreg(r->fd, 2, 0), 0);
}

/* Run directly on the library: nothing maps the pages, so no such rings. */
static void test_direct(void)
{
	struct t_ring r;

	ring_init(&r);
	T_ASSERT_EQ(t_pbuf_ring_reg(r.fd, BGID, 4, NW_PBUF_RING_MMAP, 0),
		    -EINVAL);
	map_fails(&r, pbuf_off(BGID), 0);
	map_fails(&r, IORING_OFF_SQ_RING, 0);
	close(r.fd);
}

int main(void)
{
	struct t_ring r;

	page_sz = (size_t)sysconf(_SC_PAGESIZE);
	if (t_engine() == T_ENGINE_USER) {
		test_direct();
		t_rerun_preloaded(CHILD_ENV, 30000);
		return 0;
	}
	if (getenv(CHILD_ENV))
		T_ASSERT(t_ring_is_nowait());
	ring_init(&r);
	test_refused(&r);
	test_select(&r);
	test_groups(&r);
	close(r.fd);
	return 0;
}
