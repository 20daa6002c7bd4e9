/* SPDX-License-Identifier: MIT */
/*
 * The ring memory as programs map it, with raw system calls: only
 * IORING_OFF_SQ_RING, sized max(SQ ring, CQ ring), the CQ read through it
 * (IORING_FEAT_SINGLE_MMAP: liburing, libuv), or the CQ ring mapped apart
 * at IORING_OFF_CQ_RING (fio's t/io_uring and engine), across setup flags
 * that change the layout; NOPs and file reads round the rings, CQEs and
 * data checked. Apart, both views are one memory (the kernel maps one
 * region at both offsets): a store through either is seen through the
 * other; a second and a read-only CQ mapping see the CQEs too;
 * IORING_CQ_EVENTFD_DISABLED stored through the CQ mapping before the
 * first enter holds; an SQPOLL ring reaped by peeking the CQ mapping alone
 * (no enter at all after setup unless the poller sleeps).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>
#include "helpers.h"

#define FILE_LEN 65536

static int data_fd = -1;

/* The byte at offset off of the data file. */
static unsigned char pattern(size_t off)
{
	return (unsigned char)(off * 7 + off / 251);
}

static void make_data_file(void)
{
	char path[] = "/tmp/nowait-ring-mmap.XXXXXX";
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

/* The CQE for user_data ud, res, without flags. */
static void expect(struct t_ring *r, uint64_t ud, int res)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_peek_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_EQ(cqe.res, res);
	T_ASSERT_EQ(cqe.flags, 0);
}

/*
 * Batches of up to sq_entries requests, NOPs and 512-byte reads at offsets
 * that move on, each submitted and waited for at once, until the CQ went
 * round laps times.
 */
static void traffic(struct t_ring *r, unsigned int laps)
{
	unsigned int n = r->p.sq_entries, seq = 0, rounds;
	static unsigned char bufs[64][512];

	if (n > 64)
		n = 64;
	rounds = laps * r->p.cq_entries / n + 1;
	for (unsigned int round = 0; round < rounds; round++) {
		for (unsigned int i = 0; i < n; i++, seq++) {
			struct io_uring_sqe *sqe = t_get_sqe(r);
			size_t off = (seq * 4099UL) % (FILE_LEN - 512);

			T_ASSERT(sqe != NULL);
			if (i & 1) {
				memset(bufs[i], 0, 512);
				t_prep_rw(sqe, IORING_OP_READ, data_fd, bufs[i],
					  512, off, seq);
			} else {
				t_prep_nop(sqe, seq);
			}
		}
		T_ASSERT_EQ(t_submit_and_wait(r, n), (int)n);
		T_ASSERT_EQ(t_cq_ready(r), n);
		for (unsigned int i = 0; i < n; i++) {
			unsigned int s = seq - n + i;
			size_t off = (s * 4099UL) % (FILE_LEN - 512);

			expect(r, s, (i & 1) ? 512 : 0);
			for (size_t k = 0; (i & 1) && k < 512; k += 37)
				T_ASSERT_EQ(bufs[i][k], pattern(off + k));
		}
	}
	T_ASSERT_EQ(t_cq_ready(r), 0);
	T_ASSERT_EQ(*r->cq_overflow, 0);
	T_ASSERT_EQ(*r->sq_dropped, 0);
}

static void setup_ring(struct io_uring_params *p, unsigned int entries,
		       unsigned int flags, unsigned int cq_entries)
{
	memset(p, 0, sizeof(*p));
	p->flags = flags;
	p->cq_entries = cq_entries;
}

/* Setup flags that move the layout: sizes, NO_SQARRAY, SQE128, CQE32. */
static const struct variant {
	unsigned int entries, flags, cq_entries;
} variants[] = {
	{1, 0, 0},
	{8, 0, 0},
	{64, 0, 0},
	{16, IORING_SETUP_CQSIZE, 1024},
	{8, IORING_SETUP_NO_SQARRAY, 0},
	{8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32, 0},
	{256, IORING_SETUP_CQSIZE | IORING_SETUP_CQE32, 4096},
};

