/* SPDX-License-Identifier: MIT */
/*
 * libnowait-preload.so, the pipe spinner (the io_uring route is route.c):
 * busy-wait before sleep on pipes, for blocking programs (the 2018 "pipe
 * busy wait" RFC, in user space).
 *
 *   NOWAIT_PIPE_SPIN_US=N         spin up to N microseconds (1..1000)
 *   NOWAIT_PIPE_SPIN_US=adaptive  a per-thread budget learnt from what the
 *                                 thread observes (below)
 *   unset, empty or 0             off: every call goes straight through
 *
 * A blocking read on an empty pipe (or a blocking write on a full one) is
 * first tried nonblocking: preadv2/pwritev2(RWF_NOWAIT, offset -1), which
 * anonymous pipes accept since Linux 6.4; FIFOs answer EOPNOTSUPP and are
 * then watched with poll(fd, 0) instead. While it would block, the attempt
 * is repeated (a system call per iteration, a pause in between) until the
 * budget is spent; then the plain blocking call runs. What the call returns,
 * errno included, is what the plain call would return: EOF, EPIPE and
 * SIGPIPE come from the same kernel paths, a write of <= PIPE_BUF bytes is
 * never split (a nonblocking pipe write that cannot take it whole takes
 * none of it), a partly done larger write is finished by the blocking call
 * and counted, errno is preserved on success. Everything that is not a
 * blocking pipe or FIFO (O_NONBLOCK pipes included) goes straight through.
 * One difference is inherent to doing this outside the kernel: a signal
 * whose handler runs during the (bounded, microseconds) spin does not
 * interrupt the call, as if the handler had SA_RESTART.
 *
 * The fd classification (fstat + fcntl(F_GETFL)) is cached per fd number
 * and forgotten by close, dup2, dup3, pipe and pipe2; an entry that went
 * stale behind our back corrects itself (a "blocking" pipe whose blocking
 * call returns EAGAIN is reclassified).
 *
 * Adaptive policy, per thread (see adapt_*()): every blocking pipe call
 * measures how long it waited: W = time until a spin succeeded, or the
 * whole call when it slept (the plain call is timed even when the budget
 * is 0, so the thread learns without spinning). A decaying histogram of W
 * (power-of-two microsecond buckets; under 2 us is no wait) gives, for
 * each candidate budget B,
 * the chance a spin of B succeeds and the CPU it burns; the budget chosen
 * is the one that maximises (sleeps avoided x cost of a sleep) - (CPU
 * burnt spinning x contention weight), capped at 32 us. The contention
 * weight rises when the thread's involuntary context switches grow while
 * it spins (others wanted the CPU). And no thread spins while tasks wait
 * for a CPU (src/pressure.c: the kernel's CPU pressure over the last
 * ~20 ms), nor while the thread itself waited for one lately (its own
 * run-queue delay over ~5 ms windows): the peer it waits for is then
 * likely queued behind it. A
 * budget of 0 is re-examined as new waits are measured (no spinning
 * needed to learn).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <nowait-hook.h>

#define PUBLIC __attribute__((visibility("default")))
#define TLS    __thread __attribute__((tls_model("initial-exec")))

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif

enum spin_mode { SPIN_OFF, SPIN_FIXED, SPIN_ADAPTIVE };

static int spin_mode;
static uint64_t spin_fixed_ns;
static int spin_stats;

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*readv_fn)(int, const struct iovec *, int);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef int (*close_fn)(int);
typedef int (*dup2_fn)(int, int);
typedef int (*dup3_fn)(int, int, int);
typedef int (*close_range_fn)(unsigned int, unsigned int, int);
typedef void (*closefrom_fn)(int);
typedef int (*pipe_fn)(int[2]);
typedef int (*pipe2_fn)(int[2], int);
typedef int (*eventfd_write_fn)(int, eventfd_t);

static read_fn real_read;
static write_fn real_write;
static readv_fn real_readv;
static writev_fn real_writev;
static close_fn real_close;
static dup2_fn real_dup2;
static dup3_fn real_dup3;
static close_range_fn real_close_range;
static closefrom_fn real_closefrom;
static pipe_fn real_pipe;
static pipe2_fn real_pipe2;
static eventfd_write_fn real_eventfd_write;

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void resolve(void)
{
	real_read = (read_fn)next_sym("read");
	real_write = (write_fn)next_sym("write");
	real_readv = (readv_fn)next_sym("readv");
	real_writev = (writev_fn)next_sym("writev");
	real_close = (close_fn)next_sym("close");
	real_dup2 = (dup2_fn)next_sym("dup2");
	real_dup3 = (dup3_fn)next_sym("dup3");
	real_close_range = (close_range_fn)next_sym("close_range");
	real_closefrom = (closefrom_fn)next_sym("closefrom");
	real_pipe = (pipe_fn)next_sym("pipe");
	real_pipe2 = (pipe2_fn)next_sym("pipe2");
	real_eventfd_write = (eventfd_write_fn)next_sym("eventfd_write");
}

/* Called before our constructor ran (another library's constructor). */
#define ENSURE(fn)                              \
	do {                                    \
		if (__builtin_expect(!(fn), 0)) \
			resolve();              \
	} while (0)

