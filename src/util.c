/* SPDX-License-Identifier: MIT */
/*
 * Small process-wide helpers every floor may use: the BUG check, errno at
 * the system-call boundary, the cached thread and process ids (reset in a
 * forked child), fault-safe copies of user memory, and deadlines.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include "internal.h"

__thread pid_t nw_cached_tid __attribute__((tls_model("initial-exec")));
static pid_t cached_pid;

void nw_bug(const char *file, int line, const char *cond)
{
	fprintf(stderr, "nowait: BUG at %s:%d: %s\n", file, line, cond);
	abort();
}

static void sigfill_async_make(sigset_t *set)
{
	sigfillset(set);
	sigdelset(set, SIGSEGV);
	sigdelset(set, SIGBUS);
	sigdelset(set, SIGFPE);
	sigdelset(set, SIGILL);
	sigdelset(set, SIGTRAP);
	sigdelset(set, SIGSYS);
}

/*
 * Made once (every enter that holds the signals asks): the first caller
 * claims the copy and publishes it; a caller meanwhile makes its own.
 */
void nw_sigfill_async(sigset_t *set)
{
	static sigset_t async_set;
	static int state; /* 0 unmade, 1 being made, 2 made */
	int zero = 0;

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 2) {
		*set = async_set;
		return;
	}
	sigfill_async_make(set);
	if (__atomic_compare_exchange_n(&state, &zero, 1, false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		async_set = *set;
		__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
	}
}

__thread struct nw_sighold *nw_sighold_cur
	__attribute__((tls_model("initial-exec")));

void nw_sighold_block(struct nw_sighold *sh)
{
	sigset_t all;

	nw_sigfill_async(&all);
	pthread_sigmask(SIG_BLOCK, &all, &sh->old);
	sh->held = true;
}

void nw_sighold_release(struct nw_sighold *sh)
{
	if (sh->held)
		pthread_sigmask(SIG_SETMASK, &sh->old, NULL);
	sh->held = false;
}

bool nw_sigpipe_pending(void)
{
	sigset_t set;

	return !sigpending(&set) && sigismember(&set, SIGPIPE) == 1;
}

void nw_sigpipe_drop(bool was_pending)
{
	static const struct timespec zero;
	sigset_t set;

	if (was_pending)
		return;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigtimedwait(&set, NULL, &zero);
}

int nw_err(long r)
{
	return r < 0 ? -errno : (int)r;
}

pid_t nw_gettid_slow(void)
{
	nw_cached_tid = (pid_t)syscall(SYS_gettid);
	return nw_cached_tid;
}

static void after_fork_child(void)
{
	nw_cached_tid = 0;
	__atomic_store_n(&cached_pid, 0, __ATOMIC_RELAXED);
}

/*
 * Set only after the fork handler that clears it is registered (the
 * release store), so a cached pid seen by an acquire load needs no
 * pthread_once: one load on every enter.
 */
pid_t nw_getpid(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pid_t pid = __atomic_load_n(&cached_pid, __ATOMIC_ACQUIRE);

	if (likely(pid))
		return pid;
	pthread_once(&once, nw_register_atfork);
	pid = getpid();
	__atomic_store_n(&cached_pid, pid, __ATOMIC_RELEASE);
	return pid;
}

void nw_register_atfork(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

/* copy_from_user: a bad pointer gives -EFAULT instead of a crash. */
int nw_copy_from_user(void *dst, const void *src, size_t len)
{
	struct iovec local = {dst, len}, remote = {(void *)src, len};

	if (!src)
		return -EFAULT;
	if (process_vm_readv(nw_getpid(), &local, 1, &remote, 1, 0) !=
	    (ssize_t)len)
		return -EFAULT;
	return 0;
}

int nw_copy_to_user(void *dst, const void *src, size_t len)
{
	struct iovec local = {(void *)src, len}, remote = {dst, len};

	if (!dst)
		return -EFAULT;
	if (process_vm_writev(nw_getpid(), &local, 1, &remote, 1, 0) !=
	    (ssize_t)len)
		return -EFAULT;
	return 0;
}

/* Past any real wait, and still in range as nanoseconds. */

struct timespec nw_deadline(const struct __kernel_timespec *ts)
{
	long long sec = ts->tv_sec, nsec = ts->tv_nsec;
	struct timespec d;

	if (sec < 0 || nsec < 0)
		sec = nsec = 0;
	clock_gettime(CLOCK_MONOTONIC, &d);
	if (sec > NW_DEADLINE_MAX_SEC - d.tv_sec - nsec / 1000000000 - 1) {
		d.tv_sec = NW_DEADLINE_MAX_SEC;
		d.tv_nsec = 0;
		return d;
	}
	d.tv_sec += sec + nsec / 1000000000;
	d.tv_nsec += nsec % 1000000000;
	if (d.tv_nsec >= 1000000000) {
		d.tv_sec++;
		d.tv_nsec -= 1000000000;
	}
	return d;
}

__thread unsigned int nw_in_engine __attribute__((tls_model("initial-exec")));