static void test_single_map(void)
{
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		const struct variant *var = &variants[v];
		struct io_uring_params p;
		struct t_ring r;
		int fd;

		setup_ring(&p, var->entries, var->flags, var->cq_entries);
		fd = t_setup(var->entries, &p);
		T_ASSERT_GE(fd, 0);
		T_ASSERT(p.features & IORING_FEAT_SINGLE_MMAP);
		T_ASSERT_EQ(t_ring_map(&r, fd, &p), 0);
		T_ASSERT(r.sq_ptr == r.cq_ptr);
		T_ASSERT_EQ(*r.cq_mask, p.cq_entries - 1);
		T_ASSERT_EQ(*r.cq_entries, p.cq_entries);
		traffic(&r, 2);
		t_ring_exit(&r);
	}
}

/* Both mappings are one memory: stores through one show in the other. */
static void check_alias(struct t_ring *r)
{
	char *sq = r->sq_ptr;
	unsigned int *tail = (unsigned int *)(sq + r->p.cq_off.tail);
	unsigned int *head = (unsigned int *)(sq + r->p.cq_off.head);
	unsigned int *cflags = (unsigned int *)(sq + r->p.cq_off.flags);

	T_ASSERT(r->sq_ptr != r->cq_ptr);
	T_ASSERT_EQ(*tail, *r->cq_tail);
	T_ASSERT_EQ(*head, *r->cq_head);
	__atomic_store_n(r->cq_flags, IORING_CQ_EVENTFD_DISABLED,
			 __ATOMIC_RELAXED);
	T_ASSERT_EQ(*cflags, IORING_CQ_EVENTFD_DISABLED);
	__atomic_store_n(cflags, 0, __ATOMIC_RELAXED);
	T_ASSERT_EQ(*r->cq_flags, 0);
}

static void test_apart(void)
{
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		const struct variant *var = &variants[v];
		struct io_uring_params p;
		struct t_ring r;
		int fd;

		setup_ring(&p, var->entries, var->flags, var->cq_entries);
		fd = t_setup(var->entries, &p);
		T_ASSERT_GE(fd, 0);
		T_ASSERT_EQ(t_ring_map_apart(&r, fd, &p), 0);
		/* The sizes are there before anything else happens. */
		T_ASSERT_EQ(*r.cq_mask, p.cq_entries - 1);
		T_ASSERT_EQ(*r.cq_entries, p.cq_entries);
		T_ASSERT_EQ(*r.cq_tail, 0);
		traffic(&r, 2);
		check_alias(&r);
		traffic(&r, 1);
		t_ring_exit(&r);
	}
}

static void *map_cq(struct t_ring *r, int prot)
{
	size_t len = r->p.cq_off.cqes +
		     ((size_t)r->p.cq_entries << t_cqe_shift(r)) * 16;
	void *ptr =
		mmap(NULL, len, prot, MAP_SHARED, r->fd, IORING_OFF_CQ_RING);

	T_ASSERT(ptr != MAP_FAILED);
	return ptr;
}

/* Two more CQ mappings, one of them read-only: all see every CQE. */
static void test_more_cq_maps(void)
{
	struct io_uring_params p;
	struct io_uring_cqe *cqes[2];
	char *maps[2];
	struct t_ring r;
	int fd;

	setup_ring(&p, 4, 0, 0);
	fd = t_setup(4, &p);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(t_ring_map_apart(&r, fd, &p), 0);
	maps[0] = map_cq(&r, PROT_READ | PROT_WRITE);
	maps[1] = map_cq(&r, PROT_READ);
	for (int i = 0; i < 2; i++)
		cqes[i] = (struct io_uring_cqe *)(maps[i] + p.cq_off.cqes);
	for (unsigned int i = 0; i < 3 * p.cq_entries; i++) {
		unsigned int idx = i & (p.cq_entries - 1);

		t_prep_nop(t_get_sqe(&r), 100 + i);
		T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
		for (int m = 0; m < 2; m++) {
			T_ASSERT_EQ(*(unsigned int *)(maps[m] + p.cq_off.tail),
				    i + 1);
			T_ASSERT_EQ(cqes[m][idx].user_data, 100 + i);
		}
		expect(&r, 100 + i, 0);
		T_ASSERT_EQ(*(unsigned int *)(maps[1] + p.cq_off.head), i + 1);
	}
	for (int i = 0; i < 2; i++)
		munmap(maps[i], p.cq_off.cqes + p.cq_entries * 16);
	t_ring_exit(&r);
}

