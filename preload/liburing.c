/* SPDX-License-Identifier: MIT */
/*
 * libnowait-preload.so, liburing's submit and wait functions: a program
 * that uses liburing as a shared library (liburing.so.2) reaches the
 * engine through a function call, not a SIGSYS trap per io_uring_enter.
 * The preload comes first in the loader's search order, so the program's
 * calls to these exported names land here; each does what the library's
 * own function does over struct io_uring (liburing.so.2's stable ABI),
 * with nowait_hook_enter where the library makes its inline system call.
 *
 * Only what was read in both liburing 2.3 (Debian 12) and 2.15 (src/
 * queue.c, syscall.c, int_flags.h, setup.c, the header's inline peek):
 * the library that defines io_uring_submit after this one is identified
 * once (2.3: io_uring_get_events but no io_uring_major_version; 2.15: the
 * version functions say so). The two differ in int_flags: 2.3 has
 * INT_FLAG_REG_RING = 1 and asks IORING_SETUP_IOPOLL for a CQ enter; 2.15
 * keeps the enter flags themselves (REGISTERED_RING, NO_IOWAIT) in
 * int_flags, with REG_REG_RING 1, APP_MEM 2 and CQ_ENTER 4, skips
 * IORING_CQE_F_SKIP entries and knows IORING_SETUP_SQ_REWIND.
 *
 * Everything else goes to the library's own function (dlsym RTLD_NEXT),
 * which makes its system call (trapped, or the kernel's): another
 * liburing version, a process on the kernel's io_uring (NOWAIT_MODE
 * kernel, or auto mode's kernel verdict), a timeout without
 * IORING_FEAT_EXT_ARG (the library queues a timeout SQE), a 2.15 ring
 * with SQ_REWIND or CQE_MIXED in io_uring_peek_batch_cqe. Results are the
 * library's: -errno from the enter, errno untouched.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/io_uring.h>
#include <linux/time_types.h>
#include <nowait-abi.h>
#include <nowait-hook.h>

#define EXPORT __attribute__((visibility("default")))

#ifndef IORING_SETUP_SQ_REWIND
#define IORING_SETUP_SQ_REWIND (1U << 20)
#endif

/* route.c: has the process decided for the engine (its first call)? */
bool nw_preload_engine(void);

/* struct io_uring of liburing.so.2, the same bytes in 2.3 and 2.15. */
struct lu_sq {
	unsigned int *khead, *ktail, *kring_mask, *kring_entries, *kflags;
	unsigned int *kdropped, *array;
	struct io_uring_sqe *sqes;
	unsigned int sqe_head, sqe_tail;
	size_t ring_sz;
	void *ring_ptr;
	unsigned int ring_mask, ring_entries;
	unsigned int pad[2]; /* 2.15: sqes_sz, pad */
};

struct lu_cq {
	unsigned int *khead, *ktail, *kring_mask, *kring_entries, *kflags;
	unsigned int *koverflow;
	struct io_uring_cqe *cqes;
	size_t ring_sz;
	void *ring_ptr;
	unsigned int ring_mask, ring_entries;
	unsigned int pad[2];
};

struct io_uring {
	struct lu_sq sq;
	struct lu_cq cq;
	unsigned int flags;
	int ring_fd;
	unsigned int features;
	int enter_ring_fd;
	uint8_t int_flags;
	uint8_t pad[3];
	unsigned int pad2;
};

_Static_assert(offsetof(struct io_uring, cq) == 104, "liburing ABI");
_Static_assert(offsetof(struct io_uring, int_flags) == 208, "liburing ABI");
_Static_assert(sizeof(struct io_uring) == 216, "liburing ABI");

/* The names this file defines, as liburing.h declares them. */
EXPORT int io_uring_submit(struct io_uring *ring);
EXPORT int io_uring_submit_and_wait(struct io_uring *ring,
				    unsigned int wait_nr);
EXPORT int io_uring_submit_and_get_events(struct io_uring *ring);
EXPORT int io_uring_get_events(struct io_uring *ring);
EXPORT int __io_uring_sqring_wait(struct io_uring *ring);
EXPORT int __io_uring_get_cqe(struct io_uring *ring,
			      struct io_uring_cqe **cqe_ptr,
			      unsigned int submit, unsigned int wait_nr,
			      sigset_t *sigmask);
