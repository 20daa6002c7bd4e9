/* SPDX-License-Identifier: MIT */
/* Registered files and buffers, direct descriptors, tags (rsrc.c). */
#ifndef NW_RSRC_H
#define NW_RSRC_H

#include "internal.h"

/* Register opcodes (register.c's table). Called under reg_lock. */
int nw_rsrc_register_files(struct nw_ring *ring, void *arg,
			   unsigned int nr_args);
int nw_rsrc_unregister_files(struct nw_ring *ring, void *arg,
			     unsigned int nr_args);
int nw_rsrc_update_files(struct nw_ring *ring, void *arg, unsigned int nr_args);
/* Ring release: free every table and what it holds, posting no tag. */
void nw_rsrc_destroy(struct nw_ring *ring);
int nw_rsrc_register_buffers(struct nw_ring *ring, void *arg,
			     unsigned int nr_args);
int nw_rsrc_unregister_buffers(struct nw_ring *ring, void *arg,
			       unsigned int nr_args);
int nw_rsrc_register_files2(struct nw_ring *ring, void *arg,
			    unsigned int nr_args);
int nw_rsrc_update_files2(struct nw_ring *ring, void *arg,
			  unsigned int nr_args);
int nw_rsrc_register_buffers2(struct nw_ring *ring, void *arg,
			      unsigned int nr_args);
/* IORING_REGISTER_CLONE_BUFFERS: another ring's (or this one's) buffers. */
int nw_rsrc_clone_buffers(struct nw_ring *ring, void *arg,
			  unsigned int nr_args);
int nw_rsrc_update_buffers(struct nw_ring *ring, void *arg,
			   unsigned int nr_args);
int nw_rsrc_file_alloc_range(struct nw_ring *ring, void *arg,
			     unsigned int nr_args);

/*
 * Take a reference on fixed slot idx for req (req->file_node): the
 * engine's fd for it, or -EBADF. Any thread.
 */
int nw_rsrc_file_get(struct nw_req *req, unsigned int idx);
/*
 * A reference on fixed slot idx's file, for use outside req->file_node
 * (SPLICE's fd_in, MSG_RING's source, cancel by fixed fd): the node, with
 * the engine's fd for it in *fd, or NULL for an empty or bad slot. The fd
 * stays open until nw_rsrc_node_put. Any thread.
 */
struct nw_rsrc_node *nw_rsrc_node_get(struct nw_ring *ring, unsigned int idx,
				      int *fd);
/*
 * Drop it. If that closes the file, its tag goes before req's CQE (req
 * NULL: posted as task work). Any thread.
 */
void nw_rsrc_node_put(struct nw_ring *ring, struct nw_rsrc_node *node,
		      struct nw_req *req);
/*
 * A node for an fd of the engine's own that no table holds (poll.c keeps
 * the file of a closed fd open with it for the requests parked on it):
 * no reference yet, so the first nw_rsrc_node_hold must follow; NULL
 * when out of memory (the caller closes fd and frees nothing).
 */
struct nw_rsrc_node *nw_rsrc_node_wrap(int fd);
/*
 * req uses node's file from now on, as if by IOSQE_FIXED_FILE: req->fd is
 * node's fd until req is freed, which drops the reference (and closes the
 * fd with the last). Called with poll_lock held, req parked.
 */
void nw_rsrc_node_hold(struct nw_req *req, struct nw_rsrc_node *node);
/* Drop req->file_node (request free, on the submit side). */
void nw_rsrc_file_put(struct nw_req *req);
/*
 * Install fd (always consumed) as a direct descriptor: file_slot is the
 * SQE's file_index (slot + 1, or IORING_FILE_INDEX_ALLOC). Returns 0, the
 * allocated slot, or -errno (-ENXIO, -EINVAL, -ENFILE). The tag of a file
 * it replaces goes before req's CQE (req NULL: as task work). Any thread.
 */
int nw_rsrc_install(struct nw_ring *ring, int fd, uint32_t file_slot,
		    struct nw_req *req);
/* Close fixed slot idx: 0, -ENXIO, -EINVAL or -EBADF. Any thread. */
int nw_rsrc_remove(struct nw_ring *ring, unsigned int idx, struct nw_req *req);
/* Post the tags of req->tag_nodes (before req's CQE). Submit side. */
void nw_rsrc_post_tags(struct nw_req *req);
/*
 * Take a reference on registered buffer idx for req (req->buf_node, held
 * until req is freed) if [addr, addr+len) lies in it: 0 or -EFAULT.
 * Submit side.
 */
int nw_rsrc_buffer_get(struct nw_req *req, unsigned int idx, uint64_t addr,
		       uint64_t len);
/* The same for each of nr iovecs (READV_FIXED, WRITEV_FIXED). */
struct iovec;
int nw_rsrc_buffer_get_vec(struct nw_req *req, unsigned int idx,
			   const struct iovec *iov, unsigned int nr);
/* Whether buffer slot idx holds a buffer. Any thread. */
bool nw_rsrc_buffer_exists(struct nw_ring *ring, unsigned int idx);
/* Drop req->buf_node (request free, on the submit side). */
void nw_rsrc_buf_put(struct nw_req *req);

/* IORING_OP_FILES_UPDATE. */
int nw_files_update_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_files_update_issue(struct nw_req *req, unsigned int issue_flags);

#endif
