/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_WAITID: waitid(2) as a request. The submitter tries it with
 * WNOHANG: bad input fails as the system call does (-EINVAL, -ECHILD,
 * -EBADF), a child already waitable is reaped at once. Otherwise the wait
 * joins the process's list of waits (wid_lock) and an unbounded worker
 * sleeps in waitid(WNOWAIT), which reaps nothing, then claims the wait
 * and reaps with WNOHANG (another reaper may have been first: it sleeps
 * again). A cancel claims a wait still sleeping (-ECANCELED) and
 * interrupts its worker with the pool's cancel signal (iowq.c); without
 * that signal the worker ends at the child's next change. At completion
 * the kernel's six fields of the siginfo are written to the user's
 * pointer (-EFAULT if it is bad: the child is reaped all the same).
 * Semantics: kernel io_uring/waitid.c, kernel/exit.c (6.18).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "waitid.h"
#include "cancel.h"
#include "complete.h"
#include "util.h"

enum { WID_IDLE, WID_WAITING, WID_BUSY, WID_DONE };

struct nw_wid {
	int which;
	int upid;
	int options;
	void *infop;
};
_Static_assert(sizeof(struct nw_wid) <= NW_REQ_CMD_SIZE, "nw_wid too big");

/* A wait that sleeps (req->async). */
struct wid_wait {
	struct nw_list node; /* on wid_waits while WAITING */
	struct nw_req *req;
	unsigned int state; /* written under wid_lock */
	int res;
};

static pthread_mutex_t wid_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nw_list wid_waits = {&wid_waits, &wid_waits};
static pthread_once_t wid_once = PTHREAD_ONCE_INIT;

static int wid_cancel(struct nw_ring *ring,
		      bool (*match)(struct nw_req *req, void *arg), void *arg,
		      bool all);
static bool wid_owns(struct nw_req *req);

static const struct nw_cancel_list wid_cancel_list = {
	.cancel = wid_cancel,
	.owns = wid_owns,
};

static void wid_prepare(void)
{
	pthread_mutex_lock(&wid_lock);
}

static void wid_parent(void)
{
	pthread_mutex_unlock(&wid_lock);
}

static void wid_child(void)
{
	pthread_mutex_init(&wid_lock, NULL);
	nw_list_init(&wid_waits);
}

static void wid_init(void)
{
	pthread_atfork(wid_prepare, wid_parent, wid_child);
	nw_cancel_list_add(&wid_cancel_list);
}

int nw_waitid_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_wid *wd = nw_req_cmd(req, struct nw_wid);

	pthread_once(&wid_once, wid_init);
	if (READ_ONCE(sqe->addr) || READ_ONCE(sqe->buf_index) ||
	    READ_ONCE(sqe->addr3) || READ_ONCE(sqe->rw_flags))
		return -EINVAL;
	wd->which = (int)READ_ONCE(sqe->len);
	wd->upid = READ_ONCE(sqe->fd);
	wd->options = (int)READ_ONCE(sqe->file_index);
	wd->infop = (void *)(uintptr_t)READ_ONCE(sqe->addr2);
	return 0;
}

void nw_waitid_cleanup(struct nw_req *req)
{
	struct wid_wait *w = req->async;

	if (!w)
		return;
	pthread_mutex_lock(&wid_lock);
	if (w->state == WID_WAITING)
		nw_list_del(&w->node);
	pthread_mutex_unlock(&wid_lock);
	free(w);
	req->async = NULL;
}

static bool wid_owns(struct nw_req *req)
{
	struct wid_wait *w;

	if (req->opcode != NW_OP_WAITID)
		return false;
	w = req->async;
	return w && __atomic_load_n(&w->state, __ATOMIC_ACQUIRE) == WID_WAITING;
}

static int sys_waitid(const struct nw_wid *wd, siginfo_t *si, int options)
{
	memset(si, 0, sizeof(*si));
	if (syscall(SYS_waitid, wd->which, wd->upid, si, options, NULL) < 0)
		return -errno;
	return 0;
}

/*
 * io_waitid_copy_si: si_signo, si_errno, si_code, si_pid, si_uid and
 * si_status, and nothing else of the user's siginfo.
 */
static int wid_finish(const struct nw_wid *wd, const siginfo_t *si)
{
	const char *p = (const char *)si;
	char *u = wd->infop;
	size_t pid_off = offsetof(siginfo_t, si_pid);
	size_t end = offsetof(siginfo_t, si_status) + sizeof(si->si_status);

	if (!u)
		return 0;
	if (nw_copy_to_user(u, p, offsetof(siginfo_t, si_code) + sizeof(int)) ||
	    nw_copy_to_user(u + pid_off, p + pid_off, end - pid_off))
		return -EFAULT;
	return 0;
}

/* Under wid_lock: the wait is over with res. */
static void wid_claim(struct wid_wait *w, int res)
{
	w->res = res;
	if (w->state == WID_WAITING)
		nw_list_del(&w->node);
	__atomic_store_n(&w->state, WID_DONE, __ATOMIC_RELEASE);
}

