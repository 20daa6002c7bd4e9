/* SPDX-License-Identifier: MIT */
/*
 * Does other runnable work want the CPUs? The question every spin-before-
 * sleep policy must ask: a thread that spins while tasks wait for a CPU
 * delays them, and on a small machine the task it delays is usually the
 * very peer it waits for (the 2018 pipe busy-wait RFC lost up to 100% on
 * hackbench with many groups for this reason).
 *
 * The answer comes from the kernel's pressure stall information: the
 * "some" line of /proc/pressure/cpu counts, in microseconds, the time at
 * least one runnable task waited for a CPU (monotonic, and brought up to
 * date by the read itself). Its growth over the last interval, divided by
 * the interval, is the share of time the CPUs were oversubscribed. It is
 * sampled by whichever thread of the process asks first after
 * NW_PRESSURE_INTERVAL_NS (one pread, shared by all threads: the file is
 * opened once, kept high, and read again at offset 0, which makes its
 * seq_file show the totals afresh); everyone else reads the cached
 * verdict. A window over the threshold
 * makes the verdict "busy" at once; it goes back to "free" when the
 * windows' moving figure, which falls with a time constant of
 * NW_PRESSURE_DECAY_NS, drops under it: about 150 ms after the load ends.
 * (The kernel's avg10 would keep it busy for 10-20 s after a burst.)
 * Without PSI (kernels built without it, psi=0) the runnable count of
 * /proc/loadavg stands in: busy when more tasks are runnable than there
 * are CPUs.
 *
 * Until two samples exist the verdict is "busy": a policy starts by not
 * spinning and only spins once it knows the CPUs are free.
 *
 * PSI sees the whole machine, over windows: a verdict that turned free
 * while a family of busy processes (hackbench's) keeps the CPUs full lets
 * them spin until the next window shows the stall their own spinning made.
 * nw_thread_queued() asks the thread itself: the run_delay of
 * /proc/thread-self/schedstat (CONFIG_SCHED_INFO) is the time it spent
 * runnable but waiting for a CPU. A thread that waited for one more than
 * NW_QUEUED_PERMILLE of a window of at least NW_QUEUED_WINDOW_NS does not
 * spin for NW_QUEUED_HOLD_NS, and reads the file again only then: at most
 * one read per window while it may spin, one per hold while it may not.
 *
 * NOWAIT_CPU_PRESSURE=PATH names another file of the same format to watch,
 * read once: a cgroup v2 group's cpu.pressure, so that a program in a
 * container asks about its own group's tasks, or a file a test writes to
 * drive the verdict (test/pressure-flip.c).
 *
 * The state can live in a shared page (nw_pressure_share, which the
 * preload library's pipe spinner calls through nowait_hook_pressure_share
 * of include/nowait-hook.h before the program forks), so that a family of
 * forked processes (hackbench's hundreds) takes one sample per interval
 * between them instead of one each: every sample costs a process its
 * first-touch faults on the code and data it needs, expensive on a VM.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "fdhigh.h"
#include "pressure.h"

#ifndef NW_PRESSURE_INTERVAL_NS
#define NW_PRESSURE_INTERVAL_NS 20000000ULL /* 20 ms */
#endif
#ifndef NW_PRESSURE_BUSY_PERMILLE
#define NW_PRESSURE_BUSY_PERMILLE 200 /* stalled 20% of the time */
#endif
#ifndef NW_PRESSURE_DECAY_NS
#define NW_PRESSURE_DECAY_NS 80000000ULL /* 80 ms: idle again in ~150 ms */
#endif

#ifndef NW_QUEUED_WINDOW_NS
#define NW_QUEUED_WINDOW_NS 5000000ULL /* 5 ms */
#endif
#ifndef NW_QUEUED_HOLD_NS
#define NW_QUEUED_HOLD_NS 50000000ULL /* 50 ms */
#endif
#ifndef NW_QUEUED_MAX_WINDOW_NS
#define NW_QUEUED_MAX_WINDOW_NS 1000000000ULL /* older: start again */
#endif
#define NW_QUEUED_PERMILLE 100 /* waited 10% of the window */

enum { SRC_UNKNOWN, SRC_PSI, SRC_LOADAVG };

struct nw_pressure {
	uint64_t sampled_ns; /* when the last sample was taken */
	uint64_t sampling;   /* 0, or when the sampler in charge started */
	uint64_t stall_us;   /* PSI "some" total at the last sample */
	long stall_ewma;     /* stalled permille: up at once, down slowly */
	int source;	     /* SRC_*, decided by the first sample */
	bool busy;	     /* the verdict everyone reads */
};

#define RELAXED_LOAD(x)	    __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define RELAXED_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static struct nw_pressure local = {.stall_ewma = 1000, .busy = true};
static struct nw_pressure *ps = &local;

