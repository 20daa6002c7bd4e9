/* SPDX-License-Identifier: MIT */
/*
 * The engine's core types: struct nw_ring (one io_uring instance) and
 * struct nw_req (one request, the io_kiocb analogue), plus the helpers every
 * file uses.
 *
 * Memory ordering on the shared rings, as in the kernel's io_uring.c:
 * - SQ: the program store-releases sq.tail after writing SQEs; the engine
 *   load-acquires it (submit.c), reads the SQEs, and store-releases sq.head
 *   when the batch is consumed, after which the program may reuse the slots.
 * - CQ: the engine writes CQEs, then store-releases cq.tail (complete.c);
 *   the program load-acquires cq.tail, reads CQEs, store-releases cq.head.
 *   The engine load-acquires cq.head before it overwrites a slot.
 */
#ifndef NW_INTERNAL_H
#define NW_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/io_uring.h>
#include "compat.h"
#include "iowq.h"
#include "list.h"
#include "loop.h"
#include "spin.h"
#include "util.h"

#define likely(x)	    __builtin_expect(!!(x), 1)
#define unlikely(x)	    __builtin_expect(!!(x), 0)
#define READ_ONCE(x)	    __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)    __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define load_acquire(p)	    __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr)-offsetof(type, member)))

/*
 * ThreadSanitizer cannot see that the program's mapping of the rings and
 * the engine's are the same memory, so it misses the CQ tail's
 * release/acquire pairing. Under TSan the engine also releases a tag the
 * program (our tests) acquires after reading the tail.
 */
#if defined(__SANITIZE_THREAD__)
void __tsan_release(void *addr);
void __tsan_acquire(void *addr);
extern char nw_tsan_ring_tag;
#define NW_TSAN_RELEASE() __tsan_release(&nw_tsan_ring_tag)
#else
#define NW_TSAN_RELEASE() \
	do {              \
	} while (0)
#endif

/* Return values of an opdef's issue(): see opdef.h. */
enum {
	NW_COMPLETE = 0, /* req->res holds the result: post the CQE */
	NW_QUEUED = 1,	 /* the op took ownership and completes later */
	NW_RETRY = 2,	 /* would block: arm readiness, else a worker */
	NW_PUNT = 3,	 /* cannot be tried nonblocking: straight to a worker */
};
/* A -EAGAIN returned by an op is final (RWF_NOWAIT asked by the program). */

/* Issue flags. */
#define NW_ISSUE_F_NONBLOCK (1U << 0) /* inline, must not block */
#define NW_ISSUE_F_MSHOT    (1U << 1) /* a multishot op's event (poll.c) */

/* Request flags. */
#define NW_REQ_F_FAIL		(1U << 0) /* failed: breaks a (non-hard) link */
#define NW_REQ_F_SKIP_LINK_CQES (1U << 2) /* suppress followers' CQEs */
#define NW_REQ_F_CQE_SKIP	(1U << 3) /* no CQE on success */
#define NW_REQ_F_WORKER		(1U << 4) /* completed by a worker (EVENTFD_ASYNC) */
#define NW_REQ_F_REG_FILE	(1U << 5) /* the fd is a regular file */
#define NW_REQ_F_POLL_ADD	(1U << 6) /* a POLL_ADD request (poll.c) */
#define NW_REQ_F_MSHOT		(1U << 7) /* multishot: stays armed after a CQE */
#define NW_REQ_F_TW_QUEUED	(1U << 8) /* on tw_head for a multishot event */
#define NW_REQ_F_BLOCK		(1U << 10) /* punted after a nonblocking try: block */
#define NW_REQ_F_TIMER \
	(1U << 11) /* a timeout on the ring's timer (timeout.c) */
