/* SPDX-License-Identifier: MIT */
/*
 * io_uring_setup(2) parameter validation and output, and the fd checks of
 * io_uring_enter(2)/io_uring_register(2). Semantics: io_uring.c
 * io_uring_setup/io_uring_fill_params, kernel-semantics.md sections 4 and 7.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include <nowait.h>
#include "helpers.h"

/* Set up with flags (and cq_entries for CQSIZE); returns the fd or -errno. */
static int setup_flags(unsigned int entries, unsigned int flags,
		       unsigned int cq_entries, struct io_uring_params *out)
{
	struct io_uring_params p;
	int fd;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	p.cq_entries = cq_entries;
	fd = t_setup(entries, &p);
	if (out)
		*out = p;
	return fd;
}

/* Expect setup to succeed with the given sizes, then close the ring. */
static void expect_sizes(unsigned int entries, unsigned int flags,
			 unsigned int cq_in, unsigned int sq_out,
			 unsigned int cq_out)
{
	struct io_uring_params p;
	int fd = setup_flags(entries, flags, cq_in, &p);

	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(p.sq_entries, sq_out);
	T_ASSERT_EQ(p.cq_entries, cq_out);
	close(fd);
}

static void test_entries(void)
{
	T_ASSERT_EQ(setup_flags(0, 0, 0, NULL), -EINVAL);
	T_ASSERT_EQ(setup_flags(32769, 0, 0, NULL), -EINVAL);
	T_ASSERT_EQ(setup_flags(1U << 31, 0, 0, NULL), -EINVAL);
	T_ASSERT_EQ(setup_flags(0, IORING_SETUP_CLAMP, 0, NULL), -EINVAL);
	expect_sizes(32769, IORING_SETUP_CLAMP, 0, 32768, 65536);
	expect_sizes(1, 0, 0, 1, 2);
	expect_sizes(2, 0, 0, 2, 4);
	expect_sizes(3, 0, 0, 4, 8);
	expect_sizes(5, 0, 0, 8, 16);
	expect_sizes(100, 0, 0, 128, 256);
	expect_sizes(4096, 0, 0, 4096, 8192);
}

static void test_cqsize(void)
{
	unsigned int f = IORING_SETUP_CQSIZE;

	T_ASSERT_EQ(setup_flags(4, f, 0, NULL), -EINVAL);
	T_ASSERT_EQ(setup_flags(4, f, 2, NULL), -EINVAL);
	T_ASSERT_EQ(setup_flags(8, f, 4, NULL), -EINVAL);
	T_ASSERT_EQ(setup_flags(4, f, 65537, NULL), -EINVAL);
	T_ASSERT_EQ(setup_flags(4, f, 1U << 31, NULL), -EINVAL);
	/* cq is rounded up before it is compared with sq. */
	expect_sizes(4, f, 3, 4, 4);
	expect_sizes(4, f, 4, 4, 4);
	expect_sizes(4, f, 5, 4, 8);
	expect_sizes(4, f, 1000, 4, 1024);
	expect_sizes(4, f, 65536, 4, 65536);
	expect_sizes(4, f | IORING_SETUP_CLAMP, 65537, 4, 65536);
	expect_sizes(4, f | IORING_SETUP_CLAMP, 1U << 31, 4, 65536);
	/* Without CQSIZE the input cq_entries is ignored. */
	expect_sizes(4, 0, 3, 4, 8);
}