/* ---- fd classification cache ------------------------------------------ */

enum fd_class {
	FD_UNKNOWN = 0,
	FD_OTHER,     /* not a blocking pipe: straight through */
	FD_PIPE,      /* blocking pipe, RWF_NOWAIT works */
	FD_PIPE_POLL, /* blocking FIFO (or RWF_NOWAIT refused): poll(0) */
};

#define FD_CACHE 65536
static unsigned char fd_cache[FD_CACHE];

static inline void fd_forget(int fd)
{
	if ((unsigned int)fd < FD_CACHE)
		__atomic_store_n(&fd_cache[fd], FD_UNKNOWN, __ATOMIC_RELAXED);
}

static void fd_forget_range(unsigned int first, unsigned int last)
{
	for (unsigned int fd = first; fd < FD_CACHE && fd <= last; fd++)
		fd_forget((int)fd);
}

static inline void fd_set_class(int fd, int c)
{
	if ((unsigned int)fd < FD_CACHE)
		__atomic_store_n(&fd_cache[fd], (unsigned char)c,
				 __ATOMIC_RELAXED);
}

static int fd_classify(int fd)
{
	int saved = errno, fl, c = FD_OTHER;
	struct stat st;

	fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && !(fl & O_NONBLOCK) && !fstat(fd, &st) &&
	    S_ISFIFO(st.st_mode))
		c = FD_PIPE;
	errno = saved;
	if (fl < 0) /* a bad fd: not cached, the plain call reports it */
		return FD_OTHER;
	fd_set_class(fd, c);
	return c;
}

static inline int fd_class(int fd)
{
	int c;

	if ((unsigned int)fd >= FD_CACHE)
		return FD_OTHER;
	c = __atomic_load_n(&fd_cache[fd], __ATOMIC_RELAXED);
	return c ? c : fd_classify(fd);
}

/* ---- clocks and pauses -------------------------------------------------- */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* ---- adaptive policy ----------------------------------------------------- */

/*
 * Wait-time histogram buckets: bucket i holds waits in [2^(i-1), 2^i) us
 * (bucket 0: < 1 us, which is "did not wait"); the last one is "long".
 * Weights decay by 1/8 every ADAPT_EPOCH samples.
 */
#define NB_BUCKETS    8 /* <1, 1-2, 2-4, 4-8, 8-16, 16-32, 32-64, >=64 */
#define ADAPT_EPOCH   64
#define ADAPT_CAP_US  32
#define SLEEP_COST_US 6 /* a sleep + wakeup, both sides, on this class of VM */

struct adapt {
	uint32_t hist[NB_BUCKETS]; /* fixed point, x16 per sample */
	uint32_t samples;	   /* since the last recomputation */
	uint32_t budget_ns;
	uint32_t contention; /* 0..16: weight of burnt CPU, /4 */
	long nivcsw;	     /* at the last check */
	uint32_t spins_since_check;
	uint32_t quiet_calls; /* calls without a budget, for sampling */
	uint64_t last_load_ns;
	int inited;
	/* stats (NOWAIT_PIPE_SPIN_STATS=1) */
	uint64_t n_calls, n_spins, n_spin_ok, n_slept, spin_ns_total;
	uint64_t n_vetoed, fail_ns_total; /* budgets not used; failed spins */
};

static TLS struct adapt ad;

