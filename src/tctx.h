/* SPDX-License-Identifier: MIT */
/*
 * The calling thread's io_uring state (tctx.c): whether it has used
 * io_uring (the kernel's current->io_uring) and its table of registered
 * rings (IORING_REGISTER_RING_FDS, IORING_ENTER_REGISTERED_RING).
 */
#ifndef NW_TCTX_H
#define NW_TCTX_H

#include "internal.h"

/* The kernel's IO_RINGFD_REG_MAX: registered rings per task. */
#define NW_RINGFD_REG_MAX 16U

/*
 * Whether this thread has used io_uring (set up, submitted, registered).
 * Read on every submitting enter: initial-exec, one %fs load even in the
 * shared libraries (no __tls_get_addr call).
 */
#define NW_TCTX_TLS __thread __attribute__((tls_model("initial-exec")))
extern NW_TCTX_TLS bool nw_tctx_live;

/* The kernel's __io_uring_add_tctx_node for the calling thread. */
void nw_tctx_add(void);

/* The same on the submit path: one thread-local load once live. */
static inline void nw_tctx_note(void)
{
	if (unlikely(!nw_tctx_live))
		nw_tctx_add();
}

/*
 * The ring behind a registered index of the calling thread (enter and
 * register with the registered-ring flag): 0, -EINVAL for an index out of
 * range or a thread that never used io_uring, -EBADF for an empty slot.
 */
int nw_tctx_ring(unsigned int index, struct nw_ring **ringp);

/*
 * Put ring (whose memfd fd is) in the first free slot of the calling
 * thread, with a copy of its own of fd: the index, or -EBUSY when the
 * table is full (IORING_SETUP_REGISTERED_FD_ONLY).
 */
int nw_tctx_install(struct nw_ring *ring, int fd);

/* IORING_REGISTER_RING_FDS and IORING_UNREGISTER_RING_FDS. */
int nw_ringfd_register(struct nw_ring *ring, void *arg, unsigned int nr_args);
int nw_ringfd_unregister(struct nw_ring *ring, void *arg, unsigned int nr_args);

#endif
