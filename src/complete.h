/* SPDX-License-Identifier: MIT */
/*
 * Completion (complete.c): how requests finish and how CQEs reach the CQ
 * ring. The CQ ring's entries are written here and in complete.c only.
 */
#ifndef NW_COMPLETE_H
#define NW_COMPLETE_H

#include <string.h>
#include "internal.h"
#include "trace.h"

/*
 * Write one 16-byte CQE into slot of the CQ array cqes, in room reserved
 * for the submit side (nw_cq_begin_batch); the tail is published later,
 * at the flush. The submit fast path calls it with the ring's fields in
 * registers.
 */
static inline void nw_cqe16_write(char *cqes, unsigned int slot,
				  uint64_t user_data, int32_t res,
				  uint32_t flags)
{
	struct io_uring_cqe *cqe = (void *)(cqes + ((size_t)slot << 4));

	cqe->user_data = user_data;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* res, then flags: adjacent 32-bit words, one 64-bit store */
	uint64_t word = (uint64_t)(uint32_t)res | (uint64_t)flags << 32;

	_Static_assert(offsetof(struct io_uring_cqe, flags) ==
			       offsetof(struct io_uring_cqe, res) + 4,
		       "CQE layout");
	memcpy(&cqe->res, &word, sizeof(word));
#else
	cqe->res = res;
	cqe->flags = flags;
#endif
}

/*
 * Write the 16-byte CQE at cqe with res 0, flags 0 and the user_data at
 * src (an SQE's): one 8-byte load and one 16-byte store, where two
 * stores would be needed otherwise (the CQE stores of the fast loop are
 * about one in three of the NOP benchmark's). The load is plain, not
 * READ_ONCE (which would keep it out of a vector register): its one use
 * is the store, so no second read can see another value.
 */
static inline void nw_cqe16_write_ok(char *cqe, const void *src)
{
	typedef uint64_t nw_v2u64 __attribute__((vector_size(16)));
	uint64_t user_data;
	nw_v2u64 v;

	_Static_assert(sizeof(struct io_uring_cqe) == sizeof(v), "CQE size");
	memcpy(&user_data, src, sizeof(user_data));
	v = (nw_v2u64){user_data, 0};
	memcpy(cqe, &v, sizeof(v));
}

/* The CQ array, for a writer that keeps it in a register (submit.c). */
static inline char *nw_cq_entries(const struct nw_ring *ring)
{
	return ring->cqes;
}

/* Finish a request from any thread: the submit side posts its CQE. */
void nw_req_complete_async(struct nw_req *req);
/* Queue req for the submit side, to run req->tw_func there (any thread). */
void nw_req_task_queue(struct nw_req *req);
/*
 * Post an extra CQE from any thread, through task work: tags with no
 * request to go before, MSG_RING's CQE on another ring. -ENOMEM when
 * there is no memory; lost: then count it as a dropped CQE.
 */
int nw_post_aux_async(struct nw_ring *ring, uint64_t user_data, int res,
		      uint32_t cflags, bool lost);
/* Take the aux CQEs lost off the submit side into cq_overflow (-EBADR). */
void nw_cq_take_lost(struct nw_ring *ring);
/*
 * Finish a waiting request: inline on the submit side (the next request of
 * its chain goes on through its tw_func), else as task work.
 */
void nw_req_finish(struct nw_req *req, bool submit_side);
/* Complete what other threads finished. Called on the submit side. */
void nw_run_tw(struct nw_ring *ring);
/* Run task work now if the submit side is free (non-lockless rings). */
void nw_run_tw_trylock(struct nw_ring *ring);
struct nw_req *nw_req_complete_inline(struct nw_req *req);
void nw_req_set_fail(struct nw_req *req, int res);
void nw_cq_add_batch(struct nw_ring *ring, const struct nw_req *req, int res);
void nw_cq_flush_batch(struct nw_ring *ring);
bool nw_cq_flush_overflow(struct nw_ring *ring);
/* No room for one more CQE without overflowing (submit side). */
bool nw_cq_full(struct nw_ring *ring);
/* Room for one more CQE, behind the batch and any backlog. Submit side. */
bool nw_cq_has_room(struct nw_ring *ring);
/* Take the submit side: submit_lock, or nothing on lockless rings. */
void nw_submit_lock(struct nw_ring *ring);
void nw_submit_unlock(struct nw_ring *ring);
struct nw_req *nw_req_alloc(struct nw_ring *ring);
void nw_req_free(struct nw_ring *ring, struct nw_req *req);
/* Teardown, every request freed: the cache's memory goes. */
void nw_req_cache_free(struct nw_ring *ring);

/* CQEs the program has not reaped yet (at most the CQ's size). */
static inline unsigned int nw_cq_ready(const struct nw_ring *ring)
{
	unsigned int n =
		load_acquire(ring->cq_tail) - load_acquire(ring->cq_head);

	return n > ring->cq_entries ? ring->cq_entries : n;
}

/*
 * A GETEVENTS for min_complete CQEs that has nothing to do (enter's, when
 * its submit posted them): no EXT_ARG to check, nothing parked (wait.c's
 * defer_look), no task work, backlog or lost aux CQE (run_task_work),
 * and the CQEs there. nw_wait returns 0 at once then; enter does not
 * call it.
 */
static inline bool nw_wait_needless(const struct nw_ring *ring,
				    unsigned int min_complete,
				    unsigned int flags)
{
	return !(flags & IORING_ENTER_EXT_ARG) &&
	       !__atomic_load_n(&ring->nr_parked, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&ring->tw_head, __ATOMIC_ACQUIRE) &&
	       !READ_ONCE(ring->ovf_head) &&
	       !__atomic_load_n(&ring->aux_lost, __ATOMIC_RELAXED) &&
	       nw_cq_ready(ring) >= min_complete;
}

/*
 * Free CQ slots behind the submit side's own tail, as the program's head
 * says; a bogus head gives 0. Submit side.
 */
static inline unsigned int nw_cq_space(const struct nw_ring *ring)
{
	unsigned int queued =
		ring->cached_cq_tail - load_acquire(ring->cq_head);

	return queued >= ring->cq_entries ? 0 : ring->cq_entries - queued;
}

/*
 * Start a submit batch. With no backlog, reserve the CQ room the program
 * has left us, so that inline completions go straight into the ring
 * (16-byte CQEs only); the tail is published once, at the flush.
 */
static inline void nw_cq_begin_batch(struct nw_ring *ring)
{
	if (!ring->ovf_head && ring->cqe_shift == 4 && !ring->cqe_mixed)
		ring->cq_room = nw_cq_space(ring);
}

/*
 * Queue req's CQE (with res) into the current submit batch, straight into
 * the CQ room reserved by nw_cq_begin_batch when there is some.
 */
static inline void nw_cq_add(struct nw_ring *ring, const struct nw_req *req,
			     int res)
{
	if (unlikely(nw_traced(ring)))
		nw_trace_cqe(ring, req, res);
	if (likely(ring->cq_room)) {
		ring->cq_room--;
		nw_cqe16_write(ring->cqes,
			       ring->cached_cq_tail++ & ring->cq_mask,
			       req->user_data, res, req->cflags);
		return;
	}
	nw_cq_add_batch(ring, req, res);
}

/*
 * A resize's move of the CQEs [head, tail) by ring position (ringmem.c):
 * out of the ring into buf, or (in) from buf into the ring as sized now.
 */
void nw_cq_copy(struct nw_ring *ring, unsigned int head, unsigned int tail,
		void *buf, bool in);

#endif