#define NW_REQ_F_LTIMEOUT   (1U << 12) /* a LINK_TIMEOUT */
#define NW_REQ_F_FIXED_DONE (1U << 13) /* fd is the fixed slot's: file_node */
#define NW_REQ_F_BUF_NODE   (1U << 14) /* holds a registered buffer: buf_node */
/* In a worker in place of a poll the kernel would arm (blocking connect). */
#define NW_REQ_F_WQ_POLL    (1U << 21)
/* Counted in ring->nr_reqs (a submitted request; drain.c's gate). */
#define NW_REQ_F_COUNTED    (1U << 26)

/* sqe->personality: req->creds held (creds.c); SWITCH: not the thread's. */
#define NW_REQ_F_CREDS	      (1U << 27)
#define NW_REQ_F_CREDS_SWITCH (1U << 28)

/*
 * One CQE as the engine carries it before it reaches the ring; big[] is
 * only written for CQE32 rings.
 */
struct nw_cqe {
	uint64_t user_data;
	int32_t res;
	uint32_t flags;
	uint64_t big[2];
};

/* An entry on the CQ overflow list (IORING_FEAT_NODROP). */
struct nw_ovf {
	struct nw_ovf *next;
	struct nw_cqe cqe;
};

#define NW_REQ_CMD_SIZE 64

struct nw_ring;
struct nw_req;
struct nw_rsrc;
struct nw_rsrc_node;
struct nw_waiter;
struct nw_sqd;
struct nw_kbuf;
struct nw_kbuf_ctx;
struct nw_creds;
struct nw_creds_table;
struct nw_pollfd;
struct nw_ring_poll_ops;
struct iovec;
struct nw_trace_req;

/*
 * What continues a request that the reactor found ready or that was
 * queued as task work for the submit side: set by whoever parked or
 * queued it, as the kernel's io_task_work.func is. submit.c's reissue and
 * next-link issue, poll.c's POLL_ADD check and multishot turn, timeout.c's
 * expiry, complete.c's completion. submit_side: the caller holds the
 * submit side (it may post CQEs); the task-work runner always does.
 */
typedef void (*nw_tw_func)(struct nw_req *req, bool submit_side);

/* What one harvest of a ring's loop collects (reactor.c runs it). */
#define NW_HARVEST_MSHOT 64
struct nw_harvest {
	struct nw_ring *ring;
	int mode;	      /* enum nw_run_mode (reactor.h) */
	struct nw_list ready; /* requests to continue, on poll_node */
	int nr_mshot;
	struct nw_req *mshot[NW_HARVEST_MSHOT]; /* multishot events to queue */
	unsigned short gen; /* the event's being delivered (nw_loop_event) */
};

