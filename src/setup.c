/* SPDX-License-Identifier: MIT */
/*
 * io_uring_setup(2): parameter validation exactly as the kernel does it
 * (io_uring.c io_uring_sanitise_params / io_uring_fill_params), and the ring
 * memory: a sparse memfd with the SQ ring, the CQ ring and the SQE array at
 * the kernel's mmap offsets. The SQ and CQ rings are separate regions (a
 * memfd cannot alias two offsets), so IORING_FEAT_SINGLE_MMAP is not
 * advertised. Runs on the calling thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "internal.h"
#include "opdef.h"
#include "ringpoll.h"
#include "sqpoll.h"
#include "trace.h"

/* Header layout of the two ring regions; each hot word on its own line. */
enum {
	SQ_OFF_HEAD = 0,
	SQ_OFF_TAIL = 64,
	SQ_OFF_MASK = 128,
	SQ_OFF_ENTRIES = 132,
	SQ_OFF_FLAGS = 136,
	SQ_OFF_DROPPED = 140,
	/* 144..191 unused, but for NW_SQ_OFF_WAKE (sqpoll.h) */
	SQ_OFF_ARRAY = 192,
	CQ_OFF_HEAD = 0,
	CQ_OFF_TAIL = 64,
	CQ_OFF_MASK = 128,
	CQ_OFF_ENTRIES = 132,
	CQ_OFF_OVERFLOW = 136,
	CQ_OFF_FLAGS = 140,
	CQ_OFF_CQES = 192,
};

/* Setup flags the engine honours; the others get -EINVAL, as on a kernel
 * that predates them. */
#define NW_SETUP_FLAGS                                                    \
	(IORING_SETUP_IOPOLL | IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP | \
	 IORING_SETUP_ATTACH_WQ | IORING_SETUP_R_DISABLED |               \
	 IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN |            \
	 IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_SQE128 |                \
	 IORING_SETUP_CQE32 | IORING_SETUP_SINGLE_ISSUER |                \
	 IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_NO_SQARRAY |           \
	 IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF)

/* Every feature bit here is honoured (see README's status table). */
#define NW_FEATURES                                          \
	(IORING_FEAT_NODROP | IORING_FEAT_SUBMIT_STABLE |    \
	 IORING_FEAT_CUR_PERSONALITY | IORING_FEAT_EXT_ARG | \
	 IORING_FEAT_NATIVE_WORKERS | IORING_FEAT_CQE_SKIP | \
	 IORING_FEAT_LINKED_FILE | IORING_FEAT_FAST_POLL |   \
	 IORING_FEAT_POLL_32BITS | IORING_FEAT_RW_CUR_POS |  \
	 IORING_FEAT_RSRC_TAGS | IORING_FEAT_SQPOLL_NONFIXED)

static unsigned int ring_ids;

static unsigned int roundup_pow2(unsigned int v)
{
	return v <= 1 ? 1 : 1U << (32 - __builtin_clz(v - 1));
}

/* io_uring_sanitise_params: flag combinations. */
static int check_flags(const struct io_uring_params *p)
{
	unsigned int flags = p->flags;

	if (flags & ~NW_SETUP_FLAGS)
		return -EINVAL;
	if ((flags & IORING_SETUP_SQ_AFF) && !(flags & IORING_SETUP_SQPOLL))
		return -EINVAL;
	if ((flags & IORING_SETUP_SQPOLL) &&
	    (flags & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG |
		      IORING_SETUP_DEFER_TASKRUN)))
		return -EINVAL;
	if ((flags & IORING_SETUP_TASKRUN_FLAG) &&
	    !(flags & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_DEFER_TASKRUN)))
		return -EINVAL;
	if ((flags & IORING_SETUP_DEFER_TASKRUN) &&
	    !(flags & IORING_SETUP_SINGLE_ISSUER))
		return -EINVAL;
	/* sq_thread_cpu is checked with the poller (sqpoll.c), as in 5.11+. */
	return 0;
}

/* io_uring_fill_params: ring sizes. */
static int size_rings(unsigned int entries, struct io_uring_params *p)
{
	if (!entries)
		return -EINVAL;
	if (entries > NW_MAX_ENTRIES) {
		if (!(p->flags & IORING_SETUP_CLAMP))
			return -EINVAL;
		entries = NW_MAX_ENTRIES;
	}
	p->sq_entries = roundup_pow2(entries);
	if (!(p->flags & IORING_SETUP_CQSIZE)) {
		p->cq_entries = 2 * p->sq_entries;
		return 0;
	}
	if (!p->cq_entries)
		return -EINVAL;
	if (p->cq_entries > NW_MAX_CQ_ENTRIES) {
		if (!(p->flags & IORING_SETUP_CLAMP))
			return -EINVAL;
		p->cq_entries = NW_MAX_CQ_ENTRIES;
	}
	p->cq_entries = roundup_pow2(p->cq_entries);
	if (p->cq_entries < p->sq_entries)
		return -EINVAL;
	return 0;
}

