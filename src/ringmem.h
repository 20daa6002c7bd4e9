/* SPDX-License-Identifier: MIT */
/* The ring memory: its layout, the memfd, the mirror (ringmem.c). */
#ifndef NW_RINGMEM_H
#define NW_RINGMEM_H

#include "internal.h"

/*
 * Lay the ring out and fill p's sq_off and cq_off: the memfd (its fd, or
 * -errno) mapped into the engine, the ring's pointers set. ring comes from
 * setup with its sizes and flags filled.
 */
int nw_ringmem_create(struct nw_ring *ring, struct io_uring_params *p);
/* Undo the engine's mappings (setup failed after nw_ringmem_create). */
void nw_ringmem_destroy(struct nw_ring *ring);
/* A forked child's engine for its parent's ring: the same mappings. */
void nw_ringmem_adopt(struct nw_ring *ring, const struct nw_ring *old);

/*
 * IORING_REGISTER_RESIZE_RINGS on the ring's memory (io_register_resize_rings):
 * p holds the new sizes (checked); its sq_off and cq_off are filled, and
 * the pending SQEs and CQEs move to the new rings: 0, -EOVERFLOW when
 * they do not fit (nothing changed), -EINVAL (NO_MMAP: not done), -ENOMEM.
 * The program maps the ring fd again. Under reg_lock, on the submitter.
 */
int nw_ringmem_resize(struct nw_ring *ring, struct io_uring_params *p);

/*
 * IOU_PBUF_RING_MMAP: map the memfd's window at IORING_OFF_PBUF_RING into
 * the engine (ring->pbuf_win) on first use (a NO_MMAP ring: a file of its
 * own): 0, -EINVAL (no such pages: NO_MMAP without the preload's mmap, or
 * RLIMIT_FSIZE kept the file small), -ENOMEM. Under reg_lock.
 */
int nw_ringmem_pbuf_window(struct nw_ring *ring);
/*
 * The program's mmap of a ring fd at IORING_OFF_PBUF_RING reaches
 * nw_kbuf_mmap from now on (the preload's interposer says so at load):
 * NO_MMAP rings may then have IOU_PBUF_RING_MMAP rings.
 */
void nw_ringmem_mmap_routed(void);

void nw_ringmem_settle_slow(struct nw_ring *ring, int fd);
/*
 * Make the program's mappings of IORING_OFF_CQ_RING views of the rings
 * region, once per ring, at its first enter (fd: the fd entered with) or
 * its poller's first SQE (fd -1). A load on the fast path.
 */
static inline void nw_ringmem_settle(struct nw_ring *ring, int fd)
{
	if (unlikely(!__atomic_load_n(&ring->mem_settled, __ATOMIC_ACQUIRE)))
		nw_ringmem_settle_slow(ring, fd);
}

#endif