/* One request. Lives on the ring's free list between uses. */
struct nw_req {
	struct nw_ring *ring;
	struct nw_req *link; /* next request of the chain, or the free list */
	uint64_t user_data;
	uint8_t opcode;
	uint8_t sqe_flags;
	uint32_t flags; /* NW_REQ_F_* */
	int32_t fd;
	int32_t res;
	uint32_t cflags;
	uint64_t big[2];	/* CQE32 extra words */
	struct nw_req *tw_next; /* on ring->tw_head, completed elsewhere */
	nw_tw_func tw_func;	/* what runs it there, or when it is ready */
	struct nw_trace_req *trace; /* NOWAIT_TRACE: its SQE (trace.c) */
	struct nw_work work;	    /* on the worker pool */
	void *async; /* op data too big for cmd; freed by the op's cleanup */
	/* Readiness (poll.c), under ring->poll_lock while parked. */
	struct nw_list poll_node;
	struct nw_pollfd *pfd;
	unsigned int poll_mask;	  /* NW_POLL* the request waits for */
	unsigned int poll_seq;	  /* fd's edge count before the last attempt */
	unsigned int poll_events; /* what fired */
	unsigned int poll_arms;	  /* arms so far (bounded) */
	unsigned int park_gen;	  /* ring->submit_gen when it parked */
	/* Unparked by a cancel while TW_QUEUED: its task work ends it. */
	bool poll_canceled;
	bool poll_drain; /* ...after one last turn takes what is pending */
	/*
	 * Woken by an edge: 1 + the fd's kind, and poll_seq is the edge count
	 * after it, taken under the harvest's poll_lock; the reissue's
	 * nw_poll_prepare uses them instead of looking again. 0: none.
	 */
	unsigned char poll_snap;
	/* Set by prep: a program's write runs its turns at once (reactor.c). */
	bool sync_wake;
	/* Set by prep (rw.c): a try with no wake-up only says EAGAIN again. */
	bool lazy_ok;
	/* Parked by a submit on an fd not watched yet (poll.c's park_lazy). */
	bool poll_lazy;
	pid_t task_tid; /* the thread that submitted it (signals go there) */
	uint64_t seq;	/* which use of this request struct (cancel identity) */
	struct nw_req *ltimeout; /* the LINK_TIMEOUT guarding it, if armed */
	struct nw_rsrc_node *file_node; /* fixed file in use (FIXED_DONE) */
	struct nw_rsrc_node *buf_node; /* registered buffer in use (BUF_NODE) */
	/* Slots it emptied: their tags go before its CQE (rsrc.c). */
	struct nw_rsrc_node *tag_nodes;
	/* IOSQE_BUFFER_SELECT (kbuf.c): the buffer held, length asked, group */
	struct nw_kbuf *kbuf;
	uint32_t buf_len; /* 0: a whole buffer */
	uint16_t buf_group;
	struct nw_creds *creds; /* its personality (NW_REQ_F_CREDS) */
	/* Per-op private state (nw_req_cmd), like the kernel's io_kiocb_to_cmd */
	uint64_t cmd[NW_REQ_CMD_SIZE / 8];
};

#define nw_req_cmd(req, type) ((type *)(void *)(req)->cmd)

/* Inline completions are collected here and published once per batch. */
#define NW_CQE_BATCH 64

struct nw_ring {
	/* Identity: rings are found by the memfd's inode (ringfd.c). */
	dev_t dev;
	ino_t ino;
	unsigned int id; /* in the memfd's name, "nowait-ring:<id>" */
	int last_fd;	 /* the program's fd for it, as last seen */
	bool published;	 /* setup handed it to the program (atomic) */
	struct nw_ring *next;

	unsigned int flags; /* IORING_SETUP_* */
	unsigned int features;
	unsigned int sq_entries, cq_entries;
	unsigned int sq_mask, cq_mask;
	unsigned int sqe_shift; /* 6, or 7 with SQE128 */
	unsigned int cqe_shift; /* 4, or 5 with CQE32 */
	bool cqe_mixed;		/* CQE_MIXED: IORING_CQE_F_32 ones take 2 */
	bool lockless_cq; /* SINGLE_ISSUER|DEFER_TASKRUN: submitter posts all */
	bool single_issuer;
	bool trace_on; /* NOWAIT_TRACE or _STATS: read it by nw_traced() */
	struct nw_stats *stats;	    /* NOWAIT_STATS (stats.c) */
	unsigned int nr_overflowed; /* CQEs that went to the overflow list */
	pid_t submitter_tid;	    /* SINGLE_ISSUER: 0 until fixed */
	int clockid;	 /* IORING_REGISTER_CLOCK: MONOTONIC or BOOTTIME */
	pid_t owner_pid; /* the process that set it up (fork: syscall.c) */
	/* IORING_REGISTER_IOWQ_MAX_WORKERS of an SQPOLL ring: its poller's */
	unsigned int sqp_wq_max[2];
	/* IORING_REGISTER_NAPI (regwq.c): kept, nothing is busy-polled */
#define NW_NAPI_IDS 16
	uint8_t napi_track; /* IO_URING_NAPI_TRACKING_*, 255: inactive */
	bool napi_prefer;
	unsigned int napi_busy_us;
	unsigned int nr_napi_ids, napi_ids[NW_NAPI_IDS];
	bool disabled; /* R_DISABLED until ENABLE_RINGS */
	/*
	 * IORING_REGISTER_RESTRICTIONS (register.c): what was registered
	 * while disabled, in force (restricted) from ENABLE_RINGS on.
	 */
	bool restricted, restrict_registered;
	uint8_t restrict_flags_allowed, restrict_flags_required;
	uint64_t restrict_reg_ops;    /* bit per register opcode */
	uint64_t restrict_sqe_ops[4]; /* bit per SQE opcode */
	struct nw_sqd *sqd; /* SQPOLL: the poller serving it (sqpoll.c) */
	bool sqd_detached;  /* let go of: the poller serves it no more */

