/* SPDX-License-Identifier: MIT */
/* IOSQE_IO_DRAIN: the ring's defer list (drain.c). Submit side only. */
#ifndef NW_DRAIN_H
#define NW_DRAIN_H

#include "internal.h"

/*
 * init_req's part: an SQE with IO_DRAIN (or the request after a link that
 * held one) turns draining on. 0, or -EOPNOTSUPP after CQE_SKIP_SUCCESS.
 */
int nw_drain_init(struct nw_ring *ring, struct nw_req *req);
/* Queue a request (with its chain) on the defer list, releasing what may go. */
void nw_drain_req(struct nw_req *req);
/* Release what may go now (every request still alive is deferred). */
void nw_drain_flush(struct nw_ring *ring);

#endif
