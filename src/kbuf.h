/* SPDX-License-Identifier: MIT */
/*
 * Provided buffers (kbuf.c): PROVIDE_BUFFERS / REMOVE_BUFFERS, buffer
 * rings (IORING_REGISTER_PBUF_RING), and IOSQE_BUFFER_SELECT for the ops
 * that take it.
 */
#ifndef NW_KBUF_H
#define NW_KBUF_H

#include <sys/uio.h>
#include "internal.h"

/* One buffer a request holds: a provided one, or a ring entry taken. */
struct nw_kbuf {
	struct nw_list node; /* on its group, or the free cache */
	uint64_t addr;
	uint32_t len;
	uint16_t bid;
	uint16_t bgid;
	uint16_t ring_pos; /* ring entries: the head it was taken at */
	uint16_t nr;	   /* ring entries taken (more than 1: a bundle) */
	bool ring;	   /* taken from a buffer ring */
	bool inc;	   /* an IOU_PBUF_RING_INC ring's: consumed in parts */
};

int nw_provide_buffers_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_provide_buffers_issue(struct nw_req *req, unsigned int issue_flags);
int nw_remove_buffers_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_remove_buffers_issue(struct nw_req *req, unsigned int issue_flags);

/* IORING_REGISTER_PBUF_RING / IORING_UNREGISTER_PBUF_RING. */
int nw_kbuf_register_ring(struct nw_ring *ring, void *arg,
			  unsigned int nr_args);
int nw_kbuf_unregister_ring(struct nw_ring *ring, void *arg,
			    unsigned int nr_args);
/*
 * The program's mmap of fd at off, an IORING_OFF_PBUF_RING offset: 0 when
 * fd is not a NO_MMAP ring (the real mmap serves the others); else 1 and
 * *res the IOU_PBUF_RING_MMAP ring of the bgid off names, mapped as flags
 * say (always shared), or -errno (-ENOMEM: no such ring, as io_uring_mmap
 * says). Any thread.
 */
int nw_kbuf_mmap(int fd, void *addr, size_t len, int prot, int flags,
		 uint64_t off, void **res);
/* IORING_REGISTER_PBUF_STATUS: a ring group's head. */
int nw_kbuf_ring_status(struct nw_ring *ring, void *arg, unsigned int nr_args);

/*
 * Prep of an op with IOSQE_BUFFER_SELECT: remember sqe->buf_group and the
 * length asked (0: a whole buffer). Any op's prep calls it (it also clears
 * req->kbuf, which is then valid for every request of those ops).
 */
void nw_kbuf_prep(struct nw_req *req, const struct io_uring_sqe *sqe,
		  uint32_t len);
/* Does req select a buffer at issue (IOSQE_BUFFER_SELECT)? */
static inline bool nw_kbuf_wanted(const struct nw_req *req)
{
	return req->sqe_flags & IOSQE_BUFFER_SELECT;
}
/*
 * Take a buffer of req's group for an attempt (held in req->kbuf): its
 * address, with *len the length to use. NULL when the group has none
 * (the op fails with -ENOBUFS). Any thread.
 */
void *nw_kbuf_select(struct nw_req *req, size_t *len);
/* What nw_kbuf_select_vec tells of its take. */
#define NW_KBUF_EMPTY	(1U << 0) /* all the group had (REQ_F_BL_EMPTY) */
#define NW_KBUF_PARTIAL (1U << 1) /* max_len cut a plain ring's buffer */
#define NW_KBUF_NOGROUP (1U << 2) /* no group of that id (-ENOENT) */
/*
 * A bundle (IORING_RECVSEND_BUNDLE): take up to max_iov buffers of req's
 * group at once, max_len bytes in all (0: no limit), into iov; returns how
 * many (0: none, the op fails with -ENOBUFS), *state its NW_KBUF_* bits.
 * Held in req->kbuf as one record.
 */
unsigned int nw_kbuf_select_vec(struct nw_req *req, struct iovec *iov,
				unsigned int max_iov, size_t max_len,
				unsigned int *state);
/* The attempt did not use the buffer: give it back, as if never taken. */
void nw_kbuf_recycle(struct nw_req *req);
/*
 * The buffer is consumed by req->res bytes: the CQE flags that report it
 * (F_BUFFER|bid, and F_BUF_MORE while an incremental one has room left).
 */
unsigned int nw_kbuf_put(struct nw_req *req);
/*
 * A bundle consumed by len bytes over its first used buffers (the rest go
 * back to the group): the CQE flags, the first buffer's id.
 */
unsigned int nw_kbuf_put_vec(struct nw_req *req, int len, unsigned int used);
/* An incremental buffer's rest is too small for the op: consume all of it. */
void nw_kbuf_retire(struct nw_req *req);
/* Drop every group of the ring (ring exit); the records stay. */
void nw_kbuf_free_all(struct nw_ring *ring);
/*
 * Free all of the ring's provided-buffer state, records too (its release:
 * no request is left to hold one).
 */
void nw_kbuf_destroy(struct nw_ring *ring);

#endif
