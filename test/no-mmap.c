/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_NO_MMAP (6.5+), as liburing's io_uring_queue_init_mem uses
 * it: the program's memory holds the rings (cq_off.user_addr, sized by the
 * kernel's rule and page-aligned) and the SQEs (sq_off.user_addr). The
 * kernel's checks and errnos: a zero address -EFAULT, an unaligned one
 * -EINVAL, one that wraps -EOVERFLOW, memory not all there or read-only
 * -EFAULT, the rings checked before the SQEs; user_addr given back with
 * NO_MMAP and zeroed without it. Then NOPs and reads through the program's
 * memory, with an unmapped guard page right after each region (a layout
 * that needed more than the kernel's size would fault), across layouts;
 * and a shared writable mmap of the ring fd fails.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "helpers.h"

#define FILE_LEN 65536

static size_t page_sz;
static int data_fd = -1;

static size_t page_align(size_t len)
{
	return (len + page_sz - 1) & ~(page_sz - 1);
}

/* The kernel's (and liburing's) size of the rings region. */
static size_t k_rings_size(const struct io_uring_params *p)
{
	size_t cqe = (p->flags & IORING_SETUP_CQE32) ? 32 : 16;
	size_t off = 64 + p->cq_entries * cqe;

	if (!(p->flags & IORING_SETUP_NO_SQARRAY))
		off = ((off + 63) & ~(size_t)63) + p->sq_entries * 4;
	return page_align(off);
}

static size_t k_sqes_size(const struct io_uring_params *p)
{
	size_t sqe = (p->flags & IORING_SETUP_SQE128) ? 128 : 64;

	return page_align(p->sq_entries * sqe);
}

/* len bytes of fresh memory with an unmapped page right after them. */
static char *guarded(size_t len)
{
	char *m = mmap(NULL, len + page_sz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	T_ASSERT(m != MAP_FAILED);
	T_ASSERT_EQ(munmap(m + len, page_sz), 0);
	/* Garbage the engine must not take for ring state. */
	memset(m, 0xa5, len);
	return m;
}

static int setup_cq(unsigned int entries, unsigned int cq_entries,
		    struct io_uring_params *p, unsigned int flags,
		    uint64_t rings, uint64_t sqes)
{
	memset(p, 0, sizeof(*p));
	p->flags = IORING_SETUP_NO_MMAP | flags;
	p->cq_entries = cq_entries;
	NW_OFF_USER_ADDR(p->cq_off) = rings;
	NW_OFF_USER_ADDR(p->sq_off) = sqes;
	return t_setup(entries, p);
}

static int setup_nommap(unsigned int entries, struct io_uring_params *p,
			unsigned int flags, uint64_t rings, uint64_t sqes)
{
	return setup_cq(entries, 0, p, flags, rings, sqes);
}

static void test_errors(void)
{
	struct io_uring_params p;
	char *ok = guarded(1 << 20), *ro, *hole;
	uint64_t rings = (uintptr_t)ok, sqes = (uintptr_t)ok + (1 << 19);
	uint64_t wrap = ~(uint64_t)(page_sz - 1);

	ro = mmap(NULL, 1 << 16, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(ro != MAP_FAILED);
	hole = guarded(page_sz); /* one page, then nothing */
	T_ASSERT_EQ(setup_nommap(8, &p, 0, 0, sqes), -EFAULT);
	T_ASSERT_EQ(setup_nommap(8, &p, 0, rings, 0), -EFAULT);
	T_ASSERT_EQ(setup_nommap(8, &p, 0, rings + 8, sqes), -EINVAL);
	T_ASSERT_EQ(setup_nommap(8, &p, 0, rings, sqes + 64), -EINVAL);
	/* The rings first: their error wins over the SQEs'. */
	T_ASSERT_EQ(setup_nommap(8, &p, 0, rings + 8, 0), -EINVAL);
	T_ASSERT_EQ(setup_nommap(8, &p, 0, wrap, sqes), -EOVERFLOW);
	T_ASSERT_EQ(setup_nommap(8, &p, 0, rings, wrap), -EOVERFLOW);
	T_ASSERT_EQ(setup_nommap(8, &p, 0, (uintptr_t)ro, sqes), -EFAULT);
	T_ASSERT_EQ(setup_nommap(8, &p, 0, rings, (uintptr_t)ro), -EFAULT);
	/* 256 entries need two pages of rings; one is there. */
	T_ASSERT_EQ(setup_nommap(256, &p, 0, (uintptr_t)hole, sqes), -EFAULT);
	/* 128 SQEs need two pages. */
	T_ASSERT_EQ(setup_nommap(128, &p, 0, rings, (uintptr_t)hole), -EFAULT);
	/* Still -EINVAL for sizes before memory is looked at. */
	T_ASSERT_EQ(setup_nommap(0, &p, 0, rings, sqes), -EINVAL);
	munmap(ro, 1 << 16);
	munmap(hole, page_sz);
	munmap(ok, 1 << 20);
}

/* user_addr: given back with NO_MMAP, zeroed without it. */
static void test_user_addr_out(void)
{
	struct io_uring_params p;
	char *m = guarded(1 << 16);
	int fd;

	fd = setup_nommap(4, &p, 0, (uintptr_t)m, (uintptr_t)m + 32768);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(NW_OFF_USER_ADDR(p.cq_off), (uintptr_t)m);
	T_ASSERT_EQ(NW_OFF_USER_ADDR(p.sq_off), (uintptr_t)m + 32768);
	T_ASSERT_EQ(p.sq_off.resv1, 0);
	T_ASSERT_EQ(p.cq_off.resv1, 0);
	/* The header was garbage; the ring's is the kernel's start state. */
	T_ASSERT_EQ(*(unsigned int *)(m + p.sq_off.ring_mask), 3);
	T_ASSERT_EQ(*(unsigned int *)(m + p.cq_off.ring_entries), 8);
	T_ASSERT_EQ(*(unsigned int *)(m + p.sq_off.tail), 0);
	T_ASSERT_EQ(*(unsigned int *)(m + p.cq_off.head), 0);
	T_ASSERT_EQ(*(unsigned int *)(m + p.cq_off.tail), 0);
	T_ASSERT_EQ(*(unsigned int *)(m + p.sq_off.flags), 0);
	/* No region to map. */
	T_ASSERT(mmap(NULL, page_sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      IORING_OFF_SQ_RING) == MAP_FAILED);
	close(fd);
	munmap(m, 1 << 16);

	memset(&p, 0, sizeof(p));
	NW_OFF_USER_ADDR(p.cq_off) = 0x1234000;
	NW_OFF_USER_ADDR(p.sq_off) = 0x5678000;
	fd = t_setup(4, &p);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(NW_OFF_USER_ADDR(p.cq_off), 0);
	T_ASSERT_EQ(NW_OFF_USER_ADDR(p.sq_off), 0);
	close(fd);
}

/* A t_ring over the program's memory, as io_uring_queue_init_mem has it. */
static void ring_over(struct t_ring *r, int fd, const struct io_uring_params *p,
		      char *rings, char *sqes)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->p = *p;
	r->sq_head = (unsigned int *)(rings + p->sq_off.head);
	r->sq_tail = (unsigned int *)(rings + p->sq_off.tail);
	r->sq_mask = (unsigned int *)(rings + p->sq_off.ring_mask);
	r->sq_entries = (unsigned int *)(rings + p->sq_off.ring_entries);
	r->sq_flags = (unsigned int *)(rings + p->sq_off.flags);
	r->sq_dropped = (unsigned int *)(rings + p->sq_off.dropped);
	if (!(p->flags & IORING_SETUP_NO_SQARRAY))
		r->sq_array = (unsigned int *)(rings + p->sq_off.array);
	r->cq_head = (unsigned int *)(rings + p->cq_off.head);
	r->cq_tail = (unsigned int *)(rings + p->cq_off.tail);
	r->cq_mask = (unsigned int *)(rings + p->cq_off.ring_mask);
	r->cq_entries = (unsigned int *)(rings + p->cq_off.ring_entries);
	r->cq_overflow = (unsigned int *)(rings + p->cq_off.overflow);
	r->cq_flags = (unsigned int *)(rings + p->cq_off.flags);
	r->cqes = (struct io_uring_cqe *)(rings + p->cq_off.cqes);
	r->sqes = (struct io_uring_sqe *)sqes;
}

static unsigned char pattern(size_t off)
{
	return (unsigned char)(off * 5 + off / 241);
}

/* Batches of NOPs and reads until the CQ went round twice. */
static void traffic(struct t_ring *r)
{
	static unsigned char bufs[32][256];
	unsigned int n = r->p.sq_entries < 32 ? r->p.sq_entries : 32;
	unsigned int seq = 0, end = 2 * r->p.cq_entries + n;
	struct io_uring_cqe cqe;

	for (; seq < end; seq += n) {
		for (unsigned int i = 0; i < n; i++) {
			struct io_uring_sqe *sqe = t_get_sqe(r);
			size_t off = (seq + i) * 997UL % (FILE_LEN - 256);

			T_ASSERT(sqe != NULL);
			if (i & 1)
				t_prep_rw(sqe, IORING_OP_READ, data_fd, bufs[i],
					  256, off, seq + i);
			else
				t_prep_nop(sqe, seq + i);
		}
		T_ASSERT_EQ(t_submit_and_wait(r, n), (int)n);
		for (unsigned int i = 0; i < n; i++) {
			size_t off = (seq + i) * 997UL % (FILE_LEN - 256);

			T_ASSERT_EQ(t_peek_cqe(r, &cqe), 0);
			T_ASSERT_EQ(cqe.user_data, seq + i);
			T_ASSERT_EQ(cqe.res, (i & 1) ? 256 : 0);
			for (size_t k = 0; (i & 1) && k < 256; k += 19)
				T_ASSERT_EQ(bufs[i][k], pattern(off + k));
		}
	}
	T_ASSERT_EQ(t_cq_ready(r), 0);
	T_ASSERT_EQ(*r->cq_overflow, 0);
}

static void test_traffic(void)
{
	static const unsigned int v[][3] = {
		{1, 0, 0},
		{8, 0, 0},
		{128, 0, 0},
		{16, IORING_SETUP_CQSIZE, 256},
		{8, IORING_SETUP_NO_SQARRAY, 0},
		{64, IORING_SETUP_NO_SQARRAY | IORING_SETUP_CQSIZE, 256},
		{8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32, 0},
		{32, IORING_SETUP_CQE32 | IORING_SETUP_CQSIZE, 512},
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct io_uring_params p;
		struct t_ring r;
		char *rings, *sqes;
		int fd;

		/* Sizes first (the kernel's rule needs the final entries). */
		memset(&p, 0, sizeof(p));
		p.flags = v[i][1];
		p.sq_entries = v[i][0];
		p.cq_entries = v[i][2] ? v[i][2] : 2 * v[i][0];
		rings = guarded(k_rings_size(&p));
		sqes = guarded(k_sqes_size(&p));
		fd = setup_cq(v[i][0], v[i][2], &p, v[i][1], (uintptr_t)rings,
			      (uintptr_t)sqes);
		T_ASSERT_GE(fd, 0);
		ring_over(&r, fd, &p, rings, sqes);
		T_ASSERT_EQ(*r.cq_entries, p.cq_entries);
		traffic(&r);
		close(fd);
		munmap(rings, k_rings_size(&p));
		munmap(sqes, k_sqes_size(&p));
	}
}

static void make_data_file(void)
{
	char path[] = "/tmp/nowait-no-mmap.XXXXXX";
	unsigned char *buf = malloc(FILE_LEN);

	T_ASSERT(buf != NULL);
	for (size_t i = 0; i < FILE_LEN; i++)
		buf[i] = pattern(i);
	data_fd = mkstemp(path);
	T_ASSERT_GE(data_fd, 0);
	unlink(path);
	T_ASSERT_EQ(pwrite(data_fd, buf, FILE_LEN, 0), FILE_LEN);
	free(buf);
}

int main(void)
{
	struct io_uring_params p;
	char *m;
	int fd;

	t_require_engine();
	t_watchdog(50);
	page_sz = (size_t)sysconf(_SC_PAGESIZE);
	/* A kernel before 6.5 does not know the flag. */
	m = guarded(1 << 16);
	fd = setup_nommap(4, &p, 0, (uintptr_t)m, (uintptr_t)m + 32768);
	if (fd == -EINVAL) {
		printf("skip: IORING_SETUP_NO_MMAP not supported\n");
		return T_EXIT_SKIP;
	}
	T_ASSERT_GE(fd, 0);
	close(fd);
	munmap(m, 1 << 16);
	make_data_file();
	test_errors();
	test_user_addr_out();
	test_traffic();
	close(data_fd);
	return T_EXIT_PASS;
}
