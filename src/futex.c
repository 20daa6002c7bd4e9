/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_FUTEX_WAIT, FUTEX_WAKE and FUTEX_WAITV.
 *
 * A wait checks the futex words on the submitter (-EINVAL misaligned,
 * -EFAULT unreadable, -EAGAIN a value differs) and joins the process's
 * list of waits, in submission order, under fx_lock; then an unbounded
 * worker sleeps in futex_waitv(2) on the words and on a word of its own,
 * the kick. Whoever ends the wait claims it under fx_lock (state DONE,
 * the result set), then wakes the kick: a FUTEX_WAKE through any ring of
 * the process (FIFO, by address, private flag and mask, as the kernel's
 * futex_wake), a cancel (-ECANCELED), or the worker itself when the
 * kernel woke one of the words (a wake from any thread or process). The
 * worker completes the request. The submitter waits until the worker
 * is queued in the kernel (fx_queued: a FUTEX_REQUEUE that moves
 * nothing counts it), so that a wake of any thread after the submit
 * finds it, as it finds the kernel's queued wait.
 * A FUTEX_WAKE wakes the engine's waits first, then asks the kernel for
 * the rest (other threads' waits), after the claimed workers have left
 * the kernel so that none of them is counted twice.
 * Limits: a FUTEX_WAIT with a mask other than FUTEX_BITSET_MATCH_ANY, and
 * the 128th futex of a full FUTEX_WAITV, are woken only through the
 * engine's FUTEX_WAKE (futex_waitv has no mask, and has room for 128);
 * a word changed by the program before the worker sleeps (the submitter
 * waits for that, bounded) ends the wait as a wake-up.
 * Semantics: kernel io_uring/futex.c, kernel/futex/ (6.18).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include "futex.h"
#include "cancel.h"
#include "complete.h"
#include "util.h"

#define FX_SIZE_MASK 0x03U
#define FX_SIZE_U32  0x02U
#define FX_NUMA	     0x04U
#define FX_MPOL	     0x08U
#define FX_PRIVATE   128U
#define FX_VALID     (FX_SIZE_MASK | FX_NUMA | FX_MPOL | FX_PRIVATE)
#define FX_VEC_MAX   128U /* FUTEX_WAITV_MAX */
#define FX_ANY	     0xffffffffU
#define FX_YIELDS    200 /* yields while waiting for a worker, then naps */
#define FX_WAIT_NS   2000000000LL /* of naps at most (a starved worker) */

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

enum { FX_IDLE, FX_WAITING, FX_DONE };

/* The SQE's fields (FUTEX_WAIT, FUTEX_WAKE). */
struct nw_fx {
	uint64_t uaddr;
	uint64_t val;
	uint64_t mask;
	uint32_t flags;
};
_Static_assert(sizeof(struct nw_fx) <= NW_REQ_CMD_SIZE, "nw_fx too big");

/* A wait (req->async): one entry for FUTEX_WAIT, nr for FUTEX_WAITV. */
struct fx_wait {
	struct nw_list node; /* on fx_waits while WAITING */
	struct nw_req *req;
	unsigned int state; /* written under fx_lock */
	int res;
	uint32_t kick;	     /* futex word: 1 once claimed */
	int in_kernel;	     /* the worker is in futex_waitv (atomic) */
	int entered;	     /* it got there once (atomic) */
	uint32_t mask;	     /* FX_ANY for FUTEX_WAITV */
	unsigned int nr;     /* entries */
	unsigned int nsleep; /* of them in the worker's futex_waitv */
	bool vec;
	struct futex_waitv ent[];
};

static pthread_mutex_t fx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nw_list fx_waits = {&fx_waits, &fx_waits};
static pthread_once_t fx_once = PTHREAD_ONCE_INIT;
static int no_waitv; /* futex_waitv(2) is missing: sleep on the kick */

static int fx_cancel(struct nw_ring *ring,
		     bool (*match)(struct nw_req *req, void *arg), void *arg,
		     bool all);
static bool fx_owns(struct nw_req *req);

static const struct nw_cancel_list fx_cancel_list = {
	.cancel = fx_cancel,
	.owns = fx_owns,
};

static void fx_prepare(void)
{
	pthread_mutex_lock(&fx_lock);
}

static void fx_parent(void)
{
	pthread_mutex_unlock(&fx_lock);
}

/* The child has none of the workers: the parent's waits are not its own. */
static void fx_child(void)
{
	pthread_mutex_init(&fx_lock, NULL);
	nw_list_init(&fx_waits);
}

static void fx_init(void)
{
	pthread_atfork(fx_prepare, fx_parent, fx_child);
	nw_cancel_list_add(&fx_cancel_list);
}

/* futex_flags_valid and futex_validate_input for the 32-bit size. */
static int fx_flags_check(uint32_t flags)
{
	if (flags & ~FX_VALID)
		return -EINVAL;
	if ((flags & FX_SIZE_MASK) != FX_SIZE_U32)
		return -EINVAL;
	return 0;
}

int nw_futex_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_fx *fx = nw_req_cmd(req, struct nw_fx);

	pthread_once(&fx_once, fx_init);
	if (READ_ONCE(sqe->len) || READ_ONCE(sqe->rw_flags) ||
	    READ_ONCE(sqe->buf_index) || READ_ONCE(sqe->file_index))
		return -EINVAL;
	fx->uaddr = READ_ONCE(sqe->addr);
	fx->val = READ_ONCE(sqe->addr2);
	fx->mask = READ_ONCE(sqe->addr3);
	fx->flags = (uint32_t)READ_ONCE(sqe->fd);
	if (fx_flags_check(fx->flags))
		return -EINVAL;
	if (fx->val > 0xffffffffULL || fx->mask > 0xffffffffULL)
		return -EINVAL;
	return 0;
}