	/* The engine's own mappings of the rings and SQEs (ringmem.c). */
	void *rings_map, *sqe_map;
	size_t rings_map_sz, sqe_map_sz;
	size_t rings_map_cap; /* mapped (a resizable ring: the largest) */
	bool mem_settled; /* the program's CQ_RING mappings alias the rings */
	bool settle_flagged; /* IORING_SQ_TASKRUN raised until it settles */
	bool mem_user;	     /* IORING_SETUP_NO_MMAP: both are program memory */
	bool mem_pinned;     /* NO_MMAP: engine's own mappings of those pages */
	bool pbuf_file;	     /* the memfd spans IORING_OFF_PBUF_RING's window */
	/* The memfd at IORING_OFF_PBUF_RING (IOU_PBUF_RING_MMAP), or NULL */
	void *pbuf_win;
	unsigned int *sq_head, *sq_tail, *sq_flags, *sq_dropped, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_overflow, *cq_flags;
	char *cqes, *sqes;

	/* Submission side, under submit_lock (not taken with SINGLE_ISSUER). */
	pthread_mutex_t submit_lock;
	unsigned int cached_sq_head;
	bool drain_disabled;
	/* IOSQE_IO_DRAIN (drain.c): the defer list, linked by tw_next. */
	bool drain_active, drain_next, in_drain;
	unsigned int nr_reqs;	 /* submitted requests not yet freed */
	unsigned int nr_drained; /* of them, on the defer list */
	struct nw_req *defer_first, *defer_last;
	struct nw_req *req_cache;
	struct nw_cqe batch[NW_CQE_BATCH];
	unsigned int nr_batch;
	unsigned int cq_room; /* lockless rings: CQ slots reserved for us */
	struct nw_req *link_head, *link_tail; /* chain being assembled */
	bool batch_async; /* the batch holds a worker's completion */

	/*
	 * Requests finished off the submit side (workers, the reactor), for
	 * the submit side to complete: a lock-free stack, LIFO.
	 */
	struct nw_req *tw_head;

	/* Completion side: also owned by the submit side. */
	unsigned int cached_cq_tail;
	unsigned int evfd_last_tail;
	struct nw_ovf *ovf_head, **ovf_tail;
	bool cq_dropped; /* a CQE was lost: next wait returns -EBADR */
	/* Aux CQEs lost off the submit side (no memory), folded by nw_run_tw. */
	unsigned int aux_lost;

	/* Registered eventfd (register.c), on the submit side. */
	int evfd;
	bool evfd_async;
	/*
	 * The program's number of it (what a POLL_ADD names), and a count of
	 * the ring's own signals of it: a multishot poll woken by one ends,
	 * the kernel's EPOLL_URING_WAKE (poll.c).
	 */
	int evfd_user;
	unsigned int evfd_signals;

	/* Waiters in GETEVENTS (wait.c). */
	struct nw_spin spin; /* spin-before-sleep policy (spin.c) */
	int waiters;
	struct nw_waiter *waiter_list; /* under wake_lock */
	pthread_mutex_t wake_lock;

	/* Register-side lock (kernel: uring_lock for register). */
	pthread_mutex_t reg_lock;