static inline int bucket_of(uint64_t ns)
{
	uint64_t us = ns / 1000;
	int b = 0;

	while (us && b < NB_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	return b;
}

static void adapt_recompute(void)
{
	uint64_t tot = 0, below = 0, burnt = 0, best_gain = 0, now;
	uint32_t best = 0, contention;
	int b, i;

	for (b = 0; b < NB_BUCKETS; b++)
		tot += ad.hist[b];
	if (!tot)
		return;
	/*
	 * Tasks are waiting for a CPU (this thread among them, lately): the
	 * peer this thread waits for most likely needs this very CPU, so
	 * spinning only delays it (the RFC's losses at many groups). Do not
	 * spin.
	 */
	now = now_ns();
	if (nowait_hook_cpu_busy(now) || nowait_hook_thread_queued(now)) {
		ad.budget_ns = 0;
		for (b = 0; b < NB_BUCKETS; b++)
			ad.hist[b] -= ad.hist[b] / 8;
		return;
	}
	contention = ad.contention;
	/*
	 * Waits under 2 us did not wait (the call's own cost) and count
	 * for nothing. Candidate budget B = 2^i us (i = 2..5). Waits below B
	 * are
	 * sleeps avoided (each worth SLEEP_COST_US) at the price of their
	 * own length in CPU; waits longer than B burn B and still sleep.
	 * The CPU is charged at (1 + contention/4): free CPUs make spinning
	 * cheap, runnable peers make it expensive.
	 */
	for (i = 2; (1u << i) <= ADAPT_CAP_US; i++) {
		uint64_t bud = 1u << i, gain, cost;

		below = 0;
		burnt = 0;
		for (b = 2; b <= i && b < NB_BUCKETS; b++) {
			/* bucket b: [2^(b-1), 2^b): charge its midpoint */
			below += ad.hist[b];
			burnt += ad.hist[b] * (3u << b) / 4;
		}
		burnt += (tot - ad.hist[0] - ad.hist[1] - below) * bud;
		gain = below * SLEEP_COST_US * 4;
		cost = burnt * (4 + contention);
		if (gain > cost && gain - cost > best_gain) {
			best_gain = gain - cost;
			best = (uint32_t)bud * 1000;
		}
	}
	ad.budget_ns = best;
	for (b = 0; b < NB_BUCKETS; b++)
		ad.hist[b] -= ad.hist[b] / 8;
}

static void adapt_init(void)
{
	ad.inited = 1;
	ad.budget_ns = 0; /* learn from the plain calls first */
	ad.nivcsw = -1;
}

static inline void adapt_record(uint64_t waited_ns)
{
	ad.hist[bucket_of(waited_ns)] += 16;
	if (++ad.samples >= ADAPT_EPOCH) {
		ad.samples = 0;
		adapt_recompute();
	}
}

/*
 * After a spin: every 16 spins, were we preempted while spinning? Then
 * others want this CPU: raise the contention weight, else let it decay.
 */
static void adapt_after_spin(void)
{
	struct rusage ru;
	long d;

	if (++ad.spins_since_check < 16)
		return;
	if (getrusage(RUSAGE_THREAD, &ru))
		return;
	d = ad.nivcsw < 0 ? 0 : ru.ru_nivcsw - ad.nivcsw;
	ad.nivcsw = ru.ru_nivcsw;
	/* more than one preemption per 8 spins: contended */
	if (d * 8 > (long)ad.spins_since_check)
		ad.contention = ad.contention + 4 > 16 ? 16 : ad.contention + 4;
	else if (ad.contention)
		ad.contention--;
	ad.spins_since_check = 0;
}

static inline uint64_t budget_ns(void)
{
	if (spin_mode == SPIN_FIXED)
		return spin_fixed_ns;
	if (__builtin_expect(!ad.inited, 0))
		adapt_init();
	return ad.budget_ns;
}

/*
 * Straight through, without even classifying the fd: spinning is off, or
 * adaptive has no budget (the CPUs are busy, or the thread's waits are
 * too long to spin for), whatever the CPU verdict: one call in 16 still
 * goes the long way, to keep learning, and that is how a budget comes
 * back. Timing every call while the verdict was free cost a blocking
 * program 386 instructions per write+read pair over spin 0 (callgrind),
 * without a single spin; now 49.
 */
static inline bool pass_through(void)
{
	if (__builtin_expect(spin_mode == SPIN_OFF, 1))
		return true;
	return spin_mode == SPIN_ADAPTIVE && ad.inited && !ad.budget_ns &&
	       (++ad.quiet_calls & 15);
}

/* ---- the spinning call ----------------------------------------------------
 *
 * nb(): one nonblocking attempt on iov (>= 0, or -1 with errno).
 */
static ssize_t nb_attempt(int fd, const struct iovec *iov, int cnt, int wr,
			  int cls)
{
	struct pollfd pfd;
	int r;

	if (cls == FD_PIPE)
		return wr ? pwritev2(fd, iov, cnt, -1, RWF_NOWAIT)
			  : preadv2(fd, iov, cnt, -1, RWF_NOWAIT);
	pfd.fd = fd;
	pfd.events = wr ? POLLOUT : POLLIN;
	pfd.revents = 0;
	r = poll(&pfd, 1, 0);
	if (r == 0) {
		errno = EAGAIN;
		return -1;
	}
	return 0; /* ready (or an error to report): "go" */
}

static ssize_t plain_call(int fd, const struct iovec *iov, int cnt, int wr)
{
	if (cnt == 1)
		return wr ? real_write(fd, iov[0].iov_base, iov[0].iov_len)
			  : real_read(fd, iov[0].iov_base, iov[0].iov_len);
	return wr ? real_writev(fd, iov, cnt) : real_readv(fd, iov, cnt);
}

#define MAX_IOV 64

/* Skip done bytes of iov into out[]; returns the count. */
static int iov_advance(const struct iovec *iov, int cnt, size_t done,
		       struct iovec *out)
{
	int i, n = 0;

	for (i = 0; i < cnt; i++) {
		if (done >= iov[i].iov_len) {
			done -= iov[i].iov_len;
			continue;
		}
		out[n].iov_base = (char *)iov[i].iov_base + done;
		out[n].iov_len = iov[i].iov_len - done;
		done = 0;
		n++;
	}
	return n;
}

static ssize_t spin_io(int fd, const struct iovec *iov, int cnt, int wr,
		       size_t total)
{
	int cls = fd_class(fd), saved = errno, e;
	uint64_t bud, start, now, deadline;
	struct iovec rest[MAX_IOV];
	const struct iovec *cur = iov;
	int curcnt = cnt, spun = 0;
	size_t done = 0;
	ssize_t r;

	if (cls == FD_OTHER || cnt > MAX_IOV || total == 0)
		return plain_call(fd, iov, cnt, wr);
	bud = budget_ns();
	if (spin_stats)
		ad.n_calls++;
	start = now_ns();
	/* adaptive: never while other tasks wait for the CPUs */
	if (bud && spin_mode == SPIN_ADAPTIVE &&
	    (nowait_hook_cpu_busy(start) || nowait_hook_thread_queued(start))) {
		bud = 0;
		ad.n_vetoed += (uint64_t)spin_stats;
	}
	if (bud == 0) {
		/* adaptive, spinning does not pay now: still learn */
		if (spin_mode != SPIN_ADAPTIVE)
			return plain_call(fd, iov, cnt, wr);
		r = plain_call(fd, iov, cnt, wr);
		adapt_record(now_ns() - start);
		return r;
	}
	deadline = start + bud;
	for (;;) {
		r = nb_attempt(fd, cur, curcnt, wr, cls);
		if (r < 0 && errno == EOPNOTSUPP && cls == FD_PIPE) {
			/* a FIFO: readiness instead of RWF_NOWAIT */
			cls = FD_PIPE_POLL;
			fd_set_class(fd, cls);
			continue;
		}
		if (cls == FD_PIPE_POLL && r == 0)
			break; /* ready: the plain call does the I/O */
		if (r >= 0) {
			if (!wr)
				goto out_done; /* done is 0 for reads */
			done += (size_t)r;
			if (done >= total || r == 0) {
				r = 0; /* out_done adds done */
				goto out_done;
			}
			/* a partial write (> PIPE_BUF): keep going */
			curcnt = iov_advance(iov, cnt, done, rest);
			cur = rest;
			continue;
		}
		if (errno != EAGAIN) {
			if (done) /* the blocking write reports progress */
				goto out_progress;
			goto out_err;
		}
		now = now_ns();
		if (now >= deadline)
			break;
		spun = 1;
		cpu_relax();
		cpu_relax();
	}
	/* the budget is spent (or a FIFO is ready): block as the plain call */
	if (spin_stats) {
		ad.n_slept++;
		if (spun)
			ad.fail_ns_total += now_ns() - start;
	}
	errno = saved;
	r = plain_call(fd, cur, curcnt, wr);
	if (r < 0) {
		e = errno;
		if (e == EAGAIN) /* it is nonblocking after all */
			fd_set_class(fd, FD_OTHER);
		if (done)
			goto out_progress;
		errno = e;
	} else {
		r += (ssize_t)done;
	}
	if (spin_mode == SPIN_ADAPTIVE) {
		now = now_ns();
		adapt_record(now - start);
		if (spun)
			adapt_after_spin();
	}
	return r;

out_done:
	r += (ssize_t)done;
	if (spin_mode == SPIN_ADAPTIVE || spin_stats) {
		now = now_ns();
		if (spun) {
			if (spin_stats) {
				ad.n_spins++;
				ad.n_spin_ok++;
				ad.spin_ns_total += now - start;
			}
		}
		if (spin_mode == SPIN_ADAPTIVE) {
			adapt_record(now - start);
			if (spun)
				adapt_after_spin();
		}
	}
	errno = saved;
	return r;
out_progress:
	errno = saved;
	return (ssize_t)done;
out_err:
	return r;
}

/* ---- the interposers ------------------------------------------------------ */

int nw_preload_ring_read(int fd); /* route.c */
void nw_preload_fd_closing(int fd);
void nw_preload_wrote(void);
void nw_preload_fd_range_closing(unsigned int first, unsigned int last);
void nw_readiness_dup(int oldfd, int newfd); /* readiness.c */

PUBLIC ssize_t read(int fd, void *buf, size_t count)
{
	struct iovec iov;

	ENSURE(real_read);
	if (__builtin_expect(nw_preload_ring_read(fd), 0)) {
		errno = EINVAL; /* no read on an io_uring fd */
		return -1;
	}
	if (pass_through())
		return real_read(fd, buf, count);
	iov.iov_base = buf;
	iov.iov_len = count;
	return spin_io(fd, &iov, 1, 0, count);
}

/* After a write that took something: the engine's wake-up (route.c). */
static ssize_t wrote(ssize_t r)
{
	if (r > 0) {
		int e = errno;

		nw_preload_wrote();
		errno = e;
	}
	return r;
}

PUBLIC ssize_t write(int fd, const void *buf, size_t count)
{
	struct iovec iov;

	ENSURE(real_write);
	if (pass_through())
		return wrote(real_write(fd, buf, count));
	iov.iov_base = (void *)buf;
	iov.iov_len = count;
	return wrote(spin_io(fd, &iov, 1, 1, count));
}

/* glibc's eventfd_write calls its own write, not the interposed one. */
PUBLIC int eventfd_write(int fd, eventfd_t value)
{
	int r;

	ENSURE(real_eventfd_write);
	r = real_eventfd_write(fd, value);
	if (r == 0)
		wrote(1);
	return r;
}

static size_t iov_total(const struct iovec *iov, int cnt, int *ok)
{
	size_t t = 0;
	int i;

	*ok = cnt > 0 && cnt <= MAX_IOV;
	for (i = 0; *ok && i < cnt; i++) {
		if (iov[i].iov_len > SSIZE_MAX - t)
			*ok = 0;
		else
			t += iov[i].iov_len;
	}
	return t;
}

PUBLIC ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	size_t t;
	int ok;

	ENSURE(real_readv);
	if (pass_through())
		return real_readv(fd, iov, cnt);
	t = iov_total(iov, cnt, &ok);
	if (!ok) /* let the kernel report EINVAL/EFAULT */
		return real_readv(fd, iov, cnt);
	return spin_io(fd, iov, cnt, 0, t);
}