EXPORT unsigned int io_uring_peek_batch_cqe(struct io_uring *ring,
					    struct io_uring_cqe **cqes,
					    unsigned int count);
EXPORT int io_uring_wait_cqes(struct io_uring *ring,
			      struct io_uring_cqe **cqe_ptr,
			      unsigned int wait_nr,
			      struct __kernel_timespec *ts, sigset_t *sigmask);
EXPORT int io_uring_submit_and_wait_timeout(struct io_uring *ring,
					    struct io_uring_cqe **cqe_ptr,
					    unsigned int wait_nr,
					    struct __kernel_timespec *ts,
					    sigset_t *sigmask);
EXPORT int io_uring_wait_cqe_timeout(struct io_uring *ring,
				     struct io_uring_cqe **cqe_ptr,
				     struct __kernel_timespec *ts);
EXPORT int io_uring_enter(unsigned int fd, unsigned int to_submit,
			  unsigned int min_complete, unsigned int flags,
			  sigset_t *sig);
EXPORT int io_uring_enter2(unsigned int fd, unsigned int to_submit,
			   unsigned int min_complete, unsigned int flags,
			   void *arg, size_t sz);

#define LU_UDATA_TIMEOUT ((uint64_t)-1)
#define LU_SIGSZ	 8 /* _NSIG / 8 */

/* int_flags, by version. */
#define LU23_REG_RING  1
#define LU215_ENTER    (IORING_ENTER_REGISTERED_RING | IORING_ENTER_NO_IOWAIT)
#define LU215_CQ_ENTER 4

enum { LU_OTHER, LU_23, LU_215 };

typedef int (*lu_ring_fn)(struct io_uring *);
typedef int (*lu_ring_nr_fn)(struct io_uring *, unsigned int);
typedef int (*lu_get_fn)(struct io_uring *, struct io_uring_cqe **,
			 unsigned int, unsigned int, sigset_t *);
typedef unsigned int (*lu_batch_fn)(struct io_uring *, struct io_uring_cqe **,
				    unsigned int);
typedef int (*lu_waits_fn)(struct io_uring *, struct io_uring_cqe **,
			   unsigned int, struct __kernel_timespec *,
			   sigset_t *);
typedef int (*lu_wait1_fn)(struct io_uring *, struct io_uring_cqe **,
			   struct __kernel_timespec *);
typedef int (*lu_enter_fn)(unsigned int, unsigned int, unsigned int,
			   unsigned int, sigset_t *);
typedef int (*lu_enter2_fn)(unsigned int, unsigned int, unsigned int,
			    unsigned int, void *, size_t);

/* The library's own functions, and which library it is. */
static struct {
	int version;
	lu_ring_fn submit, submit_get_events, get_events, sqring_wait;
	lu_ring_nr_fn submit_and_wait;
	lu_get_fn get_cqe;
	lu_batch_fn peek_batch;
	lu_waits_fn wait_cqes, submit_and_wait_timeout;
	lu_wait1_fn wait_cqe_timeout;
	lu_enter_fn enter;
	lu_enter2_fn enter2;
} lu;
static pthread_once_t lu_once = PTHREAD_ONCE_INIT;

/* 2.3 or 2.15, from the object that defines io_uring_submit. */
static int lu_version(void *submit)
{
	int (*major)(void), (*minor)(void);
	Dl_info info;
	void *h;
	int v = LU_OTHER;

	if (!submit || !dladdr(submit, &info) || !info.dli_fname)
		return LU_OTHER;
	h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return LU_OTHER;
	major = (int (*)(void))dlsym(h, "io_uring_major_version");
	minor = (int (*)(void))dlsym(h, "io_uring_minor_version");
	if (dlsym(h, "io_uring_submit") == submit) {
		if (!major && !minor && dlsym(h, "io_uring_get_events"))
			v = LU_23;
		else if (major && minor && major() == 2 && minor() == 15)
			v = LU_215;
	}
	dlclose(h);
	return v;
}

#define LU_REAL(field, name) \
	(lu.field = (__typeof__(lu.field))dlsym(RTLD_NEXT, name))

