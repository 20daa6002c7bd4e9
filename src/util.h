/* SPDX-License-Identifier: MIT */
/* Process-wide helpers (util.c): the bottom floor, calling nothing above. */
#ifndef NW_UTIL_H
#define NW_UTIL_H

#include <stddef.h>
#include <time.h>
#include <sys/types.h>
#include <linux/time_types.h>

#define NW_BUG_ON(c) ((c) ? nw_bug(__FILE__, __LINE__, #c) : (void)0)

void nw_bug(const char *file, int line, const char *cond)
	__attribute__((noreturn));

/* Turn a libc -1/errno result into -errno, at the syscall boundary. */
int nw_err(long r);

/* The calling thread's id, cached (gettid is a system call). */
pid_t nw_gettid(void);
/* The process id, cached; both caches are reset in a forked child. */
pid_t nw_getpid(void);
/* Installs the fork handlers (once). */
void nw_register_atfork(void);

/* Read user memory that the kernel would copy_from_user: -EFAULT, not a
 * crash, on a bad pointer. */
int nw_copy_from_user(void *dst, const void *src, size_t len);
int nw_copy_to_user(void *dst, const void *src, size_t len);

/* The last second a deadline may name (saturated there). */
#define NW_DEADLINE_MAX_SEC (LLONG_MAX / 1000000000LL - 1)

/*
 * CLOCK_MONOTONIC now plus ts (a negative part counts as zero), saturated
 * as the kernel's timespec64_to_ktime does: it always fits in a long long
 * of nanoseconds (nw_ts_ns).
 */
struct timespec nw_deadline(const struct __kernel_timespec *ts);
static inline long long nw_ts_ns(const struct timespec *t)
{
	return t->tv_sec * 1000000000LL + t->tv_nsec;
}

#endif
