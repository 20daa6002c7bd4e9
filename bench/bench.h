/* SPDX-License-Identifier: MIT */
/*
 * nowait-bench: what the benchmark's files share.
 *
 * An engine is one implementation of the three io_uring calls: the kernel's
 * (raw system calls) or nowait's (nowait_*), as test/rawring.h has them. A
 * ring is mapped (by test/rawring.c) and driven by the same code for both,
 * the way liburing does it, so that the only thing that differs between two
 * measurements is the engine. A workload is one entry of the table in main.c
 * and one file.
 */
#ifndef NW_BENCH_H
#define NW_BENCH_H

#include <linux/io_uring.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nowait-abi.h"
#include "rawring.h"

/*
 * The engines: t_calls_kernel and t_calls_user (rawring.h), and nowait
 * with NOWAIT_PUNT=1 at set-up: blocking calls on workers.
 */
extern const struct t_calls bench_calls_user_punt;
/* minimal.c: the least a user-space io_uring does per NOP, a yardstick */
extern const struct t_calls bench_calls_minimal;

/*
 * A mapped ring. The SQ and CQ rings are always mapped separately, as
 * fio's t/io_uring maps them (both engines accept that, whatever
 * IORING_FEAT_SINGLE_MMAP says), so both engines run the same code.
 * The fields the hot paths read are copied out of the mapping.
 */
struct bench_ring {
	const struct t_calls *eng;
	int fd;
	unsigned int flags; /* setup flags the ring was created with */
	unsigned int features;

	unsigned int *sq_khead, *sq_ktail, *sq_array;
	unsigned int sq_mask, sq_entries;
	unsigned int sqe_head; /* SQEs in [sqe_head, sqe_tail) are filled */
	unsigned int sqe_tail; /* but not yet published */
	struct io_uring_sqe *sqes;

	unsigned int *cq_khead, *cq_ktail;
	unsigned int cq_mask, cq_entries;
	struct io_uring_cqe *cqes;

	struct t_ring map; /* the mapping (test/rawring.h), fd included */

	const char *err_op; /* the call that failed in bench_ring_open() */
};

#define BENCH_FAST_FLAGS \
	(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)

int bench_ring_open(struct bench_ring *r, const struct t_calls *eng,
		    unsigned int entries, unsigned int cq_entries,
		    unsigned int flags);
void bench_ring_close(struct bench_ring *r);
bool bench_ring_has_op(struct bench_ring *r, unsigned int op);
const char *bench_setup_name(unsigned int flags);

/* The SQ tail is ours: a plain read. The head is the engine's. */
static inline struct io_uring_sqe *bench_get_sqe(struct bench_ring *r)
{
	unsigned int head = __atomic_load_n(r->sq_khead, __ATOMIC_ACQUIRE);

	if (r->sqe_tail - head >= r->sq_entries)
		return NULL;
	return &r->sqes[r->sqe_tail++ & r->sq_mask];
}

/*
 * Publish the filled SQEs through the index array, then the tail with a
 * store-release so that the engine sees the SQEs before the tail moves.
 * Returns how many SQEs were published.
 */
static inline unsigned int bench_flush_sq(struct bench_ring *r)
{
	unsigned int n = r->sqe_tail - r->sqe_head;
	unsigned int tail = *r->sq_ktail;

	for (; r->sqe_head != r->sqe_tail; r->sqe_head++, tail++)
		r->sq_array[tail & r->sq_mask] = r->sqe_head & r->sq_mask;
	__atomic_store_n(r->sq_ktail, tail, __ATOMIC_RELEASE);
	return n;
}

/* io_uring_enter() with GETEVENTS whenever CQEs are waited for. */
static inline int bench_enter(struct bench_ring *r, unsigned int to_submit,
			      unsigned int min_complete, unsigned int flags)
{
	if (min_complete)
		flags |= IORING_ENTER_GETEVENTS;
	return r->eng->enter(r->fd, to_submit, min_complete, flags, NULL, 0);
}