PUBLIC ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	size_t t;
	int ok;

	ENSURE(real_writev);
	if (pass_through())
		return wrote(real_writev(fd, iov, cnt));
	t = iov_total(iov, cnt, &ok);
	if (!ok)
		return real_writev(fd, iov, cnt);
	return wrote(spin_io(fd, iov, cnt, 1, t));
}

/* _FORTIFY_SOURCE builds call __read_chk for read(). */
PUBLIC ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen);
PUBLIC ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen)
{
	if (count > buflen)
		abort(); /* what glibc's __chk_fail amounts to */
	return read(fd, buf, count);
}

PUBLIC int close(int fd)
{
	ENSURE(real_close);
	fd_forget(fd);
	nw_preload_fd_closing(fd); /* before: the engine may keep the file */
	return real_close(fd);
}

PUBLIC int dup2(int oldfd, int newfd)
{
	int r;

	ENSURE(real_dup2);
	if (oldfd != newfd)
		nw_preload_fd_closing(newfd);
	r = real_dup2(oldfd, newfd);
	if (r >= 0) {
		fd_forget(r);
		nw_readiness_dup(oldfd, r);
	}
	return r;
}

PUBLIC int dup3(int oldfd, int newfd, int flags)
{
	int r;

	ENSURE(real_dup3);
	if (oldfd != newfd)
		nw_preload_fd_closing(newfd);
	r = real_dup3(oldfd, newfd, flags);
	if (r >= 0) {
		fd_forget(r);
		nw_readiness_dup(oldfd, r);
	}
	return r;
}

