/* SPDX-License-Identifier: MIT */
/* The worker pool, the io-wq analogue (iowq.c). */
#ifndef NW_IOWQ_H
#define NW_IOWQ_H

#include <stdbool.h>

enum nw_wq_class {
	NW_WQ_BOUND,   /* file and filesystem work: bounded by CPU count */
	NW_WQ_UNBOUND, /* work that may block forever (pipes, sockets) */
	NW_WQ_NR,
};

struct nw_work {
	struct nw_work *next;
	void (*fn)(struct nw_work *work);
};

/*
 * Queue work on a class. A new worker is started when none is idle and the
 * class is below its limit. Returns 0, or -EAGAIN when no worker exists
 * and none could be started (the work is then not queued).
 */
int nw_iowq_enqueue(struct nw_work *work, enum nw_wq_class cls);

/* Workers started so far (statistics and tests). */
unsigned long nw_iowq_started(void);

#endif
