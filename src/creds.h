/* SPDX-License-Identifier: MIT */
/*
 * Personalities (creds.c): IORING_REGISTER_PERSONALITY's saved
 * credentials, and a request's run under them.
 */
#ifndef NW_CREDS_H
#define NW_CREDS_H

#include "internal.h"

/* IORING_REGISTER_PERSONALITY: the new id (1..65535) or -errno. */
int nw_creds_register(struct nw_ring *ring, void *arg, unsigned int nr_args);
/* IORING_UNREGISTER_PERSONALITY of id nr_args: 0 or -EINVAL. */
int nw_creds_unregister(struct nw_ring *ring, void *arg, unsigned int nr_args);
/*
 * sqe->personality id for req: 0 (req->creds held, NW_REQ_F_CREDS set,
 * NW_REQ_F_CREDS_SWITCH too when they are not the calling thread's) or
 * -EINVAL for an unknown id. Submit side.
 */
int nw_creds_attach(struct nw_req *req, unsigned int id);
/* Drop req->creds (request free). */
void nw_creds_put(struct nw_creds *c);
/*
 * Around a worker's blocking issue: switch the calling thread to c and
 * return what to switch back to (*err 0), or NULL with *err -EINVAL (the
 * thread may not take them) or -ENOMEM; then back (nw_creds_leave).
 */
struct nw_creds *nw_creds_enter(const struct nw_creds *c, int *err);
void nw_creds_leave(struct nw_creds *saved);
/* Ring exit: forget every personality. */
void nw_creds_free_all(struct nw_ring *ring);
/* Ring release: the table goes too. */
void nw_creds_destroy(struct nw_ring *ring);

#endif