static void fill_offsets(struct io_uring_params *p)
{
	memset(&p->sq_off, 0, sizeof(p->sq_off));
	memset(&p->cq_off, 0, sizeof(p->cq_off));
	p->sq_off.head = SQ_OFF_HEAD;
	p->sq_off.tail = SQ_OFF_TAIL;
	p->sq_off.ring_mask = SQ_OFF_MASK;
	p->sq_off.ring_entries = SQ_OFF_ENTRIES;
	p->sq_off.flags = SQ_OFF_FLAGS;
	p->sq_off.dropped = SQ_OFF_DROPPED;
	if (!(p->flags & IORING_SETUP_NO_SQARRAY))
		p->sq_off.array = SQ_OFF_ARRAY;
	p->cq_off.head = CQ_OFF_HEAD;
	p->cq_off.tail = CQ_OFF_TAIL;
	p->cq_off.ring_mask = CQ_OFF_MASK;
	p->cq_off.ring_entries = CQ_OFF_ENTRIES;
	p->cq_off.overflow = CQ_OFF_OVERFLOW;
	p->cq_off.cqes = CQ_OFF_CQES;
	p->cq_off.flags = CQ_OFF_FLAGS;
}

static void *map_region(int fd, off_t off, size_t len)
{
	void *ptr = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, fd, off);

	return ptr == MAP_FAILED ? NULL : ptr;
}

static void unmap_rings(struct nw_ring *ring)
{
	if (ring->sq_map)
		munmap(ring->sq_map, ring->sq_map_sz);
	if (ring->cq_map)
		munmap(ring->cq_map, ring->cq_map_sz);
	if (ring->sqe_map)
		munmap(ring->sqe_map, ring->sqe_map_sz);
}

static bool fsize_allows(size_t size)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_FSIZE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	       rl.rlim_cur >= size;
}

/* Create the memfd and map the three regions into the engine. */
static int create_memory(struct nw_ring *ring)
{
	char name[32];
	struct stat st;
	int fd, ret;

	ring->sq_map_sz = SQ_OFF_ARRAY + (size_t)ring->sq_entries * 4;
	ring->cq_map_sz =
		CQ_OFF_CQES + ((size_t)ring->cq_entries << ring->cqe_shift);
	ring->sqe_map_sz = (size_t)ring->sq_entries << ring->sqe_shift;

	/* A unique name: the reactor finds the program's references by it. */
	ring->id = __atomic_add_fetch(&ring_ids, 1, __ATOMIC_RELAXED);
	snprintf(name, sizeof(name), "nowait-ring:%u", ring->id);
	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = -ENOMEM;
	/*
	 * The memfd spans the kernel's mmap offsets (SQEs at 256 MiB), so
	 * RLIMIT_FSIZE applies to it: a smaller limit would make ftruncate
	 * raise SIGXFSZ, which kills by default. Fail the setup instead.
	 */
	if (!fsize_allows(IORING_OFF_SQES + ring->sqe_map_sz) ||
	    ftruncate(fd, IORING_OFF_SQES + ring->sqe_map_sz) < 0)
		goto err_close;
	ring->sq_map = map_region(fd, IORING_OFF_SQ_RING, ring->sq_map_sz);
	ring->cq_map = map_region(fd, IORING_OFF_CQ_RING, ring->cq_map_sz);
	ring->sqe_map = map_region(fd, IORING_OFF_SQES, ring->sqe_map_sz);
	if (!ring->sq_map || !ring->cq_map || !ring->sqe_map)
		goto err_unmap;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto err_unmap;
	}
	ring->dev = st.st_dev;
	ring->ino = st.st_ino;
	return fd;
err_unmap:
	unmap_rings(ring);
err_close:
	close(fd);
	return ret;
}

static void init_pointers(struct nw_ring *ring)
{
	char *sq = ring->sq_map, *cq = ring->cq_map;

	ring->sq_head = (unsigned int *)(sq + SQ_OFF_HEAD);
	ring->sq_tail = (unsigned int *)(sq + SQ_OFF_TAIL);
	ring->sq_flags = (unsigned int *)(sq + SQ_OFF_FLAGS);
	ring->sq_dropped = (unsigned int *)(sq + SQ_OFF_DROPPED);
	ring->sq_array = (ring->flags & IORING_SETUP_NO_SQARRAY)
				 ? NULL
				 : (unsigned int *)(sq + SQ_OFF_ARRAY);
	ring->cq_head = (unsigned int *)(cq + CQ_OFF_HEAD);
	ring->cq_tail = (unsigned int *)(cq + CQ_OFF_TAIL);
	ring->cq_overflow = (unsigned int *)(cq + CQ_OFF_OVERFLOW);
	ring->cq_flags = (unsigned int *)(cq + CQ_OFF_FLAGS);
	ring->cqes = cq + CQ_OFF_CQES;
	ring->sqes = ring->sqe_map;
	*(unsigned int *)(sq + SQ_OFF_MASK) = ring->sq_mask;
	*(unsigned int *)(sq + SQ_OFF_ENTRIES) = ring->sq_entries;
	*(unsigned int *)(cq + CQ_OFF_MASK) = ring->cq_mask;
	*(unsigned int *)(cq + CQ_OFF_ENTRIES) = ring->cq_entries;
}