static void lu_resolve(void)
{
	LU_REAL(submit, "io_uring_submit");
	LU_REAL(submit_get_events, "io_uring_submit_and_get_events");
	LU_REAL(get_events, "io_uring_get_events");
	LU_REAL(sqring_wait, "__io_uring_sqring_wait");
	LU_REAL(submit_and_wait, "io_uring_submit_and_wait");
	LU_REAL(get_cqe, "__io_uring_get_cqe");
	LU_REAL(peek_batch, "io_uring_peek_batch_cqe");
	LU_REAL(wait_cqes, "io_uring_wait_cqes");
	LU_REAL(submit_and_wait_timeout, "io_uring_submit_and_wait_timeout");
	LU_REAL(wait_cqe_timeout, "io_uring_wait_cqe_timeout");
	LU_REAL(enter, "io_uring_enter");
	LU_REAL(enter2, "io_uring_enter2");
	lu.version = lu_version((void *)lu.submit);
}

/*
 * The version whose semantics run here, or LU_OTHER: the library's. Both
 * halves are settled once (the library, and the engine's decision at the
 * process's first io_uring call), so the verdict is kept: one load.
 */
static int lu_verdict = -1;

static int lu_mine(void)
{
	int v = __atomic_load_n(&lu_verdict, __ATOMIC_ACQUIRE);

	if (v >= 0)
		return v;
	pthread_once(&lu_once, lu_resolve);
	v = lu.version != LU_OTHER && nw_preload_engine() ? lu.version
							  : LU_OTHER;
	__atomic_store_n(&lu_verdict, v, __ATOMIC_RELEASE);
	return v;
}

/* The library's inline io_uring_enter, on the engine. */
static int lu_sys_enter(unsigned int fd, unsigned int submit,
			unsigned int wait_nr, unsigned int flags, void *arg,
			size_t sz)
{
	int saved = errno;
	long r = nowait_hook_enter((int)fd, submit, wait_nr, flags, arg, sz);

	errno = saved;
	return (int)r;
}

static unsigned int lu_enter_flags(int v, const struct io_uring *ring)
{
	if (v == LU_23)
		return (ring->int_flags & LU23_REG_RING)
			       ? IORING_ENTER_REGISTERED_RING
			       : 0;
	return ring->int_flags & LU215_ENTER;
}