/* Read a small /proc file into buf (NUL-terminated); bytes or -1. */
static ssize_t read_proc(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, len - 1, 0);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* The pressure file: NOWAIT_CPU_PRESSURE, or the whole machine's. */
static const char *psi_path(void)
{
	static const char *path;
	const char *p = __atomic_load_n(&path, __ATOMIC_RELAXED);

	if (!p) {
		p = getenv("NOWAIT_CPU_PRESSURE");
		if (!p || !*p)
			p = "/proc/pressure/cpu";
		__atomic_store_n(&path, p, __ATOMIC_RELAXED);
	}
	return p;
}

/*
 * The pressure file, kept open: an fd of the engine's range (fdhigh.h),
 * the same after fork (the file is the machine's or a named group's, not
 * the process's), closed at exec. psi_ino and psi_dev say which file it is.
 */
static int psi_fd = -1;
static dev_t psi_dev;
static ino_t psi_ino;

static int psi_open(void)
{
	int fd = nw_fd_hide(open(psi_path(), O_RDONLY | O_CLOEXEC)), cur = -1;
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		close(fd);
		return -1;
	}
	/* Two samplers (one past the 1 s takeover): the first one's stays. */
	if (!__atomic_compare_exchange_n(&psi_fd, &cur, -2, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		close(fd);
		return cur;
	}
	psi_dev = st.st_dev;
	psi_ino = st.st_ino;
	__atomic_store_n(&psi_fd, fd, __ATOMIC_RELEASE);
	return fd;
}

/*
 * Still the pressure file? A program that closes fds it did not open
 * (close_range, closefrom) may have closed it, and its number may name
 * the program's own file since: then it is forgotten, never closed.
 */
