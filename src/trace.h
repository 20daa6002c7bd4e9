/* SPDX-License-Identifier: MIT */
/*
 * The request trace (trace.c): with NOWAIT_TRACE set, one line per CQE
 * (and per setup and register call), strace-like: time, thread, ring fd,
 * opcode and arguments, user_data, result, latency and the path that
 * served the request. Off, it costs a test of nw_traced(ring) where a
 * request is initialised, completed and freed, and nothing on the NOP
 * fast paths (they are skipped while tracing, so every CQE is seen).
 */
#ifndef NW_TRACE_H
#define NW_TRACE_H

#include "internal.h"

/* The path that served a request, as the trace names it. */
enum nw_trace_path {
	NW_PATH_INLINE,	  /* completed in the submitting call */
	NW_PATH_PARKED,	  /* parked on readiness, then reissued */
	NW_PATH_REISSUED, /* data raced in as it parked: reissued at once */
	NW_PATH_WORKER,	  /* a worker thread ran it */
	NW_PATH_LINKED,	  /* a link follower failed with its chain */
};

/* What the trace keeps of a request from its SQE to its last CQE. */
struct nw_trace_req {
	long long submit_ns;
	unsigned char path; /* enum nw_trace_path */
	struct io_uring_sqe sqe;
	char str[40]; /* a path argument, truncated as strace -s does */
};

#ifdef NW_NO_TRACE
/* make NOTRACE=1: no trace code at all (internal.h, nw_traced). */
static inline bool nw_trace_init(void)
{
	return false;
}
static inline void nw_trace_submit(struct nw_req *req,
				   const struct io_uring_sqe *sqe)
{
}
static inline void nw_trace_cqe(struct nw_ring *ring, const struct nw_req *req,
				int res)
{
}
static inline void nw_trace_free(struct nw_req *req)
{
}
static inline void nw_trace_setup(unsigned int entries,
				  const struct io_uring_params *p, int ret)
{
}
static inline void nw_trace_register(int fd, const char *op,
				     unsigned int opcode, unsigned int nr_args,
				     int ret)
{
}
#else
/* Read NOWAIT_TRACE / NOWAIT_TRACE_OPS once: whether tracing is on. */
bool nw_trace_init(void);
/* A request was initialised from sqe (nw_traced). */
void nw_trace_submit(struct nw_req *req, const struct io_uring_sqe *sqe);
/* A CQE of req with res is being posted (nw_traced). */
void nw_trace_cqe(struct nw_ring *ring, const struct nw_req *req, int res);
/* req is freed (nw_traced). */
void nw_trace_free(struct nw_req *req);
/* The setup and register calls, as lines of their own. */
void nw_trace_setup(unsigned int entries, const struct io_uring_params *p,
		    int ret);
void nw_trace_register(int fd, const char *op, unsigned int opcode,
		       unsigned int nr_args, int ret);
#endif

static inline void nw_trace_path(struct nw_req *req, int path)
{
	if (unlikely(nw_traced(req->ring)) && req->trace)
		req->trace->path = (unsigned char)path;
}

#endif
