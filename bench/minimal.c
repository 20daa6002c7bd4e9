/* SPDX-License-Identifier: MIT */
/*
 * Engine "minimal": the least a user-space io_uring can do per request,
 * the yardstick of nowait's own cost per NOP. The kernel's ring layout
 * (one memfd, mapped at the three mmap offsets, so bench_ring_open() maps
 * it as it maps the others), and an enter that for each SQE reads the SQ
 * index array, looks the opcode up in a table of issue functions, takes a
 * request from a free list, issues it, writes the CQE and puts the request
 * back; one store-release of the SQ head and of the CQ tail per call.
 * Nothing else: no locks, no flags, no links, no waiting (every request
 * completes inline, so GETEVENTS is satisfied by what was submitted). One
 * ring at a time; it is a benchmark's measuring stick, not an engine.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

#define MIN_MAX_ENTRIES 4096

struct min_req {
	struct min_req *next;
	uint64_t user_data;
};

struct min_opdef {
	int (*issue)(struct min_req *req, const struct io_uring_sqe *sqe);
};

/* The SQ and CQ rings' words, as the kernel's struct io_rings has them. */
struct min_rings {
	unsigned int sq_head, sq_tail, sq_mask, sq_entries, sq_flags;
	unsigned int sq_dropped;
	unsigned int cq_head, cq_tail, cq_mask, cq_entries, cq_overflow;
	unsigned int cq_flags;
	struct io_uring_cqe cqes[];
};

static struct min_ring {
	int fd;			     /* -1: no ring */
	struct min_rings *sqr, *cqr; /* SQ words of one, CQ words of other */
	unsigned int *sq_array;
	struct io_uring_sqe *sqes;
	size_t rings_sz, sqes_sz;
	struct min_req *free;
	struct min_req reqs[MIN_MAX_ENTRIES];
} min_ring = {.fd = -1};

static int min_nop(struct min_req *req, const struct io_uring_sqe *sqe)
{
	(void)req;
	(void)sqe;
	return 0;
}

static const struct min_opdef min_ops[IORING_OP_LAST] = {
	[IORING_OP_NOP] = {.issue = min_nop},
};

static unsigned int roundup_pow2(unsigned int n)
{
	unsigned int v = 1;

	while (v < n)
		v <<= 1;
	return v;
}

static void min_fill_offsets(struct io_uring_params *p, size_t array_off)
{
	p->sq_off.head = offsetof(struct min_rings, sq_head);
	p->sq_off.tail = offsetof(struct min_rings, sq_tail);
	p->sq_off.ring_mask = offsetof(struct min_rings, sq_mask);
	p->sq_off.ring_entries = offsetof(struct min_rings, sq_entries);
	p->sq_off.flags = offsetof(struct min_rings, sq_flags);
	p->sq_off.dropped = offsetof(struct min_rings, sq_dropped);
	p->sq_off.array = (unsigned int)array_off;
	p->cq_off.head = offsetof(struct min_rings, cq_head);
	p->cq_off.tail = offsetof(struct min_rings, cq_tail);
	p->cq_off.ring_mask = offsetof(struct min_rings, cq_mask);
	p->cq_off.ring_entries = offsetof(struct min_rings, cq_entries);
	p->cq_off.overflow = offsetof(struct min_rings, cq_overflow);
	p->cq_off.cqes = offsetof(struct min_rings, cqes);
	p->cq_off.flags = offsetof(struct min_rings, cq_flags);
}

static void min_release(void)
{
	if (min_ring.sqr)
		munmap(min_ring.sqr, min_ring.rings_sz);
	if (min_ring.cqr)
		munmap(min_ring.cqr, min_ring.rings_sz);
	if (min_ring.sqes)
		munmap(min_ring.sqes, min_ring.sqes_sz);
	min_ring.sqr = min_ring.cqr = NULL;
	min_ring.sqes = NULL;
	min_ring.fd = -1; /* the caller owns (and closes) the fd */
}

static void *min_map1(int fd, size_t len, off_t off)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);

	return p == MAP_FAILED ? NULL : p;
}

/* Map the memfd's three regions for the engine itself. */
static int min_map(int fd, size_t rings_sz, size_t sqes_sz, size_t array_off)
{
	min_ring.rings_sz = rings_sz;
	min_ring.sqes_sz = sqes_sz;
	min_ring.sqr = min_map1(fd, rings_sz, IORING_OFF_SQ_RING);
	min_ring.cqr = min_map1(fd, rings_sz, IORING_OFF_CQ_RING);
	min_ring.sqes = min_map1(fd, sqes_sz, IORING_OFF_SQES);
	if (!min_ring.sqr || !min_ring.cqr || !min_ring.sqes) {
		min_release();
		return -ENOMEM;
	}
	min_ring.sq_array = (unsigned int *)((char *)min_ring.sqr + array_off);
	return 0;
}

