/* SPDX-License-Identifier: MIT */
/*
 * Ring fd -> struct nw_ring. A ring is identified by its memfd's inode, not
 * by the fd number, because programs dup the ring fd and close the
 * original. A system call on every enter would cost more than the whole
 * NOP batch, so submitting enters use a mapping cached per fd number,
 * revalidated with fstat every NW_REVALIDATE calls; every other call (enter
 * without SQEs, register) looks the fd up afresh. A stale entry (the
 * program closed the ring fd and reused the number) can thus only serve a
 * submitting enter, until the next revalidation or nowait_setup.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include "internal.h"
#include "fdhigh.h"
#include "loop.h"

#define NW_FD_CACHE   4096
#define NW_REVALIDATE 1024

static pthread_mutex_t rings_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nw_ring *rings; /* every ring of the process */
static struct nw_ring *fd_cache[NW_FD_CACHE];
/* fd numbers that named a ring at their last look (nw_is_ring_fd). */
static unsigned long ring_fd_bits[NW_FD_CACHE / (8 * sizeof(long))];

static void mark_ring_fd(int fd)
{
	if ((unsigned int)fd < NW_FD_CACHE)
		__atomic_fetch_or(&ring_fd_bits[fd / (8 * sizeof(long))],
				  1UL << (fd % (8 * sizeof(long))),
				  __ATOMIC_RELAXED);
}

static bool fd_marked(int fd)
{
	return (unsigned int)fd < NW_FD_CACHE &&
	       (__atomic_load_n(&ring_fd_bits[fd / (8 * sizeof(long))],
				__ATOMIC_RELAXED) &
		(1UL << (fd % (8 * sizeof(long)))));
}

static struct nw_ring *ring_of_ino(const struct stat *st);

/*
 * The ring a marked fd number names; or none, and then the number loses
 * its bit, so that a program that closed a ring's fd and reopened the
 * number as another file pays one fstat for it, not one per request.
 * Under rings_lock and after a second fstat there: a ring listed before
 * keeps its bit, and one listed after (nw_ring_add) marks its number
 * after the list insert, so after this clear.
 */
static int marked_lookup(int fd, struct nw_ring **ringp)
{
	struct stat st;
	int r = nw_ring_lookup(fd, ringp);

	if (r == 0)
		return 0;
	pthread_mutex_lock(&rings_lock);
	if (fstat(fd, &st) || !ring_of_ino(&st))
		__atomic_fetch_and(&ring_fd_bits[fd / (8 * sizeof(long))],
				   ~(1UL << (fd % (8 * sizeof(long)))),
				   __ATOMIC_RELAXED);
	pthread_mutex_unlock(&rings_lock);
	return r;
}

bool nw_is_ring_fd(int fd)
{
	struct nw_ring *ring;

	if ((unsigned int)fd >= NW_FD_CACHE)
		return nw_ring_lookup(fd, &ring) == 0;
	return fd_marked(fd) && marked_lookup(fd, &ring) == 0;
}
/*
 * The kernel's ring file is an anon inode with poll and mmap only: read,
 * write, fallocate, truncate, fsync, xattrs and splice on it fail (-EINVAL,
 * -ENODEV, -EPERM...). A nowait ring's fd is a memfd that has them all,
 * and a write or truncate there would land in the rings themselves. The
 * engine's epoll fd of no loop is such an anon inode and answers the same.
 */
int nw_ring_fd_as_file(int fd)
{
	struct nw_ring *ring;
	int anon;

	/*
	 * Only numbers the bitmap says name a ring: a program with more
	 * fds than it holds pays no fstat per request, nor one whose ring
	 * fd number came back as another file, past its first request (a
	 * ring's fd that high, or a dup of one, keeps the memfd's answers).
	 */
	if (likely(!fd_marked(fd)))
		return fd;
	if (marked_lookup(fd, &ring))
		return fd;
	anon = nw_loop_anon_fd();
	return anon < 0 ? fd : anon;
}

static __thread unsigned int lookups __attribute__((tls_model("initial-exec")));

/*
 * The reactor and the SQPOLL poller ask whether a ring is still referenced
 * (below) from their own threads, while the program may be opening and
 * closing fds, a stale double close included. A file opened there would
 * take a low number that the program can close and reuse under it, and
 * then closing it would close the program's file. So /proc/self/maps and
 * /proc/self/fd are opened once per process, high, by setup on the
 * program's own thread, and reread in place under proc_lock.
 */
static pthread_mutex_t proc_lock = PTHREAD_MUTEX_INITIALIZER;
static int proc_maps_fd = -1, proc_fds_fd = -1;
static pid_t proc_pid; /* whose /proc/self they are */