	/* Readiness (poll.c). Lock order: submit_lock before poll_lock. */
	pthread_mutex_t poll_lock;
	struct nw_loop loop;
	struct nw_pollfd ***pfd_dir; /* by fd number, two levels (fdcache.c) */
	unsigned int nr_pfd_dir;
	struct nw_list busy_pfds; /* pollfds with parked requests */
#define NW_POLL_HASH 64
	struct nw_list
		poll_hash[NW_POLL_HASH]; /* parked POLL_ADDs by user_data */
	unsigned int nr_parked;
	unsigned int nr_sync_parked;  /* of them sync_wake ones (atomic) */
	unsigned int nr_lazy;	      /* of them poll_lazy ones (poll_lock) */
	pthread_mutex_t reactor_lock; /* held by the harvesting thread */
	pthread_mutex_t reactor_mu;   /* guards the fields below */
	pthread_cond_t reactor_cv;
	unsigned int drivers_wanted;
	int driver; /* a waiter drives the reactor (atomic flag) */
	bool bg_running, bg_in_wait;
	bool punt_all; /* NOWAIT_PUNT=1: no nowait-first issue */
	/*
	 * Polls of this ring's own fd (ringpoll.c, through poll_ops, set at
	 * setup): once polled, every CQ commit writes poll_evfd while
	 * ring_pollers (atomic) says someone waits.
	 */
	const struct nw_ring_poll_ops *poll_ops;
	bool poll_activated;
	int poll_evfd;
	unsigned int ring_pollers;
	unsigned int ring_watches; /* this ring's pfds on rings' fds (atomic) */

	/* Registered files and buffers (rsrc.c): made at first register. */
	struct nw_rsrc *rsrc;

	/* Provided buffers (kbuf.c): made at first use, under its own lock. */
	struct nw_kbuf_ctx *kbuf;
	/* IORING_REGISTER_PERSONALITY's ids (creds.c), made at the first */
	struct nw_creds_table *pers;

	/* Timeouts (timeout.c), under poll_lock. */
	int tmo_fd; /* timerfd in the epoll set, watched by tmo_io */
	struct nw_io tmo_io;
	struct nw_req **tmo_heap; /* min-heap by deadline */
	unsigned int tmo_nr, tmo_cap;
	struct nw_list tmo_count; /* count-based ones (poll_node) */
	unsigned int nr_count_tmo;
	unsigned int cq_timeouts;      /* timeout CQEs posted (atomic) */
	unsigned int cq_last_tm_flush; /* events at the last count check */
	unsigned int tmo_seq; /* timeouts fired: wakes waiters (atomic) */
	uint64_t req_seq;     /* submit side: numbers request uses */
	bool in_tmo_flush;
	bool batch_timeout; /* the batch holds a timeout's CQE */
	bool dead;	    /* the program let go of it: nothing is reissued */
	bool gone; /* nw_ring_referenced said no (atomic; the reactor sets it) */
	bool released; /* ring_release ran (under reg_lock): no register */
	/*
	 * Teardown (the life of a ring, docs/architecture.md): a close hook
	 * saw an fd of it go (suspect, atomic; exit_check: looks left for
	 * its reactor thread), torn once it is claimed for release.
	 */
	bool suspect, torn;
	unsigned int exit_check;
	bool exit_watch; /* files registered: the reactor looks (register.c) */
	/* setup.c's release of everything, left for the reactor thread. */
	void (*release)(struct nw_ring *ring);
	void *req_chunks; /* the request cache's allocations (complete.c) */
	long long verify_due_ns; /* next check of the watches, poll_lock */
	unsigned int submit_gen; /* submit batches so far (submit side) */
	/*
	 * Rings shared across fork (docs/fork.md). forked (atomic): open
	 * when the process forked, so every hold of the submit side also
	 * takes the process-shared lock word in the ring memory (xheld: this
	 * hold took it). fork_busy: the submit side was held at the fork,
	 * so the child may not submit. In a child, adopted is its own
	 * engine for its parent's ring, and fork_child marks such a one.
	 */
	bool forked, xheld, fork_busy, fork_child;
	struct nw_ring *adopted;
};