/*
 * Three regions of one sparse memfd at the kernel's mmap offsets: the SQ
 * ring (its words of struct min_rings, then the index array), the CQ ring
 * (its words, then the CQEs) and the SQEs. Both ring regions have the
 * whole struct's layout, so one set of offsets describes both.
 */
static int min_setup(unsigned int entries, struct io_uring_params *p)
{
	unsigned int sq, cq, i;
	size_t array_off, rings_sz, sqes_sz;
	int fd, err;

	if (p->flags & ~(IORING_SETUP_CQSIZE | BENCH_FAST_FLAGS))
		return -EINVAL;
	sq = roundup_pow2(entries ? entries : 1);
	cq = p->flags & IORING_SETUP_CQSIZE ? roundup_pow2(p->cq_entries)
					    : 2 * sq;
	if (sq > MIN_MAX_ENTRIES || cq > 2 * MIN_MAX_ENTRIES || cq < sq)
		return -EINVAL;
	array_off = sizeof(struct min_rings) + cq * sizeof(struct io_uring_cqe);
	rings_sz = array_off + sq * sizeof(unsigned int);
	sqes_sz = sq * sizeof(struct io_uring_sqe);
	min_release();
	fd = memfd_create("nowait-bench-minimal", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, IORING_OFF_SQES + sqes_sz)) {
		err = -errno;
		close(fd);
		return err;
	}
	err = min_map(fd, rings_sz, sqes_sz, array_off);
	if (err) {
		close(fd);
		return err;
	}
	min_ring.fd = fd;
	min_ring.sqr->sq_mask = sq - 1;
	min_ring.sqr->sq_entries = sq;
	min_ring.cqr->cq_mask = cq - 1;
	min_ring.cqr->cq_entries = cq;
	min_ring.free = NULL;
	for (i = 0; i < sq; i++) {
		min_ring.reqs[i].next = min_ring.free;
		min_ring.free = &min_ring.reqs[i];
	}
	p->sq_entries = sq;
	p->cq_entries = cq;
	p->features = 0;
	min_fill_offsets(p, array_off);
	return fd;
}

/* Post one CQE into a slot known to be free. */
static inline void min_post(struct min_rings *cqr, unsigned int *tail,
			    uint64_t user_data, int res)
{
	struct io_uring_cqe *cqe = &cqr->cqes[*tail & cqr->cq_mask];

	cqe->user_data = user_data;
	cqe->res = res;
	cqe->flags = 0;
	(*tail)++;
}

/* Issue one SQE; false when no request is free. */
static inline bool min_issue(const struct io_uring_sqe *sqe,
			     unsigned int *cq_tail)
{
	const struct min_opdef *def;
	struct min_req *req = min_ring.free;
	int res = -EINVAL;

	if (!req)
		return false;
	min_ring.free = req->next;
	req->user_data = sqe->user_data;
	def = sqe->opcode < IORING_OP_LAST ? &min_ops[sqe->opcode] : NULL;
	if (def && def->issue)
		res = def->issue(req, sqe);
	req->next = min_ring.free;
	min_ring.free = req;
	min_post(min_ring.cqr, cq_tail, req->user_data, res);
	return true;
}

static int min_enter(int fd, unsigned int to_submit, unsigned int min_complete,
		     unsigned int flags, const void *arg, size_t argsz)
{
	struct min_rings *sqr = min_ring.sqr, *cqr = min_ring.cqr;
	unsigned int head, tail, cq_tail, idx, room, done = 0;

	(void)min_complete;
	(void)flags;
	(void)arg;
	(void)argsz;
	if (fd != min_ring.fd || fd < 0)
		return -EBADF;
	head = sqr->sq_head;
	tail = __atomic_load_n(&sqr->sq_tail, __ATOMIC_ACQUIRE);
	cq_tail = cqr->cq_tail;
	/* the CQ room, once per call: one CQE per SQE */
	room = cqr->cq_entries -
	       (cq_tail - __atomic_load_n(&cqr->cq_head, __ATOMIC_ACQUIRE));
	if (to_submit > room)
		to_submit = room;
	for (; done < to_submit && head != tail; done++, head++) {
		idx = min_ring.sq_array[head & sqr->sq_mask];
		if (idx > sqr->sq_mask ||
		    !min_issue(&min_ring.sqes[idx], &cq_tail))
			break;
	}
	__atomic_store_n(&sqr->sq_head, head, __ATOMIC_RELEASE);
	__atomic_store_n(&cqr->cq_tail, cq_tail, __ATOMIC_RELEASE);
	if (!done && to_submit)
		return -EBUSY;
	return (int)done;
}

static int min_register(int fd, unsigned int opcode, void *arg,
			unsigned int nr_args)
{
	(void)opcode;
	(void)arg;
	(void)nr_args;
	return fd == min_ring.fd && fd >= 0 ? -EINVAL : -EBADF;
}

const struct t_calls bench_calls_minimal = {
	.name = "minimal",
	.setup = min_setup,
	.enter = min_enter,
	.reg = min_register,
};