static void proc_open(void)
{
	pid_t pid = nw_getpid();

	pthread_mutex_lock(&proc_lock);
	/* After fork the inherited pair names the parent: open the child's. */
	if (proc_pid != pid) {
		proc_maps_fd = nw_fd_hide(
			open("/proc/self/maps", O_RDONLY | O_CLOEXEC));
		proc_fds_fd = nw_fd_hide(open(
			"/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		proc_pid = pid;
	}
	pthread_mutex_unlock(&proc_lock);
}

/*
 * The first of them, opened high, grows the fd table past 10,000 slots,
 * and the kernel's expand_fdtable waits for an RCU grace period (10-20 ms
 * on a VM) whenever another thread shares the table. Setup opens them
 * before it starts an SQPOLL poller, so that a process whose first thread
 * is the engine's does not wait (liburing's a4c0b3decb33: 5,000 forked
 * children, each setting up one SQPOLL ring, waited 15 ms each).
 */
void nw_ring_proc_prepare(void)
{
	proc_open();
}

/*
 * A fork while another thread (the reactor's watch check) holds one of
 * these leaves would leave the child's copy locked for good: hold both
 * across fork(), so both copies start unlocked and consistent.
 */
/*
 * Rings shared across fork (docs/fork.md). Before a fork, each ring this
 * process serves that a child could submit on is marked forked: from then
 * on every hold of its submit side also takes the ring's shared lock word
 * (complete.c). A hold already under way has not taken it, so the mark is
 * followed by a trylock of submit_lock (a few tries, never a wait: the
 * holder may want a lock a fork handler holds): still held, the child's
 * copy says fork_busy, and the child may not submit on it.
 */
static void fork_mark(void)
{
	pid_t me = nw_getpid();

	for (struct nw_ring *r = rings; r; r = r->next) {
		int busy = 1;

		if (r->owner_pid != me || r->sqd || r->single_issuer ||
		    r->mem_user || __atomic_load_n(&r->torn, __ATOMIC_ACQUIRE))
			continue;
		__atomic_store_n(&r->forked, true, __ATOMIC_RELAXED);
		for (int i = 0; i < 100 && busy; i++) {
			busy = pthread_mutex_trylock(&r->submit_lock);
			if (busy)
				sched_yield();
		}
		if (!busy)
			pthread_mutex_unlock(&r->submit_lock);
		r->fork_busy = busy;
	}
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&rings_lock);
	fork_mark();
	pthread_mutex_lock(&proc_lock);
}

static void fork_done(void)
{
	pthread_mutex_unlock(&proc_lock);
	pthread_mutex_unlock(&rings_lock);
}

static void fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
}

void nw_ring_add(struct nw_ring *ring, int fd)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fork_handlers);
	proc_open();
	pthread_mutex_lock(&rings_lock);
	ring->next = rings;
	rings = ring;
	pthread_mutex_unlock(&rings_lock);
	/* Atomic: an SQPOLL poller may be asking nw_ring_referenced. */
	__atomic_store_n(&ring->last_fd, fd, __ATOMIC_RELAXED);
	__atomic_store_n(&ring->published, true, __ATOMIC_RELEASE);
	mark_ring_fd(fd);
	/* The fd number may be cached for a ring that was closed before. */
	if ((unsigned int)fd < NW_FD_CACHE)
		__atomic_store_n(&fd_cache[fd], ring, __ATOMIC_RELEASE);
}

/*
 * The ring is torn down: no lookup finds it from now on. Its next pointer
 * stays, so that a walker of nw_ring_next standing on it goes on.
 */
void nw_ring_remove(struct nw_ring *ring)
{
	struct nw_ring **pp;

	pthread_mutex_lock(&rings_lock);
	for (pp = &rings; *pp; pp = &(*pp)->next) {
		if (*pp == ring) {
			*pp = ring->next;
			break;
		}
	}
	pthread_mutex_unlock(&rings_lock);
	for (unsigned int i = 0; i < NW_FD_CACHE; i++)
		if (__atomic_load_n(&fd_cache[i], __ATOMIC_RELAXED) == ring)
			__atomic_store_n(&fd_cache[i], NULL, __ATOMIC_RELEASE);
}

unsigned int nw_rings_suspect;

/*
 * The program is about to close fd (the close hooks). When it names a
 * ring, the ring may be about to be let go of: mark it for the next
 * reap (nw_setup) and have its reactor thread, if any, look twice.
 */