/* CQEs ready to reap; *head is where they start. */
static inline unsigned int bench_cq_ready(struct bench_ring *r,
					  unsigned int *head)
{
	*head = *r->cq_khead;
	return __atomic_load_n(r->cq_ktail, __ATOMIC_ACQUIRE) - *head;
}

static inline struct io_uring_cqe *bench_cqe_at(struct bench_ring *r,
						unsigned int idx)
{
	return &r->cqes[idx & r->cq_mask];
}

/* Hand n CQE slots back: store-release, after we are done reading them. */
static inline void bench_cq_advance(struct bench_ring *r, unsigned int n)
{
	__atomic_store_n(r->cq_khead, *r->cq_khead + n, __ATOMIC_RELEASE);
}

/*
 * Workloads. A parameter is a long option (and optionally a short one)
 * that sets a positive integer of the workload; its initial value is the
 * default.
 */
struct bench_param {
	const char *name;
	int short_opt;
	const char *help;
	long *val;
};

#define BENCH_MAX_ENGINES 2

struct bench_ctx {
	const struct t_calls *engines[BENCH_MAX_ENGINES];
	int nr_engines;
	double seconds; /* measuring time per engine */
	bool json;
	bool smoke;
	bool plain_setup;    /* --flags none */
	const char *flavour; /* --engine=user-punt etc.: that one alone */
	double getppid_ns;   /* this machine's system call cost, this run */
};

struct bench_workload {
	const char *name;
	const char *desc;
	/* 0 when it ran, 1 on a failure (already reported) */
	int (*run)(const struct bench_ctx *ctx);
	const struct bench_param *params; /* ends with a NULL name */
};

extern const struct bench_workload bench_nop;
extern const struct bench_workload bench_pipes;
extern const struct bench_workload bench_latency;
extern const struct bench_workload bench_hackbench;
extern const struct bench_workload bench_pingpong;
extern const struct bench_workload bench_echo;
extern const struct bench_workload bench_fileread;
extern const struct bench_workload bench_liburing;

/* liburing.c: the child under the preload (NOWAIT_BENCH_LIBURING_CHILD). */
int bench_liburing_child(const char *arg);

bool bench_ctx_has(const struct bench_ctx *ctx, const struct t_calls *eng);
bool bench_ctx_has_flavour(const struct bench_ctx *ctx,
			   const struct t_calls *eng, const char *name);
bool bench_ctx_has_floor(const struct bench_ctx *ctx, const char *name);

/* A read or write SQE, as io_uring_prep_read()/io_uring_prep_write(). */
static inline void bench_prep_rw(struct io_uring_sqe *sqe, int op, int fd,
				 void *buf, unsigned int len, uint64_t off,
				 uint64_t user_data)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = op;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)buf;
	sqe->len = len;
	sqe->off = off;
	sqe->user_data = user_data;
}

/* Statistics over samples (sorted in place); stdev is the sample one. */
struct bench_stats {
	size_t count;
	double avg, stdev, min, max, p50, p99;
};

void bench_stats(double *v, size_t n, struct bench_stats *st);

/* report.c */
double bench_now(void);
void bench_json_begin(const char *bench, const char *engine);
void bench_json_str(const char *key, const char *val);
void bench_json_num(const char *key, double val);
void bench_json_end(void);
void bench_report_error(const struct bench_ctx *ctx, const char *bench,
			const char *engine, const char *op, int err);
void bench_report_error_kv(const struct bench_ctx *ctx, const char *bench,
			   const char *engine, const char *key, const char *val,
			   const char *op, int err);
bool bench_setup_error_is_skip(const struct t_calls *eng, int err);
void bench_report_ratio_to(const struct bench_ctx *ctx, const char *bench,
			   const char *variant, const char *what, double a,
			   double b);
double bench_getppid_ns(bool smoke);
void bench_report_getppid(const struct bench_ctx *ctx, const char *bench);
void bench_watchdog(unsigned int seconds, const char *what);

int bench_preload_path(char *out, size_t len);

#endif /* NW_BENCH_H */