static bool psi_still_ours(int fd)
{
	struct stat st;

	if (!fstat(fd, &st) && st.st_dev == psi_dev && st.st_ino == psi_ino)
		return true;
	__atomic_compare_exchange_n(&psi_fd, &fd, -1, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	return false;
}

/*
 * The pressure file's text into buf (NUL-terminated): bytes or -1. One
 * pread at offset 0 of the kept fd: a seq_file starts over there, and
 * PSI's show brings the totals up to date. A read that fails on an fd no
 * longer ours is made again on a fresh open.
 */
static ssize_t read_psi(char *buf, size_t len)
{
	int fd = __atomic_load_n(&psi_fd, __ATOMIC_ACQUIRE);
	ssize_t n;

	for (int tries = 0; tries < 2; tries++) {
		if (fd == -1)
			fd = psi_open();
		if (fd < 0) /* -2: another sampler is opening it */
			return read_proc(psi_path(), buf, len);
		n = pread(fd, buf, len - 1, 0);
		if (n > 0) {
			buf[n] = 0;
			return n;
		}
		if (psi_still_ours(fd))
			return -1;
		fd = -1;
	}
	return -1;
}

/*
 * The "some" line of the pressure file: its total= in microseconds (the
 * kernel brings it up to date when the file is read), or -1.
 */
static long long psi_some_total(void)
{
	char buf[256], *p;
	long long total = 0;

	if (read_psi(buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "some");
	p = p ? strstr(p, "total=") : NULL;
	if (!p)
		return -1;
	for (p += 6; *p >= '0' && *p <= '9'; p++)
		total = total * 10 + (*p - '0');
	return total;
}

/* Runnable tasks minus CPUs, from the "R/T" field of /proc/loadavg. */
static int loadavg_excess(void)
{
	char buf[128], *p;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (read_proc("/proc/loadavg", buf, sizeof(buf)) < 0)
		return 0;
	p = strchr(buf, '/');
	while (p && p > buf && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return p ? atoi(p) - (n > 0 ? (int)n : 1) : 0;
}

/*
 * Fold one window's stalled permille into the moving figure: up at once
 * (a machine that just got busy stops spinning in its first window), down
 * with a time constant of NW_PRESSURE_DECAY_NS, weighted by the window's
 * length (a long window, when nobody asked for a while, says more).
 */
static void fold(uint64_t pm, uint64_t window_ns)
{
	long v = (long)(pm > 1000 ? 1000 : pm);
	long e = RELAXED_LOAD(ps->stall_ewma);
	uint64_t w = window_ns >= NW_PRESSURE_DECAY_NS
			     ? 1024
			     : window_ns * 1024 / NW_PRESSURE_DECAY_NS;

	if (v >= e)
		e = v;
	else
		e -= (long)((uint64_t)(e - v) * w / 1024);
	RELAXED_STORE(ps->stall_ewma, e);
}

/*
 * One sample; the caller is the sampler in charge. Its fields are read
 * and written relaxed: a sampler stalled past the 1 s takeover may still
 * be in here beside its replacement, which costs one odd sample at most.
 */
static void sample(uint64_t now, uint64_t last)
{
	long long total = -1;
	bool verdict = true;

	if (RELAXED_LOAD(ps->source) != SRC_LOADAVG)
		total = psi_some_total();
	if (total >= 0) {
		/*
		 * The first PSI sample only sets the base. After that, the
		 * share of the window during which some task waited for a
		 * CPU: the counter is in microseconds, the clock in ns.
		 */
		if (RELAXED_LOAD(ps->source) == SRC_PSI && now > last) {
			uint64_t stalled =
				((uint64_t)total - RELAXED_LOAD(ps->stall_us)) *
				1000;

			fold(stalled * 1000 / (now - last), now - last);
			verdict = RELAXED_LOAD(ps->stall_ewma) >
				  NW_PRESSURE_BUSY_PERMILLE;
		}
		RELAXED_STORE(ps->stall_us, (uint64_t)total);
		RELAXED_STORE(ps->source, SRC_PSI);
	} else {
		RELAXED_STORE(ps->source, SRC_LOADAVG);
		verdict = loadavg_excess() > 0;
	}
	__atomic_store_n(&ps->busy, verdict, __ATOMIC_RELAXED);
}

void nw_pressure_share(void)
{
	struct nw_pressure *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	*p = local;
	ps = p;
}

bool nw_cpu_busy_cached(void)
{
	return __atomic_load_n(&ps->busy, __ATOMIC_RELAXED);
}

bool nw_cpu_busy(uint64_t now_ns)
{
	uint64_t last = __atomic_load_n(&ps->sampled_ns, __ATOMIC_ACQUIRE);
	uint64_t owner = __atomic_load_n(&ps->sampling, __ATOMIC_RELAXED);

	if (now_ns - last < NW_PRESSURE_INTERVAL_NS)
		return nw_cpu_busy_cached();
	/*
	 * Take charge; a sampler that died in charge is replaced after 1 s.
	 * The owner's clock may be ahead of ours (read after ours): a signed
	 * difference, or we would take it for a dead one.
	 */
	if ((owner && (int64_t)(now_ns - owner) < 1000000000LL) ||
	    !__atomic_compare_exchange_n(&ps->sampling, &owner, now_ns, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return nw_cpu_busy_cached();
	last = __atomic_load_n(&ps->sampled_ns, __ATOMIC_RELAXED);
	if (now_ns - last >= NW_PRESSURE_INTERVAL_NS) {
		sample(now_ns, last);
		__atomic_store_n(&ps->sampled_ns, now_ns, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&ps->sampling, 0, __ATOMIC_RELEASE);
	return nw_cpu_busy_cached();
}

/*
 * The thread's own view: since when it measures (base_ns, its run_delay
 * then), until when it holds off, and when it looks again. All zero in a
 * new thread: the first call only sets the base, and says "queued" until
 * a window exists, as the shared verdict starts busy.
 */
struct nw_queued {
	uint64_t base_ns, base_delay, next_ns, hold_until;
	bool known;
};

static __thread struct nw_queued tq __attribute__((tls_model("initial-exec")));

/* run_delay of the calling thread in ns (the 2nd schedstat field), or -1. */
static long long thread_run_delay(void)
{
	char buf[128], *p = buf;

	if (read_proc("/proc/thread-self/schedstat", buf, sizeof(buf)) < 0)
		return -1;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != ' ')
		return -1;
	return strtoll(p + 1, NULL, 10);
}

bool nw_thread_queued(uint64_t now_ns)
{
	long long delay;
	uint64_t win;

	if ((int64_t)(now_ns - tq.next_ns) < 0)
		return (int64_t)(tq.hold_until - now_ns) > 0;
	delay = thread_run_delay();
	if (delay < 0) { /* no schedstat: PSI alone decides */
		tq.known = false;
		tq.next_ns = now_ns + NW_QUEUED_HOLD_NS;
		return false;
	}
	win = now_ns - tq.base_ns;
	if (!tq.known || (int64_t)win <= 0 || win > NW_QUEUED_MAX_WINDOW_NS ||
	    (uint64_t)delay < tq.base_delay) { /* new (or forked): a base */
		tq.hold_until = now_ns + NW_QUEUED_WINDOW_NS;
	} else if (((uint64_t)delay - tq.base_delay) * 1000 >
		   win * NW_QUEUED_PERMILLE) {
		tq.hold_until = now_ns + NW_QUEUED_HOLD_NS;
	}
	tq.known = true;
	tq.base_ns = now_ns;
	tq.base_delay = (uint64_t)delay;
	tq.next_ns = (int64_t)(tq.hold_until - now_ns) > 0
			     ? tq.hold_until
			     : now_ns + NW_QUEUED_WINDOW_NS;
	return (int64_t)(tq.hold_until - now_ns) > 0;
}
