/* SPDX-License-Identifier: MIT */
/* The worker pool, the io-wq analogue (iowq.c). */
#ifndef NW_IOWQ_H
#define NW_IOWQ_H

#include <pthread.h>
#include <stdbool.h>

enum nw_wq_class {
	NW_WQ_BOUND,   /* file and filesystem work: bounded by CPU count */
	NW_WQ_UNBOUND, /* work that may block forever (pipes, sockets) */
	NW_WQ_NR,
};

struct nw_work {
	struct nw_work *next; /* on the queue, then on the running list */
	void (*fn)(struct nw_work *work);
	void *pool;
	pthread_t thread; /* the worker, while in a blocking call */
	int cancel;	  /* a cancel asked to interrupt it (atomic) */
	int in_call;	  /* in a blocking call that may be interrupted */
	int wq_poll; /* the owner's mark for its cancel callback (atomic) */
};

/*
 * Make the pools (their limits need the online CPU count, which glibc's
 * sysconf reads by opening a file under /sys). Called by setup on the
 * program's thread: done lazily on a reactor thread (a dropped ring's
 * teardown cancels its work), that open would take the lowest free fd
 * number for a moment, behind the program's back (the kernel never does).
 */
void nw_iowq_init(void);

/*
 * Queue work on a class. A new worker is started when none is idle and the
 * class is below its limit. Returns 0, or -EAGAIN when no worker exists
 * and none could be started (the work is then not queued).
 */
int nw_iowq_enqueue(struct nw_work *work, enum nw_wq_class cls);

/*
 * IORING_REGISTER_IOWQ_MAX_WORKERS: cap class c at max[c] workers (0:
 * leave it). Workers above a lowered cap exit as they finish their work.
 */
void nw_iowq_set_max(const unsigned int max[NW_WQ_NR]);

/*
 * IORING_REGISTER_IOWQ_AFF: the CPUs the workers run on, set of size
 * bytes (NULL: back to the process's own). Running and idle workers move
 * at their next look at the pool, new ones start there.
 */
void nw_iowq_set_affinity(const void *set, size_t size);

/*
 * Called by a work function before it hands its object back (after this
 * the pool no longer knows the work, so cancel cannot find it running).
 */
void nw_iowq_done(struct nw_work *work);

/*
 * Cancel queued work that match() accepts (the first, or all): each is
 * removed and passed to cancelled() after the pool lock is dropped.
 * Returns the number removed; *running is set when a matching work is
 * running already (it cannot be taken back: -EALREADY for the caller).
 */
int nw_iowq_cancel(bool (*match)(struct nw_work *work, void *arg), void *arg,
		   bool all, void (*cancelled)(struct nw_work *work, void *arg),
		   bool *running);

/*
 * Interrupt running work that match() accepts (the first, or all), as
 * io-wq signals a worker for IO_WQ_WORK_CANCEL: its blocking call returns
 * EINTR. interrupted() is called for each, with the pool lock held.
 * Returns the number interrupted.
 */
int nw_iowq_interrupt(bool (*match)(struct nw_work *work, void *arg), void *arg,
		      bool all,
		      void (*interrupted)(struct nw_work *work, void *arg));

/*
 * Bracket a work function's blocking call, on the worker. begin returns
 * -ECANCELED when a cancel came first (skip the call), else 0; end returns
 * whether a cancel asked to interrupt it.
 */
int nw_iowq_block_begin(struct nw_work *work);
bool nw_iowq_block_end(struct nw_work *work);

#endif
