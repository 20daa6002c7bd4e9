/* SPDX-License-Identifier: MIT */
/*
 * Per-ring request statistics (stats.c), NOWAIT_STATS=1|table|json: at exit
 * (a ring freed before: at its release), and on SIGUSR2 (if the program
 * leaves it at its default), per ring,
 * requests by opcode and by path, p50/p99/max latency per opcode, parks,
 * reissues, worker punts, CQ overflows, spin hits and misses. They ride on
 * the trace's record of each request (trace.c).
 */
#ifndef NW_STATS_H
#define NW_STATS_H

#include "internal.h"

#ifdef NW_NO_TRACE
static inline bool nw_stats_init(void)
{
	return false;
}
static inline void nw_stats_ring(struct nw_ring *ring)
{
}
static inline void nw_stats_ring_gone(struct nw_ring *ring)
{
}
#else
/* Read NOWAIT_STATS once: whether statistics are kept. */
bool nw_stats_init(void);
/* Give a new ring its counters (setup, when nw_stats_init said yes). */
void nw_stats_ring(struct nw_ring *ring);
/* A ring is being freed (setup.c): report its table now and drop it. */
void nw_stats_ring_gone(struct nw_ring *ring);
/* A request's last CQE: count it. Submit side of ring. */
void nw_stats_done(struct nw_ring *ring, unsigned int opcode, unsigned int path,
		   long long lat_ns);
#endif

#endif