static struct fx_wait *fx_alloc(struct nw_req *req, unsigned int nr)
{
	struct fx_wait *w = calloc(1, sizeof(*w) + nr * sizeof(w->ent[0]));

	if (!w)
		return NULL;
	w->req = req;
	w->nr = nr;
	nw_list_init(&w->node);
	req->async = w;
	return w;
}

static int fx_parse_vec(struct fx_wait *w)
{
	for (unsigned int i = 0; i < w->nr; i++) {
		const struct futex_waitv *e = &w->ent[i];

		if (fx_flags_check(e->flags) || e->__reserved)
			return -EINVAL;
		if (e->val > 0xffffffffULL)
			return -EINVAL;
	}
	return 0;
}

int nw_futexv_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	const void *uv = (const void *)(uintptr_t)READ_ONCE(sqe->addr);
	unsigned int nr = READ_ONCE(sqe->len);
	struct fx_wait *w;

	pthread_once(&fx_once, fx_init);
	if (READ_ONCE(sqe->fd) || READ_ONCE(sqe->buf_index) ||
	    READ_ONCE(sqe->file_index) || READ_ONCE(sqe->addr2) ||
	    READ_ONCE(sqe->rw_flags) || READ_ONCE(sqe->addr3))
		return -EINVAL;
	if (!nr || nr > FX_VEC_MAX)
		return -EINVAL;
	w = fx_alloc(req, nr);
	if (!w)
		return -ENOMEM;
	w->vec = true;
	w->mask = FX_ANY;
	w->nsleep = nr < FX_VEC_MAX ? nr : FX_VEC_MAX - 1;
	if (nw_copy_from_user(w->ent, uv, nr * sizeof(w->ent[0])))
		return -EFAULT;
	return fx_parse_vec(w);
}

void nw_futex_cleanup(struct nw_req *req)
{
	struct fx_wait *w = req->async;

	if (!w)
		return;
	pthread_mutex_lock(&fx_lock);
	if (w->state == FX_WAITING)
		nw_list_del(&w->node);
	pthread_mutex_unlock(&fx_lock);
	free(w);
	req->async = NULL;
}

static bool fx_owns(struct nw_req *req)
{
	struct fx_wait *w;

	if (req->opcode != NW_OP_FUTEX_WAIT && req->opcode != NW_OP_FUTEX_WAITV)
		return false;
	w = req->async;
	return w && __atomic_load_n(&w->state, __ATOMIC_ACQUIRE) == FX_WAITING;
}