PUBLIC int close_range(unsigned int first, unsigned int last, int flags)
{
	ENSURE(real_close_range);
	if (!real_close_range) {
		errno = ENOSYS;
		return -1;
	}
	if (!(flags & CLOSE_RANGE_CLOEXEC) && first <= last) {
		fd_forget_range(first, last);
		nw_preload_fd_range_closing(first, last);
	}
	return real_close_range(first, last, flags);
}

PUBLIC void closefrom(int lowfd)
{
	ENSURE(real_closefrom);
	if (lowfd >= 0) {
		fd_forget_range((unsigned int)lowfd, ~0U);
		nw_preload_fd_range_closing((unsigned int)lowfd, ~0U);
	}
	if (real_closefrom)
		real_closefrom(lowfd);
}

PUBLIC int pipe(int fds[2])
{
	int r;

	ENSURE(real_pipe);
	r = real_pipe(fds);
	if (!r) {
		fd_forget(fds[0]);
		fd_forget(fds[1]);
	}
	return r;
}

PUBLIC int pipe2(int fds[2], int flags)
{
	int r;

	ENSURE(real_pipe2);
	r = real_pipe2(fds, flags);
	if (!r) {
		fd_forget(fds[0]);
		fd_forget(fds[1]);
	}
	return r;
}