/*
 * Engine-private word in the rings header's padding, next to
 * NW_SQ_OFF_WAKE (sqpoll.h): the lock that serialises the SQ head and
 * the CQ posts of processes sharing a forked ring (complete.c).
 */
#define NW_SQ_OFF_XLOCK 168

/*
 * Whether ring's requests are traced or counted (NOWAIT_TRACE or
 * NOWAIT_STATS): one predictable branch where a request is initialised,
 * completed and freed. `make NOTRACE=1` (-DNW_NO_TRACE) builds the engine
 * without trace.c and stats.c, every such branch folded away: the build
 * that `tools/trace-cost.sh` compares today's against.
 */
#ifdef NW_NO_TRACE
#define nw_traced(ring) ((void)(ring), false)
#else
#define nw_traced(ring) ((ring)->trace_on)
#endif

static inline struct io_uring_sqe *nw_sqe_at(struct nw_ring *ring,
					     unsigned int idx)
{
	return (struct io_uring_sqe *)(ring->sqes +
				       ((size_t)idx << ring->sqe_shift));
}

/*
 * io_check_restriction: on a restricted ring, may an SQE with this opcode
 * and these flags run? The required flags must all be there, and no flag
 * that is neither allowed nor required.
 */
static inline bool nw_restrict_sqe_ok(const struct nw_ring *ring,
				      unsigned int opcode, unsigned int flags)
{
	unsigned int req = ring->restrict_flags_required;

	if (!(ring->restrict_sqe_ops[(opcode & 255) / 64] >> (opcode % 64) & 1))
		return false;
	if ((flags & req) != req)
		return false;
	return !(flags & ~(ring->restrict_flags_allowed | req));
}

/*
 * util.c: non-zero while this thread runs engine code (nowait_setup,
 * enter and register; always on the engine's own threads). The close
 * hooks then do nothing: the engine closes fds of its own, some under
 * poll_lock, and a program's signal handler may close one while its
 * thread holds it; what it closes that way is left to the re-check.
 */
extern __thread unsigned int nw_in_engine
	__attribute__((tls_model("initial-exec")));

/* ringfd.c: find the ring behind a program's fd (always with fstat). */
int nw_ring_lookup(int fd, struct nw_ring **ringp);
/* Does fd name a nowait ring? Cheap (a bitmap) unless it ever did. */
bool nw_is_ring_fd(int fd);
/*
 * The fd an op that uses a file as a plain one (read, write, fallocate,
 * truncate, sync, xattrs, splice) is to call: fd itself, or for a ring's
 * fd an anon-inode file that answers as the kernel's ring file does.
 */
int nw_ring_fd_as_file(int fd);
/* Whether the program still holds the ring (an fd or a mapping). */
bool nw_ring_referenced(struct nw_ring *ring);
/*
 * Whether the program holds a ring of its own not being exited: the pool
 * asks (iowq.c), as the kernel's io-wq goes with the task's last ring.
 */
bool nw_rings_held(void);
/* Teardown: no lookup finds the ring any more. */
void nw_ring_remove(struct nw_ring *ring);
/* A close hook: fd is about to be closed (a ring fd's: mark its ring). */
void nw_ring_fd_closing(int fd);
/* Have the ring's reactor thread, if any, ask twice whether it is gone. */
void nw_ring_exit_ask(struct nw_ring *ring);
/* Rings marked by nw_ring_fd_closing and not reaped yet (atomic). */
extern unsigned int nw_rings_suspect;
/* The same through the per-fd cache, for the submit hot path. */
int nw_ring_lookup_cached(int fd, struct nw_ring **ringp);
void nw_ring_add(struct nw_ring *ring, int fd);
/* Open this process's /proc/self pair now, before setup starts a thread. */
void nw_ring_proc_prepare(void);
/* Does text (a maps line, a link) name the ring's memfd? */
bool nw_names_ring(const char *text, const struct nw_ring *ring);
/*
 * Call fn on each line of /proc/self/maps (without its newline) until it
 * returns true: 1 if it did, 0 if not, -1 when the file cannot be read.
 * Under a process-wide leaf lock; fn must not change the mappings.
 */