static bool punt_env(void)
{
	const char *v = getenv("NOWAIT_PUNT");

	return v && v[0] == '1';
}

static struct nw_ring *ring_alloc(const struct io_uring_params *p)
{
	struct nw_ring *ring = calloc(1, sizeof(*ring));

	if (!ring)
		return NULL;
	ring->flags = p->flags;
	ring->features = NW_FEATURES;
	ring->sq_entries = p->sq_entries;
	ring->cq_entries = p->cq_entries;
	ring->sq_mask = p->sq_entries - 1;
	ring->cq_mask = p->cq_entries - 1;
	ring->sqe_shift = (p->flags & IORING_SETUP_SQE128) ? 7 : 6;
	ring->cqe_shift = (p->flags & IORING_SETUP_CQE32) ? 5 : 4;
	ring->single_issuer = p->flags & IORING_SETUP_SINGLE_ISSUER;
	ring->lockless_cq =
		ring->single_issuer && (p->flags & IORING_SETUP_DEFER_TASKRUN);
	ring->disabled = p->flags & IORING_SETUP_R_DISABLED;
	if (ring->single_issuer && !ring->disabled)
		ring->submitter_tid = nw_gettid();
	ring->ovf_tail = &ring->ovf_head;
	ring->evfd = -1;
	ring->poll_ops = &nw_ring_poll_ops;
	ring->trace_on = nw_trace_init();
	pthread_mutex_init(&ring->submit_lock, NULL);
	pthread_mutex_init(&ring->wake_lock, NULL);
	pthread_mutex_init(&ring->reg_lock, NULL);
	pthread_mutex_init(&ring->poll_lock, NULL);
	pthread_mutex_init(&ring->reactor_lock, NULL);
	pthread_mutex_init(&ring->reactor_mu, NULL);
	pthread_cond_init(&ring->reactor_cv, NULL);
	ring->loop.epfd = ring->loop.wake_fd = -1;
	ring->tmo_fd = -1;
	nw_list_init(&ring->tmo_count);
	nw_list_init(&ring->busy_pfds);
	for (int i = 0; i < NW_POLL_HASH; i++)
		nw_list_init(&ring->poll_hash[i]);
	/* Engine option (benchmarks): no nowait-first issue on this ring. */
	ring->punt_all = punt_env();
	nw_spin_init(&ring->spin);
	return ring;
}

/* IORING_SETUP_ATTACH_WQ: only the fd is validated (io-wq is per task). */
static int check_attach_wq(const struct io_uring_params *p)
{
	struct nw_ring *other;
	int ret;

	if (!(p->flags & IORING_SETUP_ATTACH_WQ))
		return 0;
	ret = nw_ring_lookup(p->wq_fd, &other);
	if (ret == -EBADF)
		return -ENXIO;
	return ret ? -EINVAL : 0;
}

int nw_setup(unsigned int entries, struct io_uring_params *uparams)
{
	static pthread_once_t optable_once = PTHREAD_ONCE_INIT;
	struct io_uring_params p;
	struct nw_ring *ring;
	int fd, ret;

	/* Every request starts from a ring: check the opcode tables first. */
	pthread_once(&optable_once, nw_optable_init);
	if (nw_copy_from_user(&p, uparams, sizeof(p)))
		return -EFAULT;
	for (size_t i = 0; i < sizeof(p.resv) / sizeof(p.resv[0]); i++)
		if (p.resv[i])
			return -EINVAL;
	ret = check_flags(&p);
	if (!ret)
		ret = size_rings(entries, &p);
	if (!ret)
		ret = check_attach_wq(&p);
	if (ret)
		return ret;
	fill_offsets(&p);
	p.features = NW_FEATURES;

	ring = ring_alloc(&p);
	if (!ring)
		return -ENOMEM;
	fd = create_memory(ring);
	if (fd < 0) {
		free(ring);
		return fd;
	}
	init_pointers(ring);
	if (p.flags & IORING_SETUP_SQPOLL) {
		ret = nw_sqpoll_create(ring, &p);
		if (ret)
			goto err_unmap;
	}
	if (nw_copy_to_user(uparams, &p, sizeof(p))) {
		ret = -EFAULT;
		if (!ring->sqd)
			goto err_unmap;
		/* The poller may still read the memory: leak it. */
		nw_sqpoll_cancel_create(ring);
		close(fd);
		return ret;
	}
	nw_ring_add(ring, fd);
	return fd;
err_unmap:
	unmap_rings(ring);
	free(ring);
	close(fd);
	return ret;
}