static void wid_set(struct wid_wait *w, unsigned int state)
{
	pthread_mutex_lock(&wid_lock);
	if (w->state != WID_DONE) {
		if (state == WID_WAITING)
			nw_list_add_tail(&w->node, &wid_waits);
		else if (w->state == WID_WAITING)
			nw_list_del(&w->node);
		__atomic_store_n(&w->state, state, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&wid_lock);
}

/*
 * After waitid(WNOWAIT) said a child is waitable (or failed: r): reap
 * it, unless a cancel came first. False: sleep again.
 */
static bool wid_reap(struct nw_req *req, struct wid_wait *w, int r)
{
	const struct nw_wid *wd = nw_req_cmd(req, struct nw_wid);
	siginfo_t si;
	bool done = true;

	pthread_mutex_lock(&wid_lock);
	if (w->state == WID_DONE || r == -EINTR) {
		done = w->state == WID_DONE;
		pthread_mutex_unlock(&wid_lock);
		return done;
	}
	if (r < 0) {
		wid_claim(w, r);
		pthread_mutex_unlock(&wid_lock);
		return true;
	}
	nw_list_del(&w->node);
	__atomic_store_n(&w->state, WID_BUSY, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&wid_lock);
	r = sys_waitid(wd, &si, wd->options | WNOHANG);
	if (!r && !si.si_pid) {
		wid_set(w, WID_WAITING); /* another reaper was first */
		return false;
	}
	if (!r)
		r = wid_finish(wd, &si);
	pthread_mutex_lock(&wid_lock);
	wid_claim(w, r);
	pthread_mutex_unlock(&wid_lock);
	return done;
}

static void wid_sleep_loop(struct nw_req *req, struct wid_wait *w)
{
	const struct nw_wid *wd = nw_req_cmd(req, struct nw_wid);

	for (;;) {
		siginfo_t si;
		int r = -EINTR;

		if (__atomic_load_n(&w->state, __ATOMIC_ACQUIRE) != WID_DONE &&
		    !nw_iowq_block_begin(&req->work))
			r = sys_waitid(wd, &si, wd->options | WNOWAIT);
		nw_iowq_block_end(&req->work);
		if (wid_reap(req, w, r))
			return;
	}
}

static void wid_work(struct nw_work *work)
{
	struct nw_req *req = container_of(work, struct nw_req, work);
	struct wid_wait *w = req->async;

	wid_sleep_loop(req, w);
	nw_iowq_done(work);
	req->res = w->res;
	if (req->res < 0)
		nw_req_set_fail(req, req->res);
	nw_req_complete_async(req);
}

/* The try on the submitter: 1 when the wait must sleep, else done. */
static int wid_try(struct nw_req *req)
{
	const struct nw_wid *wd = nw_req_cmd(req, struct nw_wid);
	siginfo_t si;
	int r = sys_waitid(wd, &si, wd->options | WNOHANG);

	if (r)
		return r;
	if (!si.si_pid && !(wd->options & WNOHANG))
		return 1;
	return wid_finish(wd, &si);
}

int nw_waitid_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct wid_wait *w;
	int r = wid_try(req);

	if (r <= 0) {
		req->res = r;
		return r ? r : NW_COMPLETE;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->req = req;
	nw_list_init(&w->node);
	req->async = w;
	wid_set(w, WID_WAITING);
	if (!(issue_flags & NW_ISSUE_F_NONBLOCK)) {
		wid_sleep_loop(req, w);
		if (w->res < 0)
			return w->res;
		req->res = w->res;
		return NW_COMPLETE;
	}
	req->work.fn = wid_work;
	req->work.wq_poll = 0;
	if (nw_iowq_enqueue(&req->work, NW_WQ_UNBOUND)) {
		wid_set(w, WID_IDLE);
		return -EAGAIN;
	}
	return NW_QUEUED;
}

static bool work_is(struct nw_work *work, void *arg)
{
	return work == arg;
}

static void work_kicked(struct nw_work *work, void *arg)
{
	(void)work;
	(void)arg;
}

static int wid_cancel(struct nw_ring *ring,
		      bool (*match)(struct nw_req *req, void *arg), void *arg,
		      bool all)
{
	struct nw_list *pos, *tmp;
	int n = 0;

	pthread_mutex_lock(&wid_lock);
	nw_list_for_each_safe(pos, tmp, &wid_waits) {
		struct wid_wait *w = nw_list_entry(pos, struct wid_wait, node);

		if (w->req->ring != ring || !match(w->req, arg))
			continue;
		wid_claim(w, -ECANCELED);
		/* Its worker cannot finish the request before wid_lock. */
		nw_iowq_interrupt(work_is, &w->req->work, false, work_kicked);
		n++;
		if (!all)
			break;
	}
	pthread_mutex_unlock(&wid_lock);
	return n;
}
