/* SPDX-License-Identifier: MIT */
/*
 * The resource tables' insides, shared by rsrc.c (files, tags, the
 * nodes' life) and rsrcbuf.c (registered buffers). Nothing else includes
 * it.
 */
#ifndef NW_RSRC_INT_H
#define NW_RSRC_INT_H

#include <sys/uio.h>
#include "internal.h"

/*
 * A slot's resource: a file (fd >= 0) or a buffer (fd -1, acct its pages
 * counted against RLIMIT_MEMLOCK). The last reference closes the file or
 * uncounts the buffer, and posts the tag.
 */
struct nw_rsrc_node {
	int refs; /* the table's, plus one per request using it (atomic) */
	int fd;	  /* the engine's fd for the file, -1 for a buffer */
	uint64_t tag;
	unsigned long acct;
	struct nw_rsrc_node *next; /* on req->tag_nodes once closed */
};

struct nw_buf_slot {
	struct iovec iov;	   /* iov_base NULL: empty */
	struct nw_rsrc_node *node; /* NULL when empty */
};

struct nw_rsrc {
	pthread_mutex_t lock;
	struct nw_rsrc_node **files;   /* NULL entries are empty slots */
	struct nw_rsrc_node **retired; /* emptied, its nodes being put */
	unsigned int nr_files;	       /* 0: no table */
	unsigned int alloc_start, alloc_end, alloc_hint;
	struct nw_buf_slot *bufs;
	unsigned int nr_bufs;
};

struct io_uring_rsrc_register;
struct io_uring_rsrc_update2;

struct nw_rsrc *nw_rsrc_of(struct nw_ring *ring);
/* The ring's tables, made on first use. Under reg_lock. */
struct nw_rsrc *nw_rsrc_make(struct nw_ring *ring);
/* A node with one reference (the table's), or NULL. */
struct nw_rsrc_node *nw_rsrc_node_new(int fd, uint64_t tag);
/* Drop a reference; see node_put in rsrc.c for who posts the tag. */
void nw_rsrc_node_release(struct nw_ring *ring, struct nw_rsrc_node *node,
			  struct nw_req *req, bool submit_side);
/* The submit side for a register call that posts CQEs, and its end. */
void nw_rsrc_reg_post_begin(struct nw_ring *ring);
void nw_rsrc_reg_post_end(struct nw_ring *ring);
/* io_register_rsrc's and io_register_rsrc_update's checks: 0 or -errno. */
int nw_rsrc_reg_parse(void *arg, unsigned int size,
		      struct io_uring_rsrc_register *rr);
int nw_rsrc_update_parse(void *arg, unsigned int size,
			 struct io_uring_rsrc_update2 *up);

#endif