static void test_bad_params(void)
{
	struct io_uring_params p;
	unsigned int i;

	for (i = 0; i < sizeof(p.resv) / sizeof(p.resv[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.resv[i] = 1;
		T_ASSERT_EQ(t_setup(4, &p), -EINVAL);
	}
	T_ASSERT_EQ(setup_flags(4, 1U << 31, 0, NULL), -EINVAL);
	T_ASSERT_EQ(setup_flags(4, 1U << 28, 0, NULL), -EINVAL);
	T_ASSERT_EQ(t_setup(4, (struct io_uring_params *)8), -EFAULT);
	T_ASSERT_EQ(t_setup(4, NULL), -EFAULT);

	/* Flag combinations the kernel rejects. */
	T_ASSERT_EQ(setup_flags(4, IORING_SETUP_SQ_AFF, 0, NULL), -EINVAL);
	T_ASSERT_EQ(setup_flags(4, IORING_SETUP_TASKRUN_FLAG, 0, NULL),
		    -EINVAL);
	T_ASSERT_EQ(setup_flags(4, IORING_SETUP_DEFER_TASKRUN, 0, NULL),
		    -EINVAL);
	T_ASSERT_EQ(setup_flags(4,
				IORING_SETUP_SQPOLL | IORING_SETUP_COOP_TASKRUN,
				0, NULL),
		    -EINVAL);
	T_ASSERT_EQ(setup_flags(4, IORING_SETUP_REGISTERED_FD_ONLY, 0, NULL),
		    -EINVAL);
	T_ASSERT_EQ(setup_flags(4, IORING_SETUP_HYBRID_IOPOLL, 0, NULL),
		    -EINVAL);
}

static void test_valid_flag_combos(void)
{
	int fd;

	fd = setup_flags(4,
			 IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
			 0, NULL);
	T_ASSERT_GE(fd, 0);
	close(fd);
	fd = setup_flags(
		4, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, 0,
		NULL);
	T_ASSERT_GE(fd, 0);
	close(fd);
	fd = setup_flags(4, IORING_SETUP_SUBMIT_ALL, 0, NULL);
	T_ASSERT_GE(fd, 0);
	close(fd);
}

/* Do [a, a + alen) and [b, b + blen) overlap? */
static bool overlap(unsigned int a, unsigned int alen, unsigned int b,
		    unsigned int blen)
{
	return a < b + blen && b < a + alen;
}

/*
 * IORING_FEAT_SINGLE_MMAP: sq_off and cq_off index one region, so no word
 * of one ring's header may fall on the other's, or in the CQEs or the SQ
 * index array.
 */
static void check_one_region(const struct io_uring_params *p)
{
	unsigned int words[] = {
		p->sq_off.head,		p->sq_off.tail,	    p->sq_off.ring_mask,
		p->sq_off.ring_entries, p->sq_off.flags,    p->sq_off.dropped,
		p->cq_off.head,		p->cq_off.tail,	    p->cq_off.ring_mask,
		p->cq_off.ring_entries, p->cq_off.overflow, p->cq_off.flags,
	};
	unsigned int n = sizeof(words) / sizeof(words[0]);
	unsigned int cqes_len = p->cq_entries * 16,
		     array_len = p->sq_entries * 4;

	for (unsigned int i = 0; i < n; i++) {
		for (unsigned int j = i + 1; j < n; j++)
			T_ASSERT(!overlap(words[i], 4, words[j], 4));
		T_ASSERT(!overlap(words[i], 4, p->cq_off.cqes, cqes_len));
		T_ASSERT(!overlap(words[i], 4, p->sq_off.array, array_len));
	}
	T_ASSERT(
		!overlap(p->cq_off.cqes, cqes_len, p->sq_off.array, array_len));
}

static void test_output(void)
{
	struct io_uring_params p;
	struct t_ring r;
	unsigned int want = IORING_FEAT_NODROP | IORING_FEAT_SUBMIT_STABLE;
	int flags;

	memset(&p, 0, sizeof(p));
	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	T_ASSERT_EQ(p.sq_entries, 8);
	T_ASSERT_EQ(p.cq_entries, 16);
	T_ASSERT_EQ(p.features & want, want);
	T_ASSERT(p.features & IORING_FEAT_SINGLE_MMAP);
	check_one_region(&p);

	/* Offsets are distinct and inside the regions they describe. */
	T_ASSERT_NE(p.sq_off.head, p.sq_off.tail);
	T_ASSERT_NE(p.cq_off.head, p.cq_off.tail);
	T_ASSERT_GT(p.sq_off.array, p.sq_off.tail);
	T_ASSERT_GT(p.cq_off.cqes, p.cq_off.tail);
	T_ASSERT_EQ(p.cq_off.cqes % 8, 0);

	/* Pre-filled ring words; everything else starts at zero. */
	T_ASSERT_EQ(*r.sq_mask, 7);
	T_ASSERT_EQ(*r.sq_entries, 8);
	T_ASSERT_EQ(*r.cq_mask, 15);
	T_ASSERT_EQ(*r.cq_entries, 16);
	T_ASSERT_EQ(*r.sq_head, 0);
	T_ASSERT_EQ(*r.sq_tail, 0);
	T_ASSERT_EQ(*r.cq_head, 0);
	T_ASSERT_EQ(*r.cq_tail, 0);
	T_ASSERT_EQ(*r.sq_dropped, 0);
	T_ASSERT_EQ(*r.cq_overflow, 0);
	T_ASSERT_EQ(*r.sq_flags, 0);
	T_ASSERT_EQ(*r.cq_flags, 0);

	/* The ring fd is O_RDWR | O_CLOEXEC. */
	flags = fcntl(r.fd, F_GETFD);
	T_ASSERT_GE(flags, 0);
	T_ASSERT(flags & FD_CLOEXEC);
	flags = fcntl(r.fd, F_GETFL);
	T_ASSERT_GE(flags, 0);
	T_ASSERT_EQ(flags & O_ACCMODE, O_RDWR);
	t_ring_exit(&r);
}

static void test_enter_fds(void)
{
	struct io_uring_params p;
	int pfd[2], fd;

	T_ASSERT_EQ(t_enter(-1, 0, 0, 0, NULL, 0), -EBADF);
	T_ASSERT_EQ(t_enter(-1, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0), -EBADF);
	T_ASSERT_EQ(t_enter(-2, 0, 0, 0, NULL, 0), -EBADF);
	/* fd -1 is reserved for "blind" register ops: others are -EINVAL. */
	T_ASSERT_EQ(t_register(-1, IORING_REGISTER_PROBE, NULL, 0), -EINVAL);
	T_ASSERT_EQ(t_register(-2, IORING_REGISTER_PROBE, NULL, 0), -EBADF);
	T_ASSERT_EQ(t_register(1000000, IORING_UNREGISTER_EVENTFD, NULL, 0),
		    -EBADF);

	/* A closed fd number is as bad as -1. */
	fd = setup_flags(4, 0, 0, &p);
	T_ASSERT_GE(fd, 0);
	close(fd);
	T_ASSERT_EQ(t_enter(fd, 0, 0, 0, NULL, 0), -EBADF);

	T_ASSERT_EQ(pipe(pfd), 0);
	T_ASSERT_EQ(t_enter(pfd[0], 0, 0, 0, NULL, 0), -EOPNOTSUPP);
	T_ASSERT_EQ(t_enter(pfd[1], 1, 0, 0, NULL, 0), -EOPNOTSUPP);
	T_ASSERT_EQ(t_register(pfd[0], IORING_UNREGISTER_EVENTFD, NULL, 0),
		    -EOPNOTSUPP);
	close(pfd[0]);
	close(pfd[1]);

	/* A memfd that is not a ring is not a ring either. */
	fd = memfd_create("not-a-ring", MFD_CLOEXEC);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(t_enter(fd, 0, 0, 0, NULL, 0), -EOPNOTSUPP);
	close(fd);
}

static void test_enter_flags(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, 1U << 31, NULL, 0), -EINVAL);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, 1U << 20, NULL, 0), -EINVAL);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS | (1U << 31),
			    NULL, 0),
		    -EINVAL);
	/* Nothing to do: returns 0. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, 0, NULL, 0), 0);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	/*
	 * Without EXT_ARG a sigset must have the kernel's size (8). It is
	 * checked only when the wait would sleep (empty CQ, min_complete 1);
	 * a wait that is already satisfied never looks at it.
	 */
	{
		unsigned long long mask = 0;

		T_ASSERT_EQ(
			t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, &mask, 4),
			-EINVAL);
		T_ASSERT_EQ(
			t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, &mask, 4),
			0);
		T_ASSERT_EQ(
			t_enter(r.fd, 0, 0, IORING_ENTER_GETEVENTS, &mask, 8),
			0);
	}
	t_ring_exit(&r);
}