void nw_ring_fd_closing(int fd)
{
	struct nw_ring *ring;

	if (!fd_marked(fd) || nw_ring_lookup(fd, &ring))
		return;
	if (!__atomic_exchange_n(&ring->suspect, true, __ATOMIC_SEQ_CST))
		__atomic_add_fetch(&nw_rings_suspect, 1, __ATOMIC_SEQ_CST);
	nw_ring_exit_ask(ring);
}

void nw_ring_exit_ask(struct nw_ring *ring)
{
	__atomic_store_n(&ring->exit_check, 2, __ATOMIC_SEQ_CST);
	/* Under poll_lock: a teardown closes the loop's fds under it. */
	pthread_mutex_lock(&ring->poll_lock);
	if (nw_loop_ready(&ring->loop))
		nw_loop_wake(&ring->loop);
	pthread_mutex_unlock(&ring->poll_lock);
}

struct nw_ring *nw_ring_next(struct nw_ring *ring)
{
	struct nw_ring *next;

	pthread_mutex_lock(&rings_lock);
	next = ring ? ring->next : rings;
	pthread_mutex_unlock(&rings_lock);
	return next;
}

/* The listed ring whose memfd st is, or NULL. rings_lock held. */
static struct nw_ring *ring_of_ino(const struct stat *st)
{
	struct nw_ring *ring;

	for (ring = rings; ring; ring = ring->next)
		if (ring->ino == st->st_ino && ring->dev == st->st_dev)
			break;
	return ring;
}

/* The slow path: fstat the fd and find the ring by inode. */
static int lookup_slow(int fd, struct nw_ring **ringp)
{
	struct nw_ring *ring;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -EBADF;
	pthread_mutex_lock(&rings_lock);
	ring = ring_of_ino(&st);
	pthread_mutex_unlock(&rings_lock);
	if (fd < NW_FD_CACHE)
		__atomic_store_n(&fd_cache[fd], ring, __ATOMIC_RELEASE);
	if (!ring)
		return -EOPNOTSUPP;
	__atomic_store_n(&ring->last_fd, fd, __ATOMIC_RELAXED);
	__atomic_store_n(&ring->published, true, __ATOMIC_RELEASE);
	mark_ring_fd(fd);
	*ringp = ring;
	return 0;
}

int nw_ring_lookup(int fd, struct nw_ring **ringp)
{
	return lookup_slow(fd, ringp);
}

int nw_ring_lookup_cached(int fd, struct nw_ring **ringp)
{
	struct nw_ring *ring;

	if (likely((unsigned int)fd < NW_FD_CACHE)) {
		ring = __atomic_load_n(&fd_cache[fd], __ATOMIC_ACQUIRE);
		if (likely(ring && (++lookups % NW_REVALIDATE) != 0)) {
			*ringp = ring;
			return 0;
		}
	}
	return lookup_slow(fd, ringp);
}

/* Does text name this ring's memfd ("/memfd:nowait-ring:<id> (deleted)")? */
bool nw_names_ring(const char *text, const struct nw_ring *ring)
{
	char tag[40];
	const char *p;
	size_t len;

	len = (size_t)snprintf(tag, sizeof(tag), "/memfd:nowait-ring:%u",
			       ring->id);
	p = strstr(text, tag);
	return p && (p[len] == ' ' || p[len] == '\n' || p[len] == '\0');
}

/* Is this maps line a mapping of the ring's memfd not the engine's own? */
static bool maps_line_is_program(const char *line, void *arg)
{
	struct nw_ring *ring = arg;
	unsigned long start;

	if (!nw_names_ring(line, ring) || sscanf(line, "%lx-", &start) != 1)
		return false;
	return start != (unsigned long)ring->rings_map &&
	       start != (unsigned long)ring->sqe_map &&
	       start != (unsigned long)ring->pbuf_win;
}

/* nw_ring_maps_scan on the kept fd, under proc_lock. */
static int maps_scan(nw_maps_line_fn fn, void *arg)
{
	char buf[4096], *p, *nl;
	size_t have = 0;
	off_t off = 0;
	ssize_t n;

	for (;;) {
		n = pread(proc_maps_fd, buf + have, sizeof(buf) - 1 - have,
			  off);
		if (n < 0)
			return -1;
		off += n;
		have += (size_t)n;
		buf[have] = '\0';
		for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
			*nl = '\0';
			if (fn(p, arg))
				return 1;
		}
		if (n == 0)
			return *p && fn(p, arg);
		have = strlen(p);
		if (have == sizeof(buf) - 1)
			have = 0; /* not a maps line: skip it */
		memmove(buf, p, have);
	}
}

