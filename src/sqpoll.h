/* SPDX-License-Identifier: MIT */
/* IORING_SETUP_SQPOLL: the SQ poller thread (sqpoll.c). */
#ifndef NW_SQPOLL_H
#define NW_SQPOLL_H

#include "internal.h"

/*
 * Engine-private word in the rings header's padding (between the dropped
 * counter and the CQ header, which ringmem.c leaves unused): the poller's
 * wake-up futex. It is in the ring's shared memory so that a forked child
 * that submits on the parent's ring can wake the parent's poller.
 */
#define NW_SQ_OFF_WAKE 160

/* Default and unit of sq_thread_idle (kernel: HZ when 0). */
#define NW_SQ_IDLE_MS_DEFAULT 1000

/*
 * Give a new SQPOLL ring its poller: attach to wq_fd's poller with
 * IORING_SETUP_ATTACH_WQ, else start a thread (pinned with SQ_AFF).
 * Called by setup once the ring memory exists: 0 or -errno.
 */
int nw_sqpoll_create(struct nw_ring *ring, const struct io_uring_params *p);
/* Undo nw_sqpoll_create when setup fails after it. */
void nw_sqpoll_cancel_create(struct nw_ring *ring);
/*
 * io_uring_enter on an SQPOLL ring: SQ_WAKEUP, SQ_WAIT, GETEVENTS; returns
 * to_submit (nothing is submitted by the caller), the wait's result when
 * to_submit is 0, or -EOWNERDEAD when the poller is gone.
 */
long nw_sqpoll_enter(struct nw_ring *ring, unsigned int to_submit,
		     unsigned int min_complete, unsigned int flags,
		     const void *arg, size_t argsz);
/*
 * A ring the program let go of leaves its poller, which serves it no more
 * (the kernel's io_sq_thread_finish at ring exit), so that it can be torn
 * down as any other. False when it must stay: its memory holds the wake
 * word of a poller other rings still share, or the poller is a parent's.
 */
bool nw_sqpoll_detach(struct nw_ring *ring);
/* The ring's release: it no longer names its poller. */
void nw_sqpoll_release(struct nw_ring *ring);
/* Wake the ring's poller if it sleeps (IORING_REGISTER_ENABLE_RINGS). */
void nw_sqpoll_wake(struct nw_ring *ring);

#endif