typedef bool (*nw_maps_line_fn)(const char *line, void *arg);
int nw_ring_maps_scan(nw_maps_line_fn fn, void *arg);
/*
 * Every ring of the process in turn: the first for NULL, then the next,
 * NULL at the end. A torn-down ring leaves the list but its memory stays
 * for a while (setup.c's graveyard), so no lock is held between.
 */
struct nw_ring *nw_ring_next(struct nw_ring *ring);
/* setup.c */
int nw_setup(unsigned int entries, struct io_uring_params *p);
/*
 * In a forked child, the child's own engine for its parent's ring (made
 * at the first call, then ring->adopted), or NULL when it cannot have
 * one (docs/fork.md).
 */
struct nw_ring *nw_ring_adopt(struct nw_ring *ring);
/* A forked child's exit or exec: its adopted rings' requests end now. */
void nw_fork_task_exit(void);
/* The kernel's ring sizing of p for entries (CQSIZE, CLAMP): 0 or -EINVAL. */
int nw_setup_size_rings(unsigned int entries, struct io_uring_params *p);
/* syscall.c: io_uring_enter with the system call's long result */
long nw_enter(int fd, unsigned int to_submit, unsigned int min_complete,
	      unsigned int flags, const void *arg, size_t argsz);

/* wait.c */
int nw_wait(struct nw_ring *ring, unsigned int min_complete, unsigned int flags,
	    const void *arg, size_t argsz);
/*
 * With the async signals blocked: a signal pending that mask lets through
 * is let in (its handler runs) and -EINTR returned, as a sleep with that
 * mask would; else 0.
 */
int nw_wait_signal_check(const sigset_t *mask);
/* GETEVENTS in a forked child, on its parent's ring: the shared CQ only. */
int nw_wait_foreign(struct nw_ring *ring, unsigned int min_complete,
		    unsigned int flags, const void *arg, size_t argsz);
/* The GETEVENTS argument (io_get_ext_arg), read by nw_get_ext_arg. */
struct nw_ext_arg {
	const void *sigp; /* the sigset (not yet read), NULL: none */
	size_t sigsz;
	bool has_deadline;
	struct timespec deadline; /* CLOCK_MONOTONIC */
	long long min_ns;	  /* min_wait_usec in ns, 0: none */
};
/* ring: its clock for IORING_ENTER_ABS_TIMER (IORING_REGISTER_CLOCK). */
int nw_get_ext_arg(const struct nw_ring *ring, unsigned int flags,
		   const void *arg, size_t argsz, struct nw_ext_arg *ea);

/* register.c */
int nw_register(struct nw_ring *ring, unsigned int opcode, void *arg,
		unsigned int nr_args);
/* fd -1: the opcodes that need no ring, -EINVAL for the others. */
int nw_register_blind(unsigned int opcode, void *arg, unsigned int nr_args);
/* The register opcode's name, or NULL (the trace's). */
const char *nw_register_name(unsigned int opcode);

/*
 * A DEFER_TASKRUN ring completes only in enter, but someone must notice
 * readiness meanwhile when that is observable: a registered eventfd,
 * IORING_SQ_TASKRUN (TASKRUN_FLAG), or a poll of the ring's fd
 * (io_uring_poll reports queued task work).
 */
static inline bool nw_ring_observed(struct nw_ring *ring)
{
	return READ_ONCE(ring->evfd) >= 0 ||
	       (ring->flags & IORING_SETUP_TASKRUN_FLAG) ||
	       __atomic_load_n(&ring->poll_activated, __ATOMIC_ACQUIRE);
}

#endif /* NW_INTERNAL_H */