/* ---- set-up ---------------------------------------------------------------- */

static void print_stats(void)
{
	char line[256];
	int n;

	if (!ad.n_calls)
		return;
	n = snprintf(line, sizeof(line),
		     "nowait-preload[%d]: pipe calls %llu spins-ok %llu "
		     "slept %llu avg-ok-spin %.2f us budget %u ns "
		     "contention %u/16 cpu-busy %d failed-spins-us %.1f "
		     "vetoed %llu\n",
		     (int)getpid(), (unsigned long long)ad.n_calls,
		     (unsigned long long)ad.n_spin_ok,
		     (unsigned long long)ad.n_slept,
		     ad.n_spin_ok ? ad.spin_ns_total / 1e3 / ad.n_spin_ok : 0.0,
		     ad.budget_ns, ad.contention,
		     nowait_hook_cpu_busy(now_ns()), ad.fail_ns_total / 1e3,
		     (unsigned long long)ad.n_vetoed);
	if (n > 0)
		real_write(2, line, (size_t)n);
}

__attribute__((constructor)) static void preload_pipespin_init(void)
{
	const char *s = getenv("NOWAIT_PIPE_SPIN_US"), *st;
	char *end;
	long v;

	resolve();
	if (!s || !*s)
		return;
	if (!strcmp(s, "adaptive")) {
		spin_mode = SPIN_ADAPTIVE;
		/* forked children share one view of the CPUs (pressure.c) */
		nowait_hook_pressure_share();
		nowait_hook_cpu_busy(now_ns());
	} else {
		v = strtol(s, &end, 10);
		if (*end || v <= 0)
			return; /* 0 or unparsable: off */
		if (v > 1000)
			v = 1000;
		spin_fixed_ns = (uint64_t)v * 1000;
		spin_mode = SPIN_FIXED;
	}
	st = getenv("NOWAIT_PIPE_SPIN_STATS");
	if (st && *st == '1') {
		spin_stats = 1;
		atexit(print_stats);
	}
}