int nw_ring_maps_scan(nw_maps_line_fn fn, void *arg)
{
	char line[512];
	bool found = false;
	int r = -1;
	FILE *f;

	pthread_mutex_lock(&proc_lock);
	if (proc_maps_fd >= 0 && proc_pid == nw_getpid())
		r = maps_scan(fn, arg);
	pthread_mutex_unlock(&proc_lock);
	if (r >= 0)
		return r;
	/* Not kept (or closed by the program): a file of its own. */
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		found = fn(line, arg);
	}
	fclose(f);
	return found;
}

/* Does a mapping of the ring's memfd exist that is not the engine's own? */
static bool ring_mapped_by_program(struct nw_ring *ring)
{
	int r = nw_ring_maps_scan(maps_line_is_program, ring);

	return r != 0; /* cannot tell: assume alive */
}

/*
 * Does st (what a /proc/self/fd link leads to) name the ring's memfd? By
 * inode: stat through the link reads no link text and never touches the
 * program's fd itself (it may be closing or reusing it right now).
 */
static bool st_is_ring(int r, const struct stat *st, const struct nw_ring *ring)
{
	return r == 0 && st->st_ino == ring->ino && st->st_dev == ring->dev;
}

static bool fd_is_ring(int fd, const struct nw_ring *ring)
{
	char path[40];
	struct stat st;

	if (fd < 0)
		return false;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return st_is_ring(stat(path, &st), &st, ring);
}

/* fd_is_ring for the entry name of the kept /proc/self/fd, proc_lock. */
static bool fd_names_ring(const char *name, struct nw_ring *ring)
{
	struct stat st;

	return st_is_ring(fstatat(proc_fds_fd, name, &st, 0), &st, ring);
}

struct nw_dirent64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* ring_has_fd on the kept directory fd: 1, 0, or -1 (cannot read it). */
static int fds_scan(struct nw_ring *ring)
{
	char buf[4096] __attribute__((aligned(8)));
	struct nw_dirent64 *de;
	long n, pos;

	if (lseek(proc_fds_fd, 0, SEEK_SET) < 0)
		return -1;
	while ((n = syscall(SYS_getdents64, proc_fds_fd, buf, sizeof(buf))) >
	       0) {
		for (pos = 0; pos < n; pos += de->reclen) {
			de = (struct nw_dirent64 *)(buf + pos);
			if (de->name[0] != '.' && fd_names_ring(de->name, ring))
				return 1;
		}
	}
	return n < 0 ? -1 : 0;
}

/*
 * Does any fd of the process name the ring's memfd? By inode, one stat
 * through /proc/self/fd each: the program's fds are never used (it may be
 * closing them right now), and no link text is read.
 */
static bool ring_has_fd(struct nw_ring *ring)
{
	struct dirent *de;
	bool found = false;
	int r = -1;
	DIR *d;

	pthread_mutex_lock(&proc_lock);
	if (proc_fds_fd >= 0 && proc_pid == nw_getpid())
		r = fds_scan(ring);
	pthread_mutex_unlock(&proc_lock);
	if (r >= 0)
		return r;
	d = opendir("/proc/self/fd");
	if (!d)
		return true;
	while (!found && (de = readdir(d)))
		found = de->d_name[0] != '.' &&
			fd_is_ring(atoi(de->d_name), ring);
	closedir(d);
	return found;
}

/*
 * The kernel tears a ring down when its last fd and mapping are gone;
 * nothing tells a user-space engine, so the reactor thread asks here
 * (rate-limited) before it reissues requests on the program's behalf.
 */
bool nw_ring_referenced(struct nw_ring *ring)
{
	int fd = __atomic_load_n(&ring->last_fd, __ATOMIC_RELAXED);

	/* The quick answer: the fd the program last used still names it. */
	if (fd_is_ring(fd, ring))
		return true;
	return ring_mapped_by_program(ring) || ring_has_fd(ring);
}

/*
 * One nw_ring_referenced per ring until one is held: the newest first, so
 * one stat in the common case. A forked child's copies of its parent's
 * rings (it cannot submit on them) and rings being exited do not count.
 * Under rings_lock (proc_lock nests inside, as in fork_prepare): a ring
 * looked at is not released (nw_ring_remove comes first) under the look.
 */
bool nw_rings_held(void)
{
	pid_t pid = nw_getpid();
	bool held = false;

	pthread_mutex_lock(&rings_lock);
	for (struct nw_ring *r = rings; r && !held; r = r->next)
		held = r->owner_pid == pid &&
		       !__atomic_load_n(&r->dead, __ATOMIC_ACQUIRE) &&
		       nw_ring_referenced(r);
	pthread_mutex_unlock(&rings_lock);
	return held;
}