/* The ring is its file, not its fd number: a dup keeps it alive. */
static void test_dup_fd(void)
{
	struct io_uring_params p;
	struct io_uring_cqe cqe;
	struct t_ring r;
	int fd, fd2;

	fd = setup_flags(4, 0, 0, &p);
	T_ASSERT_GE(fd, 0);
	fd2 = dup(fd);
	T_ASSERT_GE(fd2, 0);
	T_ASSERT_EQ(close(fd), 0);

	/* Map through the dup and run a NOP on it. */
	T_ASSERT_EQ(t_ring_map(&r, fd2, &p), 0);
	t_prep_nop(t_get_sqe(&r), 0x1234);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 0x1234);
	T_ASSERT_EQ(cqe.res, 0);

	/* And a dup of a mapped ring: close the one we mapped through. */
	fd = dup(r.fd);
	T_ASSERT_GE(fd, 0);
	close(r.fd);
	r.fd = fd;
	t_prep_nop(t_get_sqe(&r), 0x5678);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, 0x5678);
	t_ring_exit(&r);
}

/* Many rings at once are independent. */
static void test_many_rings(void)
{
	struct t_ring r[8];
	struct io_uring_cqe cqe;
	int i;

	for (i = 0; i < 8; i++)
		T_ASSERT_EQ(t_ring_init(&r[i], 2, NULL), 0);
	for (i = 0; i < 8; i++) {
		t_prep_nop(t_get_sqe(&r[i]), 100 + i);
		T_ASSERT_EQ(t_submit(&r[i]), 1);
	}
	for (i = 7; i >= 0; i--) {
		T_ASSERT_EQ(t_wait_cqe(&r[i], &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, 100 + i);
		T_ASSERT_EQ(t_cq_ready(&r[i]), 0);
		t_ring_exit(&r[i]);
	}
}

int main(void)
{
	t_require_engine();
	signal(SIGPIPE, SIG_IGN);
	test_entries();
	test_cqsize();
	test_bad_params();
	test_valid_flag_combos();
	test_output();
	test_enter_fds();
	test_enter_flags();
	test_dup_fd();
	test_many_rings();
	return T_EXIT_PASS;
}