/* Under fx_lock: end the wait with res and wake its worker. */
static void fx_claim(struct fx_wait *w, int res)
{
	w->res = res;
	nw_list_del(&w->node);
	__atomic_store_n(&w->state, FX_DONE, __ATOMIC_RELEASE);
	__atomic_store_n(&w->kick, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &w->kick, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* The word's value now, or -EFAULT. */
static int fx_read(uint64_t uaddr, uint32_t *val)
{
	return nw_copy_from_user(val, (const void *)(uintptr_t)uaddr,
				 sizeof(*val));
}

/*
 * futex_wait_setup / futex_wait_multiple_setup: every address aligned,
 * then every value as expected; then the wait joins the list. Under
 * fx_lock, so that an engine wake after the check finds it.
 */
static int fx_arm(struct fx_wait *w)
{
	int ret = 0;

	for (unsigned int i = 0; i < w->nr; i++)
		if (w->ent[i].uaddr % sizeof(uint32_t))
			return -EINVAL;
	pthread_mutex_lock(&fx_lock);
	for (unsigned int i = 0; i < w->nr && !ret; i++) {
		uint32_t v;

		if (fx_read(w->ent[i].uaddr, &v))
			ret = -EFAULT;
		else if (v != w->ent[i].val)
			ret = -EAGAIN;
	}
	if (!ret) {
		w->kick = 0;
		__atomic_store_n(&w->state, FX_WAITING, __ATOMIC_RELEASE);
		nw_list_add_tail(&w->node, &fx_waits);
	}
	pthread_mutex_unlock(&fx_lock);
	return ret;
}

/* One sleep of the worker: the index woken, or -errno. */
static int fx_sleep(struct fx_wait *w)
{
	struct futex_waitv v[FX_VEC_MAX];
	unsigned int n =
		__atomic_load_n(&no_waitv, __ATOMIC_RELAXED) ? 0 : w->nsleep;
	long r;
	int err;

	memcpy(v, w->ent, n * sizeof(v[0]));
	memset(&v[n], 0, sizeof(v[n]));
	v[n].uaddr = (uintptr_t)&w->kick;
	v[n].flags = FX_SIZE_U32 | FX_PRIVATE;
	__atomic_store_n(&w->in_kernel, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&w->entered, 1, __ATOMIC_RELEASE);
	if (n || !__atomic_load_n(&no_waitv, __ATOMIC_RELAXED))
		r = syscall(SYS_futex_waitv, v, n + 1, 0, NULL, 0);
	else
		r = syscall(SYS_futex, &w->kick, FUTEX_WAIT_PRIVATE, 0, NULL,
			    NULL, 0);
	err = errno;
	__atomic_store_n(&w->in_kernel, 0, __ATOMIC_SEQ_CST);
	if (r < 0 && err == ENOSYS && !no_waitv) {
		__atomic_store_n(&no_waitv, 1, __ATOMIC_RELAXED);
		return -EINTR; /* sleep again, on the kick alone */
	}
	return r < 0 ? -err : (int)r;
}

/*
 * Under fx_lock, the wait still WAITING after a sleep that returned r: a
 * word was woken (index r), or changed before the worker slept (-EAGAIN:
 * the wake-up it was changed for may have come already), or went away.
 */
static void fx_woken(struct fx_wait *w, int r)
{
	if (r >= 0 && (unsigned int)r < w->nsleep) {
		fx_claim(w, w->vec ? r : 0);
		return;
	}
	if (r == -EAGAIN) {
		for (unsigned int i = 0; i < w->nsleep; i++) {
			uint32_t v;

			if (fx_read(w->ent[i].uaddr, &v) ||
			    v != w->ent[i].val) {
				fx_claim(w, w->vec ? (int)i : 0);
				return;
			}
		}
		return;
	}
	if (r < 0 && r != -EINTR && r != -ETIMEDOUT)
		fx_claim(w, r);
}

static void fx_wait_loop(struct fx_wait *w)
{
	for (;;) {
		int r = fx_sleep(w);
		bool done;

		pthread_mutex_lock(&fx_lock);
		if (w->state == FX_WAITING)
			fx_woken(w, r);
		done = w->state == FX_DONE;
		pthread_mutex_unlock(&fx_lock);
		if (done)
			return;
	}
}

static void fx_work(struct nw_work *work)
{
	struct nw_req *req = container_of(work, struct nw_req, work);
	struct fx_wait *w = req->async;

	fx_wait_loop(w);
	nw_iowq_done(work);
	req->res = w->res;
	if (req->res < 0)
		nw_req_set_fail(req, req->res);
	nw_req_complete_async(req);
}

/*
 * Is the worker queued in the kernel on its words yet? One system call,
 * where reading its /proc state took three and a path walk: a
 * FUTEX_REQUEUE of the kick word onto itself, waking none and moving at
 * most one, returns how many wait there and changes nothing (the waiter
 * keeps its key and bucket). Only the worker waits on its kick, the
 * last word of its futex_waitv, which queues its words in order before
 * it sleeps (and takes them all off again if one differs): queued on
 * the kick is queued on them all, and a wake-up of any word from then
 * on finds it. An error (cannot tell) counts as queued.
 */
static bool fx_queued(struct fx_wait *w)
{
	return syscall(SYS_futex, &w->kick, FUTEX_REQUEUE_PRIVATE, 0, 1L,
		       &w->kick, 0) != 0;
}

/*
 * Wait until ready(w): a few yields (the worker is usually there at
 * once), then naps of 20 us, for FX_WAIT_NS of wall-clock time at most.
 * A bound of time, not of yields: on a loaded machine a woken or new
 * worker may not run for milliseconds, and 20,000 yields that each
 * return at once were sometimes shorter than that (the wake counted a
 * claimed worker still queued in the kernel, futex-op's "2 vs 1").
 */
static bool fx_until(bool (*ready)(struct fx_wait *w), struct fx_wait *w)
{
	struct timespec nap = {0, 20000}, now;
	long long end = 0;

	for (unsigned int i = 0;; i++) {
		if (ready(w))
			return true;
		if (i < FX_YIELDS) {
			sched_yield();
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!end)
			end = nw_ts_ns(&now) + FX_WAIT_NS;
		else if (nw_ts_ns(&now) > end)
			return false;
		nanosleep(&nap, NULL);
	}
}

/* The worker sleeps in the kernel on its words, or has left already. */
static bool fx_asleep(struct fx_wait *w)
{
	return __atomic_load_n(&w->entered, __ATOMIC_ACQUIRE) &&
	       (!__atomic_load_n(&w->in_kernel, __ATOMIC_ACQUIRE) ||
		fx_queued(w));
}

/*
 * Wait, bounded, until the worker sleeps in the kernel: a wake-up from
 * any thread after the submit then finds it. The request cannot complete
 * meanwhile: its completion waits for the submit side, which this is.
 */
static void fx_handshake(struct fx_wait *w)
{
	fx_until(fx_asleep, w);
}

static int fx_start(struct nw_req *req, struct fx_wait *w)
{
	req->work.fn = fx_work;
	req->work.wq_poll = 0;
	if (nw_iowq_enqueue(&req->work, NW_WQ_UNBOUND)) {
		pthread_mutex_lock(&fx_lock);
		if (w->state == FX_WAITING) {
			nw_list_del(&w->node);
			__atomic_store_n(&w->state, FX_IDLE, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&fx_lock);
		return -EAGAIN;
	}
	fx_handshake(w);
	return NW_QUEUED;
}

/*
 * FUTEX_WAIT and FUTEX_WAITV. On the submit side the worker sleeps
 * (NW_QUEUED); in a worker (IOSQE_ASYNC) the wait sleeps right there.
 */
int nw_futex_wait_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct fx_wait *w = req->async;
	int ret;

	if (!w) {
		struct nw_fx *fx = nw_req_cmd(req, struct nw_fx);

		if (!fx->mask)
			return -EINVAL;
		w = fx_alloc(req, 1);
		if (!w)
			return -ENOMEM;
		w->ent[0].uaddr = fx->uaddr;
		w->ent[0].val = fx->val;
		w->ent[0].flags = fx->flags;
		w->mask = (uint32_t)fx->mask;
		w->nsleep = w->mask == FX_ANY ? 1 : 0;
	}
	ret = fx_arm(w);
	if (ret)
		return ret;
	if (issue_flags & NW_ISSUE_F_NONBLOCK)
		return fx_start(req, w);
	fx_wait_loop(w);
	if (w->res < 0)
		return w->res;
	req->res = w->res;
	return NW_COMPLETE;
}

/* The entry of w that a wake of uaddr reaches, or -1. */
static int fx_match(const struct fx_wait *w, uint64_t uaddr, bool priv,
		    uint32_t mask)
{
	if (!(w->mask & mask))
		return -1;
	for (unsigned int i = 0; i < w->nr; i++)
		if (w->ent[i].uaddr == uaddr &&
		    !!(w->ent[i].flags & FX_PRIVATE) == priv)
			return (int)i;
	return -1;
}

static bool fx_out(struct fx_wait *w)
{
	return !__atomic_load_n(&w->in_kernel, __ATOMIC_ACQUIRE);
}

/*
 * A claimed worker out of the kernel's queue of the word (bounded): the
 * kick's wake-up takes only the kick's entry off, its other words' stay
 * queued until it runs, and a wake of the word would count it again.
 */
static void fx_drain(struct fx_wait *w)
{
	fx_until(fx_out, w);
}

/*
 * The engine's waits on the word, oldest first: how many were woken. A
 * wait of another ring that the program let go of is not woken but
 * cancelled, as the kernel's ring exit would have: the engine notices a
 * dropped ring only when something of it becomes ready.
 */
static int fx_wake_engine(struct nw_ring *ring, uint64_t uaddr, bool priv,
			  uint32_t mask, int nr)
{
	struct nw_list *pos, *tmp;
	int n = 0;

	pthread_mutex_lock(&fx_lock);
	nw_list_for_each_safe(pos, tmp, &fx_waits) {
		struct fx_wait *w = nw_list_entry(pos, struct fx_wait, node);
		int i = fx_match(w, uaddr, priv, mask);

		if (i < 0)
			continue;
		if (w->req->ring != ring && !nw_ring_referenced(w->req->ring)) {
			fx_claim(w, -ECANCELED);
			continue;
		}
		fx_claim(w, w->vec ? i : 0);
		if (++n >= nr)
			break;
		fx_drain(w);
	}
	pthread_mutex_unlock(&fx_lock);
	return n;
}

/*
 * FUTEX_WAKE (futex_wake with FLAGS_STRICT): -EINVAL for a zero mask or
 * a misaligned word, -EFAULT for a shared one not mapped; nr 0 wakes
 * none; a count above INT_MAX is negative there and wakes one.
 */
int nw_futex_wake_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_fx *fx = nw_req_cmd(req, struct nw_fx);
	bool priv = fx->flags & FX_PRIVATE;
	int nr = (int)(uint32_t)fx->val, n;
	uint32_t v;

	(void)issue_flags;
	if (!fx->mask || fx->uaddr % sizeof(uint32_t))
		return -EINVAL;
	if (!priv && fx_read(fx->uaddr, &v))
		return -EFAULT;
	req->res = 0;
	if (!nr)
		return NW_COMPLETE;
	if (nr < 0)
		nr = 1;
	n = fx_wake_engine(req->ring, fx->uaddr, priv, (uint32_t)fx->mask, nr);
	if (n < nr) {
		long r = syscall(SYS_futex, (void *)(uintptr_t)fx->uaddr,
				 FUTEX_WAKE_BITSET |
					 (priv ? FUTEX_PRIVATE_FLAG : 0),
				 nr - n, NULL, NULL, (uint32_t)fx->mask);

		if (r > 0)
			n += (int)r;
		else if (r < 0 && !n)
			return -errno;
	}
	req->res = n;
	return NW_COMPLETE;
}

static int fx_cancel(struct nw_ring *ring,
		     bool (*match)(struct nw_req *req, void *arg), void *arg,
		     bool all)
{
	struct nw_list *pos, *tmp;
	int n = 0;

	pthread_mutex_lock(&fx_lock);
	nw_list_for_each_safe(pos, tmp, &fx_waits) {
		struct fx_wait *w = nw_list_entry(pos, struct fx_wait, node);

		if (w->req->ring != ring || !match(w->req, arg))
			continue;
		fx_claim(w, -ECANCELED);
		n++;
		if (!all)
			break;
	}
	pthread_mutex_unlock(&fx_lock);
	return n;
}
