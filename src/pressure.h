/* SPDX-License-Identifier: MIT */
/*
 * CPU contention as the spin policies see it (pressure.c): true when
 * runnable tasks waited for a CPU a good part of the last ~20 ms.
 */
#ifndef NW_PRESSURE_H
#define NW_PRESSURE_H

#include <stdbool.h>
#include <stdint.h>

/* now_ns: CLOCK_MONOTONIC now, which the caller has at hand. */
bool nw_cpu_busy(uint64_t now_ns);
/*
 * Keep the state in a shared page: forked children sample together. The
 * engine does not call it: it exists for nowait_hook_pressure_share()
 * (include/nowait-hook.h), which the preload's pipe spinner calls.
 */
void nw_pressure_share(void);
/* The last verdict, without looking at the clock (may be stale). */
bool nw_cpu_busy_cached(void);
/*
 * The calling thread's own view: true while it waited for a CPU more than
 * a tenth of a recent window (its schedstat run_delay), and for a while
 * after; reads /proc at most once per 5 ms window.
 */
bool nw_thread_queued(uint64_t now_ns);

#endif
