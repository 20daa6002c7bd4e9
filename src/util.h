/* SPDX-License-Identifier: MIT */
/* Process-wide helpers (util.c): the bottom floor, calling nothing above. */
#ifndef NW_UTIL_H
#define NW_UTIL_H

#include <signal.h>
#include <stdbool.h>
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
extern __thread pid_t nw_cached_tid __attribute__((tls_model("initial-exec")));
pid_t nw_gettid_slow(void);
static inline pid_t nw_gettid(void)
{
	pid_t tid = nw_cached_tid;

	return __builtin_expect(tid != 0, 1) ? tid : nw_gettid_slow();
}
/* The process id, cached; both caches are reset in a forked child. */
pid_t nw_getpid(void);
/* Installs the fork handlers (once). */
void nw_register_atfork(void);

/*
 * Every signal but the synchronous ones (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGSYS): what engine threads and waits block. A fault must run
 * its handler (a sanitizer's report) or kill, never hang blocked.
 */
void nw_sigfill_async(sigset_t *set);

/*
 * The signals of an enter(GETEVENTS) held from its submit part on (the
 * kernel leaves a signal that arrives then pending for the wait, which
 * says -EINTR). enter keeps one on its thread and points nw_sighold_cur
 * at it; the submit path holds them before a request or a harvest that
 * could let one run unseen while the wait may still sleep (submit.c's
 * sighold_before), nw_wait uses what was saved, and enter restores.
 */
struct nw_sighold {
	bool held;
	bool looked;	      /* the submit part harvested (submit_end) */
	unsigned int cq_need; /* CQEs that end the wait (min_complete) */
	sigset_t old;	      /* the thread's mask before, when held */
};
extern __thread struct nw_sighold *nw_sighold_cur
	__attribute__((tls_model("initial-exec")));
void nw_sighold_block(struct nw_sighold *sh);
void nw_sighold_release(struct nw_sighold *sh);

/*
 * A writer into a pipe or socket without readers gets SIGPIPE, which the
 * kernel's io-wq worker takes itself, blocked: where the kernel's write
 * runs there, the engine's call runs with SIGPIPE blocked and takes back
 * the one it raised (nw_sigpipe_drop), unless one was already pending
 * before the call (nw_sigpipe_pending: the program's, the call's merged
 * into it), which stays.
 */
bool nw_sigpipe_pending(void);
void nw_sigpipe_drop(bool was_pending);

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
