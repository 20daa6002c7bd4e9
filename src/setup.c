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
#include <sys/syscall.h>
#include "internal.h"
#include "opdef.h"
#include "complete.h"
#include "creds.h"
#include "fdcache.h"
#include "kbuf.h"
#include "rsrc.h"
#include "ringmem.h"
#include "reactor.h"
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

/*
 * Torn-down rings are freed only after NW_GRAVE later teardowns: a thread
 * that found one just before it left the list (a close hook's owner
 * record, nw_ring_next, a stale submit cache entry) may still be on it.
 */
#define NW_GRAVE 64
static pthread_mutex_t grave_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nw_ring *grave[NW_GRAVE];
static unsigned int grave_next;

static void ring_bury(struct nw_ring *ring)
{
	struct nw_ring *old;

	pthread_mutex_lock(&grave_lock);
	old = grave[grave_next];
	grave[grave_next] = ring;
	grave_next = (grave_next + 1) % NW_GRAVE;
	pthread_mutex_unlock(&grave_lock);
	free(old);
}

/* The fds of the ring's own loop, timer and poll eventfd. */
static void ring_close_fds(struct nw_ring *ring)
{
	pthread_mutex_lock(&ring->reactor_lock);
	pthread_mutex_lock(&ring->poll_lock);
	nw_fdcache_free(ring);
	__atomic_store_n(&ring->loop.ready, false, __ATOMIC_RELEASE);
	nw_loop_free(&ring->loop);
	if (ring->tmo_fd >= 0)
		close(ring->tmo_fd);
	ring->tmo_fd = -1;
	if (ring->poll_activated)
		close(ring->poll_evfd);
	ring->poll_evfd = -1;
	pthread_mutex_unlock(&ring->poll_lock);
	pthread_mutex_unlock(&ring->reactor_lock);
}

/*
 * Release what is left of a ring the program let go of, once its exit is
 * done and every request freed (reactor.c's teardown, nw_setup's reap):
 * no lookup finds it, its fds and mappings go, its memory after a while.
 */
static void ring_release(struct nw_ring *ring)
{
	struct nw_ovf *o;

	nw_ring_remove(ring);
	ring_close_fds(ring);
	if (ring->evfd >= 0)
		close(ring->evfd);
	ring->evfd = -1;
	pthread_mutex_lock(&ring->reg_lock);
	nw_rsrc_unregister_files(ring, NULL, 0);
	nw_rsrc_destroy(ring);
	nw_creds_destroy(ring);
	/*
	 * Under reg_lock, and marked: a register that found the ring before
	 * nw_ring_remove (its fd closed meanwhile, by a worker's CLOSE, say)
	 * either ran first and what it made goes here, or sees the mark;
	 * else its provided-buffer state, made after this, was never freed
	 * (reg-fuzz, LeakSanitizer: kbuf.c ctx_get).
	 */
	nw_kbuf_destroy(ring);
	ring->released = true;
	pthread_mutex_unlock(&ring->reg_lock);
	nw_req_cache_free(ring);
	while ((o = ring->ovf_head)) {
		ring->ovf_head = o->next;
		free(o);
	}
	free(ring->tmo_heap);
	ring->tmo_heap = NULL;
	nw_ringmem_destroy(ring);
	nw_sqpoll_release(ring);
	nw_stats_ring_gone(ring);
	ring_bury(ring);
}

/*
 * The report's counters, for a ring that is made: from then on the report
 * holds it until ring_release writes its table, so a setup that fails
 * later must not have given them (its ring is freed at once).
 */