static unsigned int lu_load(const unsigned int *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static bool lu_cq_needs_flush(const struct io_uring *ring)
{
	return lu_load(ring->sq.kflags) &
	       (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN);
}

static bool lu_cq_needs_enter(int v, const struct io_uring *ring)
{
	bool polled = v == LU_23 ? (ring->flags & IORING_SETUP_IOPOLL) != 0
				 : (ring->int_flags & LU215_CQ_ENTER) != 0;

	return polled || lu_cq_needs_flush(ring);
}

/* The tail's store before the flags' load (TSan models no fences). */
static inline void lu_smp_mb(void)
{
#if defined(__SANITIZE_THREAD__)
	static int tsan_fence;

	__atomic_fetch_add(&tsan_fence, 0, __ATOMIC_SEQ_CST);
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* SQEs to hand over: with SQPOLL, only when the poller sleeps. */
static bool lu_sq_needs_enter(const struct io_uring *ring, unsigned int submit,
			      unsigned int *flags)
{
	if (!submit)
		return false;
	if (!(ring->flags & IORING_SETUP_SQPOLL))
		return true;
	lu_smp_mb();
	if (lu_load(ring->sq.kflags) & IORING_SQ_NEED_WAKEUP) {
		*flags |= IORING_ENTER_SQ_WAKEUP;
		return true;
	}
	return false;
}

/* Publish the SQ tail; the number of SQEs the engine has not consumed. */
static unsigned int lu_flush_sq(struct io_uring *ring)
{
	struct lu_sq *sq = &ring->sq;
	unsigned int tail = sq->sqe_tail;

	if (sq->sqe_head != tail) {
		sq->sqe_head = tail;
		if (ring->flags & IORING_SETUP_SQPOLL)
			__atomic_store_n(sq->ktail, tail, __ATOMIC_RELEASE);
		else
			__atomic_store_n(sq->ktail, tail, __ATOMIC_RELAXED);
	}
	return tail - lu_load(sq->khead);
}

static void lu_cq_advance(struct io_uring *ring, unsigned int nr)
{
	__atomic_store_n(ring->cq.khead, *ring->cq.khead + nr,
			 __ATOMIC_RELEASE);
}

/*
 * Consume cqe if the library hides it: a 2.15 padding entry, or the
 * timeout SQE's CQE where there is no EXT_ARG (its error into *err).
 */
static bool lu_skip_cqe(int v, struct io_uring *ring,
			const struct io_uring_cqe *cqe, int *err)
{
	unsigned int nr = 1;

	if (v == LU_215 && (cqe->flags & IORING_CQE_F_32))
		nr = 2;
	if (v == LU_215 && (cqe->flags & IORING_CQE_F_SKIP)) {
		lu_cq_advance(ring, nr);
		return !*err;
	}
	if ((ring->features & IORING_FEAT_EXT_ARG) ||
	    cqe->user_data != LU_UDATA_TIMEOUT)
		return false;
	if (cqe->res < 0)
		*err = cqe->res;
	lu_cq_advance(ring, nr);
	return !*err;
}

/* The header's __io_uring_peek_cqe. */
static int lu_peek_cqe(int v, struct io_uring *ring,
		       struct io_uring_cqe **cqe_ptr, unsigned int *avail)
{
	unsigned int shift = (ring->flags & IORING_SETUP_CQE32) ? 1 : 0;
	struct io_uring_cqe *cqe;
	unsigned int n;
	int err = 0;

	for (;;) {
		unsigned int tail =
			__atomic_load_n(ring->cq.ktail, __ATOMIC_ACQUIRE);
		unsigned int head = *ring->cq.khead;

		cqe = NULL;
		n = tail - head;
		if (!n)
			break;
		cqe = &ring->cq.cqes[(head & ring->cq.ring_mask) << shift];
		if (!lu_skip_cqe(v, ring, cqe, &err)) {
			if (err)
				cqe = NULL;
			break;
		}
	}
	*cqe_ptr = cqe;
	*avail = n;
	return err;
}

struct lu_get {
	unsigned int submit, wait_nr, get_flags;
	int sz;
	bool has_ts;
	void *arg;
};

/* Enter flags for one turn of lu_get_cqe; false: no enter needed. */
static bool lu_get_turn(int v, struct io_uring *ring, struct lu_get *d,
			const struct io_uring_cqe *cqe, unsigned int avail,
			bool looped, unsigned int *flags, int *err)
{
	bool need = false;

	*flags = lu_enter_flags(v, ring);
	if (!cqe && !d->wait_nr && !d->submit) {
		/* Nothing to submit or wait for: one enter at most. */
		if (looped || !lu_cq_needs_enter(v, ring)) {
			if (!*err)
				*err = -EAGAIN;
			return false;
		}
		need = true;
	}
	if (d->wait_nr > avail || need) {
		*flags |= IORING_ENTER_GETEVENTS | d->get_flags;
		need = true;
	}
	if (lu_sq_needs_enter(ring, d->submit, flags))
		need = true;
	return need;
}

/* liburing's _io_uring_get_cqe. */
static int lu_get_cqe(int v, struct io_uring *ring,
		      struct io_uring_cqe **cqe_ptr, struct lu_get *d)
{
	struct io_uring_cqe *cqe = NULL;
	bool looped = false;
	int err = 0;

	for (;;) {
		unsigned int flags, avail;
		int ret = lu_peek_cqe(v, ring, &cqe, &avail);

		if (ret) {
			if (!err)
				err = ret;
			break;
		}
		if (!lu_get_turn(v, ring, d, cqe, avail, looped, &flags, &err))
			break;
		if (looped && d->has_ts) {
			const struct io_uring_getevents_arg *arg = d->arg;

			if (!cqe && arg->ts && !err)
				err = -ETIME;
			break;
		}
		ret = lu_sys_enter((unsigned int)ring->enter_ring_fd, d->submit,
				   d->wait_nr, flags, d->arg, (size_t)d->sz);
		if (ret < 0) {
			if (!err)
				err = ret;
			break;
		}
		d->submit -= (unsigned int)ret;
		if (cqe)
			break;
		if (!looped) {
			looped = true;
			err = ret;
		}
	}
	*cqe_ptr = cqe;
	return err;
}

/* liburing's __io_uring_submit. */
static int lu_submit(int v, struct io_uring *ring, unsigned int submitted,
		     unsigned int wait_nr, bool getevents)
{
	bool cq_enter = getevents || wait_nr || lu_cq_needs_enter(v, ring);
	unsigned int flags = lu_enter_flags(v, ring);

	if (!lu_sq_needs_enter(ring, submitted, &flags) && !cq_enter)
		return (int)submitted;
	if (cq_enter)
		flags |= IORING_ENTER_GETEVENTS;
	return lu_sys_enter((unsigned int)ring->enter_ring_fd, submitted,
			    wait_nr, flags, NULL, LU_SIGSZ);
}

/* A 2.15 ring this file does not model (SQ_REWIND): the library's. */
static int lu_mine_ring(const struct io_uring *ring)
{
	int v = lu_mine();

	if (v == LU_215 && (ring->flags & IORING_SETUP_SQ_REWIND))
		return LU_OTHER;
	return v;
}

EXPORT int io_uring_submit(struct io_uring *ring)
{
	int v = lu_mine_ring(ring);

	if (v == LU_OTHER)
		return lu.submit ? lu.submit(ring) : -ENOSYS;
	return lu_submit(v, ring, lu_flush_sq(ring), 0, false);
}

EXPORT int io_uring_submit_and_wait(struct io_uring *ring, unsigned int wait_nr)
{
	int v = lu_mine_ring(ring);

	if (v == LU_OTHER)
		return lu.submit_and_wait ? lu.submit_and_wait(ring, wait_nr)
					  : -ENOSYS;
	return lu_submit(v, ring, lu_flush_sq(ring), wait_nr, false);
}

EXPORT int io_uring_submit_and_get_events(struct io_uring *ring)
{
	int v = lu_mine_ring(ring);

	if (v == LU_OTHER)
		return lu.submit_get_events ? lu.submit_get_events(ring)
					    : -ENOSYS;
	return lu_submit(v, ring, lu_flush_sq(ring), 0, true);
}

EXPORT int io_uring_get_events(struct io_uring *ring)
{
	int v = lu_mine_ring(ring);

	if (v == LU_OTHER)
		return lu.get_events ? lu.get_events(ring) : -ENOSYS;
	return lu_sys_enter((unsigned int)ring->enter_ring_fd, 0, 0,
			    IORING_ENTER_GETEVENTS | lu_enter_flags(v, ring),
			    NULL, LU_SIGSZ);
}

EXPORT int __io_uring_sqring_wait(struct io_uring *ring)
{
	int v = lu_mine_ring(ring);

	if (v == LU_OTHER)
		return lu.sqring_wait ? lu.sqring_wait(ring) : -ENOSYS;
	return lu_sys_enter((unsigned int)ring->enter_ring_fd, 0, 0,
			    IORING_ENTER_SQ_WAIT | lu_enter_flags(v, ring),
			    NULL, LU_SIGSZ);
}

EXPORT int __io_uring_get_cqe(struct io_uring *ring,
			      struct io_uring_cqe **cqe_ptr,
			      unsigned int submit, unsigned int wait_nr,
			      sigset_t *sigmask)
{
	struct lu_get d = {submit, wait_nr, 0, LU_SIGSZ, false, sigmask};
	int v = lu_mine_ring(ring);

	if (v == LU_OTHER)
		return lu.get_cqe ? lu.get_cqe(ring, cqe_ptr, submit, wait_nr,
					       sigmask)
				  : -ENOSYS;
	return lu_get_cqe(v, ring, cqe_ptr, &d);
}

/* The CQEs ready at the head, up to count (not CQE_MIXED). */
static unsigned int lu_batch(struct io_uring *ring, struct io_uring_cqe **cqes,
			     unsigned int count)
{
	unsigned int shift = (ring->flags & IORING_SETUP_CQE32) ? 1 : 0;
	unsigned int head = *ring->cq.khead;
	unsigned int ready =
		__atomic_load_n(ring->cq.ktail, __ATOMIC_ACQUIRE) - head;

	if (count > ready)
		count = ready;
	for (unsigned int i = 0; i < count; i++, head++)
		cqes[i] = &ring->cq.cqes[(head & ring->cq.ring_mask) << shift];
	return count;
}

EXPORT unsigned int io_uring_peek_batch_cqe(struct io_uring *ring,
					    struct io_uring_cqe **cqes,
					    unsigned int count)
{
	int v = lu_mine_ring(ring);
	unsigned int n;

	if (v == LU_215 && (ring->flags & IORING_SETUP_CQE_MIXED))
		v = LU_OTHER;
	if (v == LU_OTHER)
		return lu.peek_batch ? lu.peek_batch(ring, cqes, count) : 0;
	n = lu_batch(ring, cqes, count);
	if (n || !lu_cq_needs_flush(ring))
		return n;
	/* Overflowed CQEs or task work: one enter to flush them. */
	io_uring_get_events(ring);
	return lu_batch(ring, cqes, count);
}

/* A wait with a timeout as one enter: IORING_ENTER_EXT_ARG. */
static int lu_wait_ext(int v, struct io_uring *ring,
		       struct io_uring_cqe **cqe_ptr, unsigned int submit,
		       unsigned int wait_nr, struct __kernel_timespec *ts,
		       sigset_t *sigmask)
{
	struct io_uring_getevents_arg arg = {
		.sigmask = (uint64_t)(uintptr_t)sigmask,
		.sigmask_sz = LU_SIGSZ,
		.ts = (uint64_t)(uintptr_t)ts,
	};
	struct lu_get d = {submit,	wait_nr, IORING_ENTER_EXT_ARG,
			   sizeof(arg), true,	 &arg};

	return lu_get_cqe(v, ring, cqe_ptr, &d);
}

EXPORT int io_uring_wait_cqes(struct io_uring *ring,
			      struct io_uring_cqe **cqe_ptr,
			      unsigned int wait_nr,
			      struct __kernel_timespec *ts, sigset_t *sigmask)
{
	struct lu_get d = {0, wait_nr, 0, LU_SIGSZ, false, sigmask};
	int v = lu_mine_ring(ring);

	/* Without EXT_ARG the library queues a timeout SQE: its own. */
	if (ts && !(ring->features & IORING_FEAT_EXT_ARG))
		v = LU_OTHER;
	if (v == LU_OTHER)
		return lu.wait_cqes ? lu.wait_cqes(ring, cqe_ptr, wait_nr, ts,
						   sigmask)
				    : -ENOSYS;
	if (ts)
		return lu_wait_ext(v, ring, cqe_ptr, 0, wait_nr, ts, sigmask);
	return lu_get_cqe(v, ring, cqe_ptr, &d);
}

EXPORT int io_uring_submit_and_wait_timeout(struct io_uring *ring,
					    struct io_uring_cqe **cqe_ptr,
					    unsigned int wait_nr,
					    struct __kernel_timespec *ts,
					    sigset_t *sigmask)
{
	struct lu_get d = {0, wait_nr, 0, LU_SIGSZ, false, sigmask};
	int v = lu_mine_ring(ring);

	if (ts && !(ring->features & IORING_FEAT_EXT_ARG))
		v = LU_OTHER;
	if (v == LU_OTHER)
		return lu.submit_and_wait_timeout
			       ? lu.submit_and_wait_timeout(
					 ring, cqe_ptr, wait_nr, ts, sigmask)
			       : -ENOSYS;
	if (ts)
		return lu_wait_ext(v, ring, cqe_ptr, lu_flush_sq(ring), wait_nr,
				   ts, sigmask);
	d.submit = lu_flush_sq(ring);
	return lu_get_cqe(v, ring, cqe_ptr, &d);
}

EXPORT int io_uring_wait_cqe_timeout(struct io_uring *ring,
				     struct io_uring_cqe **cqe_ptr,
				     struct __kernel_timespec *ts)
{
	if (lu_mine_ring(ring) == LU_OTHER)
		return lu.wait_cqe_timeout
			       ? lu.wait_cqe_timeout(ring, cqe_ptr, ts)
			       : -ENOSYS;
	return io_uring_wait_cqes(ring, cqe_ptr, 1, ts, NULL);
}

/* The exported wrappers of the system call (2.3 on). */
EXPORT int io_uring_enter(unsigned int fd, unsigned int to_submit,
			  unsigned int min_complete, unsigned int flags,
			  sigset_t *sig)
{
	if (lu_mine() == LU_OTHER)
		return lu.enter ? lu.enter(fd, to_submit, min_complete, flags,
					   sig)
				: -ENOSYS;
	return lu_sys_enter(fd, to_submit, min_complete, flags, sig, LU_SIGSZ);
}

EXPORT int io_uring_enter2(unsigned int fd, unsigned int to_submit,
			   unsigned int min_complete, unsigned int flags,
			   void *arg, size_t sz)
{
	if (lu_mine() == LU_OTHER)
		return lu.enter2 ? lu.enter2(fd, to_submit, min_complete, flags,
					     arg, sz)
				 : -ENOSYS;
	return lu_sys_enter(fd, to_submit, min_complete, flags, arg, sz);
}
