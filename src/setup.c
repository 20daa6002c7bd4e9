/* SPDX-License-Identifier: MIT */
/*
 * io_uring_setup(2): parameter validation exactly as the kernel does it
 * (io_uring.c io_uring_sanitise_params / io_uring_fill_params), the ring
 * struct, and the hand-off to ringmem.c for the ring memory. Runs on the
 * calling thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "opdef.h"
#include "ringmem.h"
#include "regwq.h"
#include "ringpoll.h"
#include "sqpoll.h"
#include "tctx.h"
#include "trace.h"
#include "stats.h"

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
	/*
	 * No fd to mmap the rings through: they must be the program's own
	 * memory. NO_MMAP is not built yet, so this flag always fails here.
	 */
	if ((flags & IORING_SETUP_REGISTERED_FD_ONLY) &&
	    !(flags & IORING_SETUP_NO_MMAP))
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
	/* A ring has 32-byte CQEs or mixed ones, not both. */
	if ((flags & IORING_SETUP_CQE32) && (flags & IORING_SETUP_CQE_MIXED))
		return -EINVAL;
	/* sq_thread_cpu is checked with the poller (sqpoll.c), as in 5.11+. */
	return 0;
}

/* io_uring_fill_params: ring sizes (setup's, and a resize's). */
int nw_setup_size_rings(unsigned int entries, struct io_uring_params *p)
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
	ring->cqe_mixed = p->flags & IORING_SETUP_CQE_MIXED;
	ring->single_issuer = p->flags & IORING_SETUP_SINGLE_ISSUER;
	ring->lockless_cq =
		ring->single_issuer && (p->flags & IORING_SETUP_DEFER_TASKRUN);
	ring->disabled = p->flags & IORING_SETUP_R_DISABLED;
	ring->clockid = CLOCK_MONOTONIC;
	ring->owner_pid = nw_getpid();
	ring->napi_track = 255; /* IO_URING_NAPI_TRACKING_INACTIVE */
	if (ring->single_issuer && !ring->disabled)
		ring->submitter_tid = nw_gettid();
	ring->ovf_tail = &ring->ovf_head;
	ring->evfd = -1;
	ring->poll_ops = &nw_ring_poll_ops;
	ring->trace_on = nw_trace_init() | nw_stats_init();
	if (nw_stats_init())
		nw_stats_ring(ring);
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

/*
 * The ring is made: hand it to the program by its fd, or with
 * REGISTERED_FD_ONLY by an index into the calling thread's registered
 * rings (io_ring_add_registered_file); a full table (-EBUSY) leaves it as
 * a ring the program closed at once.
 */
static int setup_publish(struct nw_ring *ring, int fd, unsigned int flags)
{
	int index;

	nw_tctx_add();		  /* __io_uring_add_tctx_node */
	nw_regwq_task_init(ring); /* and its io_wq, made with the first ring */
	if (!(flags & IORING_SETUP_REGISTERED_FD_ONLY)) {
		nw_ring_add(ring, fd);
		return fd;
	}
	index = nw_tctx_install(ring, fd);
	close(fd);
	nw_ring_add(ring, -1);
	return index;
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
		ret = nw_setup_size_rings(entries, &p);
	if (!ret)
		ret = check_attach_wq(&p);
	if (ret)
		return ret;
	p.features = NW_FEATURES;

	ring = ring_alloc(&p);
	if (!ring)
		return -ENOMEM;
	fd = nw_ringmem_create(ring, &p);
	if (fd < 0) {
		free(ring);
		return fd;
	}
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
	return setup_publish(ring, fd, p.flags);
err_unmap:
	nw_ringmem_destroy(ring);
	free(ring);
	close(fd);
	return ret;
}