/* The eventfd's count, 0 when it was not written. */
static uint64_t efd_count(int efd)
{
	uint64_t v = 0;

	if (read(efd, &v, sizeof(v)) != sizeof(v))
		T_ASSERT_EQ(errno, EAGAIN);
	return v;
}

/*
 * IORING_CQ_EVENTFD_DISABLED stored through the CQ mapping before the
 * first enter: the NOP's CQE does not signal the eventfd; cleared, the
 * next one does.
 */
static void test_eventfd_disabled_early(void)
{
	struct io_uring_params p;
	struct t_ring r;
	int fd, efd;

	setup_ring(&p, 4, 0, 0);
	fd = t_setup(4, &p);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(t_ring_map_apart(&r, fd, &p), 0);
	__atomic_store_n(r.cq_flags, IORING_CQ_EVENTFD_DISABLED,
			 __ATOMIC_RELAXED);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	T_ASSERT_GE(efd, 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_EVENTFD, &efd, 1), 0);
	t_prep_nop(t_get_sqe(&r), 1);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 1, 0);
	T_ASSERT_EQ(efd_count(efd), 0);
	__atomic_store_n(r.cq_flags, 0, __ATOMIC_RELAXED);
	t_prep_nop(t_get_sqe(&r), 2);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	expect(&r, 2, 0);
	T_ASSERT_EQ(efd_count(efd), 1);
	close(efd);
	t_ring_exit(&r);
}

/* Wait (bounded) for the CQ tail, read through the CQ mapping, to reach n. */
static void spin_cq_tail(struct t_ring *r, unsigned int n)
{
	uint64_t end = t_now_us() + 10 * 1000 * 1000;

	while (__atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) != n) {
		T_ASSERT_LT(t_now_us(), end);
		usleep(100);
	}
}

/* SQPOLL, fio's way: submit by the SQ tail, reap from the CQ mapping. */
static void test_sqpoll_peek(void)
{
	struct io_uring_params p;
	struct t_ring r;
	unsigned int done = 0;
	int fd;

	setup_ring(&p, 8, IORING_SETUP_SQPOLL, 0);
	p.sq_thread_idle = 10000;
	fd = t_setup(8, &p);
	if (fd == -EPERM) {
		printf("skip: SQPOLL not permitted here\n");
		return;
	}
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(t_ring_map_apart(&r, fd, &p), 0);
	for (unsigned int round = 0; round < 5; round++) {
		for (unsigned int i = 0; i < 8; i++)
			t_prep_nop(t_get_sqe(&r), done + i);
		t_ring_flush(&r);
		if (__atomic_load_n(r.sq_flags, __ATOMIC_SEQ_CST) &
		    IORING_SQ_NEED_WAKEUP)
			T_ASSERT_GE(t_enter(r.fd, 0, 0, IORING_ENTER_SQ_WAKEUP,
					    NULL, 0),
				    0);
		spin_cq_tail(&r, done + 8);
		for (unsigned int i = 0; i < 8; i++)
			expect(&r, done + i, 0);
		done += 8;
	}
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(50);
	make_data_file();
	test_single_map();
	test_apart();
	test_more_cq_maps();
	test_eventfd_disabled_early();
	test_sqpoll_peek();
	close(data_fd);
	return T_EXIT_PASS;
}