static void ring_stats(struct nw_ring *ring)
{
	if (nw_stats_init())
		nw_stats_ring(ring);
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
	ring->evfd_user = -1;
	ring->poll_ops = &nw_ring_poll_ops;
	ring->release = ring_release;
	ring->poll_evfd = -1;
	/* Its counters come when it is made (ring_stats), not before. */
	ring->trace_on = nw_trace_init() | nw_stats_init();
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

	ring_stats(ring);
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

/*
 * Is this ring let go of, and to be torn down here and now? Only one
 * without a reactor thread (that one tears its ring down itself: it is
 * asked to look) and that nobody waits on or watches.
 */
static bool reap_one(struct nw_ring *ring)
{
	/* A forked child's copy shares the CQ with its parent's: not ours. */
	if (ring->owner_pid != nw_getpid() ||
	    __atomic_load_n(&ring->dead, __ATOMIC_ACQUIRE))
		return false;
	/* SQPOLL: let go of, it leaves its poller first (sqpoll.c). */
	if (ring->sqd &&
	    !__atomic_load_n(&ring->sqd_detached, __ATOMIC_ACQUIRE) &&
	    (nw_ring_referenced(ring) ||
	     __atomic_load_n(&ring->waiters, __ATOMIC_SEQ_CST) ||
	     __atomic_load_n(&ring->ring_pollers, __ATOMIC_SEQ_CST) ||
	     !nw_sqpoll_detach(ring)))
		return false;
	/* Its reactor thread looks itself, and may be tearing it down. */
	if (__atomic_load_n(&ring->bg_running, __ATOMIC_ACQUIRE)) {
		nw_ring_exit_ask(ring);
		return false;
	}
	return !nw_ring_referenced(ring) &&
	       !__atomic_load_n(&ring->waiters, __ATOMIC_SEQ_CST) &&
	       !__atomic_load_n(&ring->ring_pollers, __ATOMIC_SEQ_CST);
}

/*
 * Before a new ring is made, the rings the program may have let go of are
 * looked at: those a close hook marked (nw_ring_fd_closing), the
 * NW_REAP_NEWEST newest, as liburing closes and unmaps with raw system
 * calls no hook sees, and NW_REAP_OLDER of the older ones in turn (a
 * cursor that walks the list, one step per setup), so that a ring let go
 * of while newer ones were made (threads that each make and drop one) is
 * found all the same. Those let go of are released on the program's
 * thread; the rest are kept or left to their reactor thread. One fstat
 * per ring still in use.
 */
#define NW_REAP_NEWEST 4
#define NW_REAP_OLDER  2

/*
 * One reap at a time: two setups on different threads would otherwise
 * both find the same ring let go of, and one would read it (its maps, its
 * mappings) while the other releases it. (A setup that left the looking
 * to a reap under way would leave rings behind when many threads set up
 * at once.) A child forked during a reap starts with the lock free.
 */
static pthread_mutex_t reap_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int reap_cursor; /* under reap_lock */

static void reap_child(void)
{
	pthread_mutex_init(&reap_lock, NULL);
}

static void reap_atfork(void)
{
	pthread_atfork(NULL, NULL, reap_child);
}

/* Is ring, the i-th newest, one this reap looks at? */
static bool reap_wanted(struct nw_ring *ring, unsigned int i, unsigned int from)
{
	bool marked =
		__atomic_load_n(&ring->suspect, __ATOMIC_RELAXED) &&
		__atomic_exchange_n(&ring->suspect, false, __ATOMIC_SEQ_CST);

	if (marked)
		__atomic_sub_fetch(&nw_rings_suspect, 1, __ATOMIC_SEQ_CST);
	return marked || i < NW_REAP_NEWEST ||
	       (i - NW_REAP_NEWEST >= from &&
		i - NW_REAP_NEWEST < from + NW_REAP_OLDER);
}

static void ring_reap(void)
{
	struct nw_ring *ring, *next;
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	unsigned int i = 0, from;

	pthread_once(&once, reap_atfork);
	pthread_mutex_lock(&reap_lock);
	from = reap_cursor;
	for (ring = nw_ring_next(NULL); ring; ring = next, i++) {
		next = nw_ring_next(ring);
		if (i >= NW_REAP_NEWEST + from + NW_REAP_OLDER &&
		    !__atomic_load_n(&nw_rings_suspect, __ATOMIC_RELAXED))
			break;
		if (reap_wanted(ring, i, from) && reap_one(ring))
			nw_reactor_exit_unattended(ring);
	}
	/* Past the end of the list: start again from the oldest newest. */
	reap_cursor = i < NW_REAP_NEWEST + from + NW_REAP_OLDER
			      ? 0
			      : from + NW_REAP_OLDER;
	pthread_mutex_unlock(&reap_lock);
}

/* A child forked while another thread adopted starts with the lock free. */
static pthread_mutex_t adopt_lock = PTHREAD_MUTEX_INITIALIZER;

static void adopt_child(void)
{
	pthread_mutex_init(&adopt_lock, NULL);
}

static void adopt_atfork(void)
{
	pthread_atfork(NULL, NULL, adopt_child);
}

/* Can a child serve its copy of ring with an engine of its own? */
static bool adoptable(const struct nw_ring *old)
{
	return !old->sqd && !old->single_issuer && !old->mem_user &&
	       __atomic_load_n(&old->forked, __ATOMIC_RELAXED) &&
	       !old->fork_busy && !old->rsrc && !old->kbuf && !old->pers &&
	       !old->restricted && !old->disabled && !old->poll_activated &&
	       !__atomic_load_n(&old->dead, __ATOMIC_ACQUIRE);
}

/*
 * The child's own engine for its copy of the parent's ring: a new ring
 * struct (no requests, fresh locks, its loop and threads made as needed)
 * over the same ring memory and registered eventfd, listed for the
 * ring's fd. The copy, with the parent's requests in it, is never run.
 */
static struct nw_ring *adopt_new(struct nw_ring *old)
{
	struct io_uring_params p;
	struct nw_ring *ring;

	memset(&p, 0, sizeof(p));
	p.flags = old->flags;
	p.sq_entries = old->sq_entries;
	p.cq_entries = old->cq_entries;
	ring = ring_alloc(&p);
	if (!ring)
		return NULL;
	ring->dev = old->dev;
	ring->ino = old->ino;
	ring->id = old->id;
	ring->features = old->features;
	ring->clockid = old->clockid;
	ring->drain_disabled = old->drain_disabled;
	nw_ringmem_adopt(ring, old);
	ring->cached_sq_head = load_acquire(ring->sq_head);
	ring->cached_cq_tail = load_acquire(ring->cq_tail);
	ring->evfd = old->evfd;
	ring->evfd_async = old->evfd_async;
	ring->evfd_user = old->evfd_user;
	ring->evfd_last_tail = ring->cached_cq_tail;
	ring->forked = true;
	ring->fork_child = true;
	ring_stats(ring);
	return ring;
}

/*
 * The child's task goes away (exit, or exec through the preload's hook):
 * what its own engines still have in flight is cancelled and posted, as
 * the kernel does at exit and exec. A vfork child calling exec shares
 * the memory but not the pid (the cached one is the parent's): the
 * system call says whose rings these are.
 */
void nw_fork_task_exit(void)
{
	pid_t me = (pid_t)syscall(SYS_getpid);

	for (struct nw_ring *r = nw_ring_next(NULL); r; r = nw_ring_next(r))
		if (r->fork_child && r->owner_pid == me &&
		    !__atomic_load_n(&r->torn, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&r->nr_reqs, __ATOMIC_RELAXED))
			nw_reactor_task_exit(r);
}

struct nw_ring *nw_ring_adopt(struct nw_ring *old)
{
	static bool exit_hooked;

	struct nw_ring *ring;
	int fd;

	if (!adoptable(old))
		return NULL;
	pthread_mutex_lock(&adopt_lock);
	ring = old->adopted;
	if (!ring && (ring = adopt_new(old))) {
		fd = __atomic_load_n(&old->last_fd, __ATOMIC_RELAXED);
		nw_regwq_task_init(ring);
		nw_ring_add(ring, fd);
		__atomic_store_n(&old->adopted, ring, __ATOMIC_RELEASE);
		if (!exit_hooked)
			exit_hooked = !atexit(nw_fork_task_exit);
	}
	pthread_mutex_unlock(&adopt_lock);
	return ring;
}

int nw_setup(unsigned int entries, struct io_uring_params *uparams)
{
	static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
	static pthread_once_t optable_once = PTHREAD_ONCE_INIT;
	struct io_uring_params p;
	struct nw_ring *ring;
	int fd, ret;

	/* Every request starts from a ring: check the opcode tables first. */
	pthread_once(&optable_once, nw_optable_init);
	pthread_once(&fork_once, adopt_atfork);
	ring_reap();
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
		nw_ring_proc_prepare(); /* before the poller thread exists */
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
