/* SPDX-License-Identifier: MIT */
/* Registered files and buffers (rsrc.c). */
#ifndef NW_RSRC_H
#define NW_RSRC_H

#include "internal.h"

int nw_rsrc_register_files(struct nw_ring *ring, void *arg,
			   unsigned int nr_args);
int nw_rsrc_unregister_files(struct nw_ring *ring, void *arg,
			     unsigned int nr_args);
int nw_rsrc_update_files(struct nw_ring *ring, void *arg, unsigned int nr_args);
int nw_rsrc_register_buffers(struct nw_ring *ring, void *arg,
			     unsigned int nr_args);
int nw_rsrc_unregister_buffers(struct nw_ring *ring, void *arg,
			       unsigned int nr_args);
/* The fd behind fixed slot idx: >= 0, or -EBADF. Submit side. */
int nw_rsrc_file(struct nw_ring *ring, unsigned int idx);
/* Check [addr, addr+len) lies in registered buffer idx: 0 or -EFAULT. */
int nw_rsrc_buffer_check(struct nw_ring *ring, unsigned int idx, uint64_t addr,
			 uint64_t len);

#endif
