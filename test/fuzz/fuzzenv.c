/* SPDX-License-Identifier: MIT */
/*
 * The fuzz harnesses' environment and SQE sanitiser (fuzzenv.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>
#include <poll.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <nowait.h>
#include "nowait-abi.h"
#include "helpers.h"
#include "fuzzenv.h"

#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif
#ifndef FUTEX2_PRIVATE
#define FUTEX2_PRIVATE 128
#endif

int fz_wide;

static uint8_t *arena;
static uint8_t *arena_pattern; /* what the arena holds past the input */
static char scratch[64];
static int fd_limit; /* fds below it that the SQEs made are swept */
static uint8_t preexisting[1024];

static const char *const paths[] = {
	"f0", "f1", "d0", "d0/f2", "", "none/x", "l0", ".",
};
static const char *const xattr_names[] = {
	"user.a", "user.b", "trusted.x", "bad", "", "user.",
};
static char long_name[400];

void fz_init(void)
{
	struct rlimit rl;

	if (arena)
		return;
	arena = mmap(NULL, FZ_ARENA + 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED)
		abort();
	/*
	 * The page after the arena is inaccessible: "bad" addresses land
	 * there. PROT_NONE, not unmapped: a hole is where the next small
	 * mmap of anyone (a ring's, ASan's own allocator) may be placed,
	 * and a bad address would then read or write that memory.
	 */
	if (mprotect(arena + FZ_ARENA, 4096, PROT_NONE))
		abort();
	arena_pattern = malloc(FZ_ARENA);
	if (!arena_pattern)
		abort();
	for (size_t i = 0; i < FZ_ARENA; i++)
		arena_pattern[i] = (uint8_t)(i * 37 + 11);
	snprintf(scratch, sizeof(scratch), "/tmp/nowait-fuzz.%d", getpid());
	mkdir(scratch, 0700);
	if (chdir(scratch))
		abort();
	memset(long_name, 'n', sizeof(long_name) - 1);
	getrlimit(RLIMIT_NOFILE, &rl);
	/* The engine keeps its own fds from half the limit up (fdhigh.c). */
	fd_limit = (int)(rl.rlim_cur / 2 < 1024 ? rl.rlim_cur / 2 : 1024);
	/*
	 * A WRITE or SEND into a pipe or socket the input closed the other
	 * end of raises SIGPIPE on the submitting thread, in the kernel and
	 * in nowait (rw.c sends a worker's to the task): ignored, as a
	 * network program does, or the harness dies of it unreported (exit
	 * 141, the 600 s run of 09c3428 when started with SIGPIPE at its
	 * default; earlier runs had inherited it ignored).
	 */
	signal(SIGPIPE, SIG_IGN);
}

/* The fds open now (libFuzzer's, the symbolizer's): not the input's. */
static void snapshot_fds(void)
{
	struct dirent *de;
	DIR *d;

	memset(preexisting, 0, sizeof(preexisting));
	d = opendir("/proc/self/fd");
	while (d && (de = readdir(d)))
		if (atoi(de->d_name) > 0 && atoi(de->d_name) < 1024)
			preexisting[atoi(de->d_name)] = 1;
	if (d)
		closedir(d);
}

/* An environment fd that cannot be moved into place: what is there. */
static void fd_lost(int fd, int want)
{
	int err = errno;
	char path[64], what[256];
	ssize_t n;

	fprintf(stderr, "fuzz: dup2(%d, %d): %s\n", fd, want, strerror(err));
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", i ? want : fd);
		n = readlink(path, what, sizeof(what) - 1);
		what[n > 0 ? n : 0] = 0;
		fprintf(stderr, "fuzz:   fd %d: %s\n", i ? want : fd,
			n > 0 ? what : "(not open)");
	}
	abort();
}

static void put_fd(struct fz_env *e, int slot, int fd)
{
	int want = FZ_FD_BASE + slot;

	if (fd < 0) {
		e->fd[slot] = fd;
		return;
	}
	if (fd != want) {
		if (dup2(fd, want) < 0)
			fd_lost(fd, want);
		close(fd);
	}
	e->fd[slot] = want;
}

/*
 * A loopback connect. A signal may end the wait for the handshake on a
 * loaded machine (libFuzzer's alarm, the stats' SIGUSR2 of the hooks
 * record): -EINTR, and the connect goes on. Then wait for it to finish.
 */
static int connect_loopback(int c, const struct sockaddr_in *a)
{
	struct pollfd pfd = {.fd = c, .events = POLLOUT};
	socklen_t len = sizeof(int);
	int err = 0;

	if (!connect(c, (const void *)a, sizeof(*a)))
		return 0;
	if (errno != EINTR)
		return -1;
	while (poll(&pfd, 1, -1) < 0)
		if (errno != EINTR)
			return -1;
	if (getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len))
		return -1;
	errno = err;
	return err ? -1 : 0;
}

static void tcp_trio(struct fz_env *e)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), c, s;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (void *)&a, sizeof(a)) || listen(l, 8) ||
	    getsockname(l, (void *)&a, &len))
		abort();
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect_loopback(c, &a)) {
		perror("fuzz: tcp_trio's loopback connect");
		abort();
	}
	s = accept(l, NULL, NULL);
	if (s < 0)
		abort();
	put_fd(e, 12, c);
	put_fd(e, 13, s);
	put_fd(e, 14, l);
}

void fz_env_open(struct fz_env *e, const uint8_t *data, size_t size)
{
	static char content[4096];
	size_t n = size < FZ_ARENA ? size : FZ_ARENA;
	int p[2], s[2], f;

	snapshot_fds();
	e->arena = arena;
	memcpy(arena, data, n);
	memcpy(arena + n, arena_pattern + n, FZ_ARENA - n);
	if (!content[0])
		for (size_t i = 0; i < sizeof(content); i++)
			content[i] = "0123456789abcdef"[i & 15];
	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		abort();
	put_fd(e, 0, p[0]);
	put_fd(e, 1, p[1]);
	put_fd(e, 2, s[0]);
	put_fd(e, 3, s[1]);
	f = open("f0", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (f < 0)
		abort();
	if (write(f, content, sizeof(content)) != (ssize_t)sizeof(content))
		abort();
	put_fd(e, 4, f);
	put_fd(e, 5, eventfd(0, 0));
	put_fd(e, 6, epoll_create1(0));
	e->fd[7] = -1; /* the ring, set by the harness */
	if (mkdir("d0", 0700) && errno != EEXIST)
		abort();
	put_fd(e, 8, open(".", O_RDONLY | O_DIRECTORY));
	e->fd[9] = -1;
	e->fd[10] = 9999;
	e->fd[11] = AT_FDCWD;
	tcp_trio(e);
	put_fd(e, 15, open("/dev/null", O_RDWR));
	e->ring_fd = e->ring_fd2 = -1;
	e->child = 0;
	e->child_pidfd = -1;
	e->pers_id = 0;
}

int fz_env_child(struct fz_env *e, unsigned int ms)
{
	struct timespec ts = {.tv_nsec = (long)(ms % 8) * 1000000};
	pid_t pid;

	if (e->child > 0)
		return e->child;
	pid = fork();
	if (pid == 0) {
		nanosleep(&ts, NULL);
		_exit((int)ms & 3);
	}
	if (pid < 0)
		return 0;
	/* Signalled through its pidfd: never a recycled number. */
	e->child_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	e->child = pid;
	return pid;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0)
		remove(path);
	return 0;
}

void fz_env_close(struct fz_env *e)
{
	int from = 3;

	if (e->child > 0) {
		siginfo_t si;

		/* A WAITID may have reaped it: then both calls fail. */
		syscall(SYS_pidfd_send_signal, e->child_pidfd, SIGKILL, NULL,
			0);
		waitid(P_PIDFD, (id_t)e->child_pidfd, &si, WEXITED);
		close(e->child_pidfd);
	}
	e->child = 0;
	/*
	 * The TCP pair closes with a reset, not into TIME_WAIT: at ~100
	 * inputs a second (each run twice by the leak check) the loopback
	 * ports ran out in 2 minutes and tcp_trio's connect failed.
	 */
	for (int i = 12; i <= 13; i++) {
		struct linger lg = {.l_onoff = 1, .l_linger = 0};

		if (e->fd[i] >= 0)
			setsockopt(e->fd[i], SOL_SOCKET, SO_LINGER, &lg,
				   sizeof(lg));
	}
	/* One close_range per run of fds that were not open before. */
	for (int fd = 3; fd <= fd_limit; fd++) {
		if (fd < fd_limit && (fd >= 1024 || !preexisting[fd]))
			continue;
		if (fd > from)
			close_range((unsigned int)from, (unsigned int)fd - 1,
				    0);
		from = fd + 1;
	}
	for (int i = 0; i < FZ_NFD; i++)
		e->fd[i] = -1;
	nftw(scratch, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* An arena address with room for need bytes, NULL, or an unmapped one. */
static uint64_t map_addr(uint64_t raw, size_t need)
{
	unsigned int sel = (unsigned int)(raw >> 61);
	size_t off = raw & 0xffff;

	switch (sel) {
	case 5:
		return 0;
	case 6:
		return (uint64_t)(uintptr_t)(arena + FZ_ARENA + (raw & 0xff));
	case 7:
		return raw & 0xfff; /* the zero page: unmapped */
	}
	if (need > FZ_ARENA)
		need = FZ_ARENA;
	if (off + need > FZ_ARENA)
		off = FZ_ARENA - need;
	off &= ~(size_t)7;
	return (uint64_t)(uintptr_t)(arena + off);
}

static int map_fd(struct fz_env *e, uint32_t raw)
{
	unsigned int slot = raw & (FZ_NFD - 1);

	if (slot == 7) /* the ring, or (bit 4) a second one if there is */
		return (raw & 16) && e->ring_fd2 >= 0 ? e->ring_fd2
						      : e->ring_fd;
	return e->fd[slot];
}

static uint64_t map_path(uint64_t raw)
{
	unsigned int i = raw & 15;

	if (i < sizeof(paths) / sizeof(paths[0]))
		return (uint64_t)(uintptr_t)paths[i];
	if (i == 8)
		return (uint64_t)(uintptr_t)long_name;
	return map_addr(raw, 1) & ~0ULL; /* arena bytes, or bad */
}

static int path_in_arena_safe(uint64_t a)
{
	/* Arena bytes as a path: no '/' at all, so nothing outside scratch. */
	uint8_t *p = (uint8_t *)(uintptr_t)a;

	if (p < arena || p >= arena + FZ_ARENA)
		return 1;
	for (; p < arena + FZ_ARENA && *p; p++)
		if (*p == '/')
			*p = '_';
	if (p == arena + FZ_ARENA)
		arena[FZ_ARENA - 1] = 0;
	return 1;
}

static uint64_t safe_path(uint64_t raw)
{
	uint64_t a = map_path(raw);

	path_in_arena_safe(a);
	return a;
}

static uint64_t map_xattr_name(uint64_t raw)
{
	unsigned int i = raw & 7;

	if (i < sizeof(xattr_names) / sizeof(xattr_names[0]))
		return (uint64_t)(uintptr_t)xattr_names[i];
	return map_addr(raw, 1);
}

/* Rebuild n iovecs at a (in the arena) to point into the arena. */
static void fix_iovecs(uint64_t a, unsigned int n)
{
	struct iovec *iov = (struct iovec *)(uintptr_t)a;

	if ((uint8_t *)iov < arena || (uint8_t *)iov >= arena + FZ_ARENA)
		return;
	for (unsigned int i = 0; i < n; i++) {
		if ((uint8_t *)(iov + i + 1) > arena + FZ_ARENA)
			break;
		uint64_t b = (uint64_t)(uintptr_t)iov[i].iov_base;

		iov[i].iov_base = (void *)(uintptr_t)map_addr(b, 1);
		iov[i].iov_len &= 0xffff;
	}
}

/*
 * For READV/WRITEV_FIXED: the iovecs moved into the buffer sqe-fuzz
 * registers from the start (the arena's 0x8300, 4 KiB), most of them.
 */
static void fix_iovecs_fixed(uint64_t a, unsigned int n)
{
	struct iovec *iov = (struct iovec *)(uintptr_t)a;

	if ((uint8_t *)iov < arena || (uint8_t *)iov >= arena + FZ_ARENA)
		return;
	for (unsigned int i = 0;
	     i < n && (uint8_t *)(iov + i + 1) <= arena + FZ_ARENA; i++) {
		size_t off = (uintptr_t)iov[i].iov_base & 0x7ff;

		if (iov[i].iov_len & 0x10000)
			continue;
		iov[i].iov_base = arena + FZ_FIXED_BUF + off;
		iov[i].iov_len &= 0x7ff;
	}
}

static void fix_msghdr(uint64_t a)
{
	struct msghdr *m = (struct msghdr *)(uintptr_t)a;
	uint64_t r;

	if ((uint8_t *)m < arena || (uint8_t *)(m + 1) > arena + FZ_ARENA)
		return;
	r = (uint64_t)(uintptr_t)m->msg_name;
	m->msg_name = (r & 1) ? (void *)(uintptr_t)map_addr(r, 128) : NULL;
	m->msg_namelen &= 0x7f;
	r = (uint64_t)(uintptr_t)m->msg_iov;
	m->msg_iov = (void *)(uintptr_t)map_addr(r, 4 * sizeof(struct iovec));
	if (m->msg_iovlen > 4 && m->msg_iovlen < 2048)
		m->msg_iovlen &= 3;
	if (m->msg_iovlen <= 4)
		fix_iovecs((uint64_t)(uintptr_t)m->msg_iov,
			   (unsigned int)m->msg_iovlen);
	r = (uint64_t)(uintptr_t)m->msg_control;
	m->msg_control = (r & 1) ? (void *)(uintptr_t)map_addr(r, 256) : NULL;
	m->msg_controllen &= 0xff;
}

/* A timespec in the arena made short (up to ~1 ms), often enough. */
static void fix_timespec(uint64_t a)
{
	struct __kernel_timespec *ts = (struct __kernel_timespec *)(uintptr_t)a;

	if ((uint8_t *)ts < arena || (uint8_t *)(ts + 1) > arena + FZ_ARENA)
		return;
	ts->tv_sec = 0;
	ts->tv_nsec &= 0xfffff;
}

static void fix_fd_array(struct fz_env *e, uint64_t a, unsigned int n)
{
	int *v = (int *)(uintptr_t)a;

	if ((uint8_t *)v < arena || (uint8_t *)v >= arena + FZ_ARENA)
		return;
	for (unsigned int i = 0;
	     i < n && (uint8_t *)(v + i + 1) <= arena + FZ_ARENA; i++) {
		unsigned int r = (unsigned int)v[i];

		v[i] = (r & 0x30) == 0x30 ? -2 /* SKIP */ : map_fd(e, r);
	}
}

static void fix_connect(struct io_uring_sqe *sqe, struct fz_env *e)
{
	/* The loopback listener's address, or a unix path in scratch. */
	static struct sockaddr_in in;
	static struct sockaddr_un un = {.sun_family = AF_UNIX,
					.sun_path = "none.sock"};
	socklen_t len = sizeof(in);

	getsockname(e->fd[14], (void *)&in, &len);
	if (sqe->addr & 1)
		sqe->addr = (uint64_t)(uintptr_t)&in;
	else if (sqe->addr & 2)
		sqe->addr = (uint64_t)(uintptr_t)&un;
	else
		sqe->addr = map_addr(sqe->addr, 128);
	sqe->off &= 0x7f;
}

static void fix_paths(struct io_uring_sqe *sqe, struct fz_env *e)
{
	switch (sqe->opcode) {
	case IORING_OP_OPENAT:
	case IORING_OP_UNLINKAT:
	case IORING_OP_MKDIRAT:
		sqe->addr = safe_path(sqe->addr);
		break;
	case IORING_OP_OPENAT2:
		sqe->addr = safe_path(sqe->addr);
		sqe->addr2 = map_addr(sqe->addr2, 24);
		break;
	case IORING_OP_STATX:
		sqe->addr = safe_path(sqe->addr);
		sqe->off = map_addr(sqe->off, 256); /* addr2: the buffer */
		break;
	case IORING_OP_RENAMEAT:
	case IORING_OP_LINKAT:
		sqe->addr = safe_path(sqe->addr);
		sqe->addr2 = safe_path(sqe->addr2);
		sqe->len = (uint32_t)map_fd(e, sqe->len);
		break;
	case IORING_OP_SYMLINKAT:
		sqe->addr = safe_path(sqe->addr);
		sqe->addr2 = safe_path(sqe->addr2);
		break;
	}
}

static void fix_xattr(struct io_uring_sqe *sqe)
{
	sqe->addr = map_xattr_name(sqe->addr);
	sqe->addr2 = map_addr(sqe->addr2, sqe->len & 0xffff);
	if (sqe->opcode == IORING_OP_SETXATTR ||
	    sqe->opcode == IORING_OP_GETXATTR)
		sqe->addr3 = safe_path(sqe->addr3);
}

/* A sockaddr for BIND: the loopback, a unix path in scratch, or bytes. */
static void fix_bind(struct io_uring_sqe *sqe)
{
	static struct sockaddr_in in = {.sin_family = AF_INET};
	static struct sockaddr_un un[2] = {
		{.sun_family = AF_UNIX, .sun_path = "b0.sock"},
		{.sun_family = AF_UNIX, .sun_path = "\0nowait-fuzz-b1"},
	};
	struct sockaddr_un *a;

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	switch (sqe->addr & 3) {
	case 0:
		sqe->addr = (uint64_t)(uintptr_t)&in;
		break;
	case 1:
	case 2:
		sqe->addr = (uint64_t)(uintptr_t)&un[(sqe->addr & 3) - 1];
		break;
	default:
		sqe->addr = map_addr(sqe->addr, sizeof(*a));
		a = (struct sockaddr_un *)(uintptr_t)sqe->addr;
		/* A unix path from the arena: no '/', so only in scratch. */
		if ((uint8_t *)a >= arena &&
		    (uint8_t *)(a + 1) <= arena + FZ_ARENA)
			for (size_t i = 0; i < sizeof(a->sun_path); i++)
				if (a->sun_path[i] == '/')
					a->sun_path[i] = '_';
	}
	if (!(sqe->off & 0x80))
		sqe->off = sqe->addr == (uint64_t)(uintptr_t)&in ? sizeof(in)
								 : sizeof(*a);
	sqe->off &= 0xff;
}

/* Futex words in the arena, mostly holding the value waited for. */
static void fix_futex(struct io_uring_sqe *sqe)
{
	uint32_t *w;

	sqe->addr = map_addr(sqe->addr, 8);
	w = (uint32_t *)(uintptr_t)sqe->addr;
	if (!(sqe->fd & 0x40)) /* FUTEX2_SIZE_U32, maybe FUTEX2_PRIVATE */
		sqe->fd = FUTEX2_SIZE_U32 | (sqe->fd & FUTEX2_PRIVATE);
	if (sqe->opcode == NW_OP_FUTEX_WAKE)
		sqe->addr2 &= 0xff; /* how many */
	else if (!(sqe->addr2 & (1ULL << 40)) && (uint8_t *)w >= arena &&
		 (uint8_t *)w < arena + FZ_ARENA)
		sqe->addr2 = *w;
	if (!(sqe->addr3 & 1))
		sqe->addr3 = FUTEX_BITSET_MATCH_ANY;
}

static void fix_futexv(struct io_uring_sqe *sqe)
{
	struct futex_waitv *v;

	sqe->len &= 7;
	sqe->addr = map_addr(sqe->addr, 8 * sizeof(*v));
	v = (struct futex_waitv *)(uintptr_t)sqe->addr;
	if ((uint8_t *)v < arena || (uint8_t *)v >= arena + FZ_ARENA)
		return;
	for (unsigned int i = 0; i < sqe->len; i++) {
		uint32_t *w = (uint32_t *)(uintptr_t)map_addr(v[i].uaddr, 8);

		v[i].uaddr = (uint64_t)(uintptr_t)w;
		if (!(v[i].flags & 0x40))
			v[i].flags =
				FUTEX2_SIZE_U32 | (v[i].flags & FUTEX2_PRIVATE);
		if (!(v[i].__reserved & 0x10000))
			v[i].__reserved = 0;
		if (!(v[i].val & (1ULL << 40)) && (uint8_t *)w >= arena &&
		    (uint8_t *)w < arena + FZ_ARENA)
			v[i].val = *w;
	}
	if (!(sqe->fd & 0x40))
		sqe->fd = 0;
}

/* WAITID: mostly on a child of this input (fz_env_child), by pid or fd. */
static void fix_waitid(struct io_uring_sqe *sqe, struct fz_env *e)
{
	uint32_t raw = (uint32_t)sqe->fd;

	if (raw & 0x300)
		fz_env_child(e, raw >> 10);
	if (sqe->len == P_PID && e->child && !(raw & 0x80))
		sqe->fd = e->child;
	else if (sqe->len == P_PIDFD && !(raw & 0x80))
		sqe->fd = e->child ? e->child_pidfd : map_fd(e, raw);
	else if (sqe->len == P_PGID && !(raw & 0x80))
		sqe->fd = 0;
	if (!(sqe->file_index & 0x10000000))
		sqe->file_index =
			WEXITED | (sqe->file_index & (WNOHANG | WNOWAIT));
	sqe->addr2 = (sqe->addr2 & 1) ? 0 : map_addr(sqe->addr2, 128);
}

/* URING_CMD on a socket: the op, a level and option, optval, optlen. */
static void fix_cmd(struct io_uring_sqe *sqe)
{
	if (!(sqe->off & 0x80000000U))
		sqe->off =
			(sqe->off & ~0xffffffffULL) | (sqe->off & 0xffff) % 5;
	if (!(sqe->addr & 0x80000000U))
		sqe->addr =
			((sqe->addr & 1) ? 6 /* IPPROTO_TCP */ : SOL_SOCKET) |
			((sqe->addr >> 32) & 63) << 32;
	if (!(sqe->addr3 & 2))
		sqe->addr3 = map_addr(sqe->addr3, 256);
	sqe->file_index &= 0x1ff;
}

/* The opcodes past 6.1's: true if handled (fd included). */
static bool fix_new_ops(struct io_uring_sqe *sqe, struct fz_env *e)
{
	switch (sqe->opcode) {
	case NW_OP_FUTEX_WAIT:
	case NW_OP_FUTEX_WAKE:
		fix_futex(sqe);
		return true;
	case NW_OP_FUTEX_WAITV:
		fix_futexv(sqe);
		return true;
	case NW_OP_WAITID:
		fix_waitid(sqe, e);
		return true;
	case NW_OP_PIPE:
		sqe->addr = map_addr(sqe->addr, 8);
		if (!(sqe->fd & 0x20))
			sqe->fd = 0;
		return true;
	case NW_OP_BIND:
		fix_bind(sqe);
		break;
	case NW_OP_FTRUNCATE:
		sqe->off &= 0xfffff;
		break;
	case NW_OP_LISTEN:
		sqe->len &= 15;
		break;
	case NW_OP_EPOLL_WAIT:
		sqe->len &= 15;
		sqe->addr = map_addr(sqe->addr, 16 * 12);
		break;
	case NW_OP_READV_FIXED:
	case NW_OP_WRITEV_FIXED:
		sqe->addr = map_addr(sqe->addr, 16 * sizeof(struct iovec));
		if (sqe->len <= 1024) {
			sqe->len &= 15;
			fix_iovecs(sqe->addr, sqe->len);
			if (!(sqe->off & 0x8000))
				fix_iovecs_fixed(sqe->addr, sqe->len);
		}
		break;
	case IORING_OP_URING_CMD:
		fix_cmd(sqe);
		break;
	default:
		return false;
	}
	if (sqe->flags & IOSQE_FIXED_FILE)
		sqe->fd &= 15;
	else
		sqe->fd = map_fd(e, (uint32_t)sqe->fd);
	return true;
}

static void fix_addrs(struct io_uring_sqe *sqe, struct fz_env *e)
{
	if (fz_wide && fix_new_ops(sqe, e))
		return;
	switch (sqe->opcode) {
	case IORING_OP_READV:
	case IORING_OP_WRITEV:
		sqe->addr = map_addr(sqe->addr, 16 * sizeof(struct iovec));
		if (sqe->len <= 1024) {
			sqe->len &= 15;
			fix_iovecs(sqe->addr, sqe->len);
		}
		break;
	case IORING_OP_SENDMSG:
	case IORING_OP_RECVMSG:
	case IORING_OP_SENDMSG_ZC:
		sqe->addr = map_addr(sqe->addr, sizeof(struct msghdr));
		fix_msghdr(sqe->addr);
		break;
	case IORING_OP_CONNECT:
		fix_connect(sqe, e);
		break;
	case IORING_OP_ACCEPT:
		sqe->addr = map_addr(sqe->addr, 128);
		sqe->off = map_addr(sqe->off, 4);
		break;
	case IORING_OP_SEND_ZC:
		sqe->addr = map_addr(sqe->addr, 1);
		sqe->addr2 = (sqe->addr2 & 1) ? map_addr(sqe->addr2, 128) : 0;
		/* As the default's: past the arena is the unmapped page only. */
		sqe->len &= 0x1ffff;
		break;
	case IORING_OP_POLL_REMOVE:
	case IORING_OP_TIMEOUT_REMOVE:
	case IORING_OP_ASYNC_CANCEL:
		sqe->addr &= 0x3f; /* a user_data of this input */
		/*
		 * A poll update's new user_data is its old one: the teardown
		 * counts each SQE's final CQE by user_data.
		 */
		if (fz_wide && sqe->opcode == IORING_OP_POLL_REMOVE &&
		    (sqe->len & IORING_POLL_UPDATE_USER_DATA))
			sqe->addr2 = sqe->addr;
		else
			sqe->addr2 = map_addr(sqe->addr2, 16);
		break;
	case IORING_OP_TIMEOUT:
	case IORING_OP_LINK_TIMEOUT:
		sqe->addr = map_addr(sqe->addr, 16);
		/* Mostly the one valid len, and a short time: they fire. */
		if (!(sqe->len & 0x80000000))
			sqe->len = 1;
		if (sqe->len == 1 && !(sqe->off & 0x100))
			fix_timespec(sqe->addr);
		break;
	case IORING_OP_PROVIDE_BUFFERS:
		sqe->fd &= 63; /* the number of buffers */
		sqe->len &= 0x3fff;
		sqe->addr = map_addr(sqe->addr, (size_t)sqe->len * sqe->fd);
		return;
	case IORING_OP_REMOVE_BUFFERS:
		sqe->fd &= 63;
		return;
	case IORING_OP_FALLOCATE:
		sqe->addr &= 0xfffff; /* the length */
		break;
	case IORING_OP_FILES_UPDATE:
		sqe->len &= 31;
		sqe->addr = map_addr(sqe->addr, 4 * sqe->len);
		fix_fd_array(e, sqe->addr, sqe->len);
		break;
	case IORING_OP_MSG_RING:
		sqe->off = FZ_MARK_MSG | (sqe->off & 0xffff);
		sqe->addr &= 3;
		sqe->addr3 &= 15;
		break;
	case IORING_OP_SOCKET:
		sqe->fd = AF_UNIX; /* nothing leaves the machine */
		if (!fz_wide)
			return;
		if (!(sqe->off & 0x80000000U)) /* STREAM, DGRAM, SEQPACKET */
			sqe->off = "\1\2\5"[sqe->off % 3] |
				   (sqe->off & (SOCK_NONBLOCK | SOCK_CLOEXEC));
		sqe->len = 0;
		return;
	case IORING_OP_SEND:
		if (!fz_wide)
			goto plain;
		sqe->addr = map_addr(sqe->addr, 1);
		sqe->addr2 = (sqe->addr2 & 1) ? map_addr(sqe->addr2, 128) : 0;
		sqe->len &= 0x1ffff;
		break;
	case IORING_OP_MADVISE:
		sqe->addr = map_addr(sqe->addr, 4096);
		sqe->len &= 4095;
		sqe->rw_flags &= 0x1f; /* never MADV_HWPOISON (100) */
		break;
	case IORING_OP_SPLICE:
	case IORING_OP_TEE:
		sqe->splice_fd_in = map_fd(e, (uint32_t)sqe->splice_fd_in);
		sqe->len &= 0xfffff;
		break;
	case IORING_OP_EPOLL_CTL:
		/* The fd is in off (wide); len, the op, was mapped before. */
		if (fz_wide)
			sqe->off = (uint64_t)(uint32_t)map_fd(
				e, (uint32_t)sqe->off);
		else
			sqe->len = (uint32_t)map_fd(e, sqe->len);
		sqe->addr = map_addr(sqe->addr, 16);
		break;
	case IORING_OP_FSETXATTR:
	case IORING_OP_SETXATTR:
	case IORING_OP_FGETXATTR:
	case IORING_OP_GETXATTR:
		fix_xattr(sqe);
		break;
	case IORING_OP_OPENAT:
	case IORING_OP_OPENAT2:
	case IORING_OP_STATX:
	case IORING_OP_RENAMEAT:
	case IORING_OP_LINKAT:
	case IORING_OP_SYMLINKAT:
	case IORING_OP_UNLINKAT:
	case IORING_OP_MKDIRAT:
		fix_paths(sqe, e);
		break;
	default:
plain:
		if (sqe->addr || !fz_wide) /* 0 stays: a tidied field */
			sqe->addr = map_addr(sqe->addr, 1);
		sqe->len &= 0x1ffff;
		break;
	}
	if (sqe->flags & IOSQE_FIXED_FILE)
		sqe->fd &= 15;
	else
		sqe->fd = map_fd(e, (uint32_t)sqe->fd);
}

/*
 * Most SQEs are tidied first (personality bits 0-1 not 3): the fields the
 * opcode does not read are cleared and its flag fields keep only the bits
 * the kernel knows, so that prep passes and issue is reached; the rest
 * stay raw, for the checks of bad input.
 */
enum {
	U_OFF = 1,    /* off / addr2 */
	U_ADDR = 2,   /* addr / splice_off_in */
	U_LEN = 4,    /* len */
	U_BUF = 8,    /* buf_index / buf_group */
	U_FIDX = 16,  /* splice_fd_in / file_index / addr_len */
	U_ADDR3 = 32, /* addr3 */
	U_PAD2 = 64,  /* __pad2 (rw's attributes, cmd bytes) */
};

struct tidy {
	uint8_t used;
	uint8_t ioprio; /* the ioprio bits kept */
	uint32_t rwf;	/* the op flags kept */
};

#define MSGF \
	0x4000c1efU /* OOB PEEK DONTROUTE CTRUNC TRUNC DONTWAIT EOR
			    WAITALL NOSIGNAL MORE CMSG_CLOEXEC */
#define RWF  0x1fU  /* HIPRI DSYNC SYNC NOWAIT APPEND */
#define U_RW (U_OFF | U_ADDR | U_LEN | U_BUF)
#define U_SR (U_OFF | U_ADDR | U_LEN | U_BUF | U_FIDX)

static const struct tidy tidies[64] = {
	[IORING_OP_NOP] = {U_LEN | U_ADDR | U_BUF, 0, 0x3f},
	[IORING_OP_READV] = {U_RW, 0, RWF},
	[IORING_OP_WRITEV] = {U_RW, 0, RWF},
	[IORING_OP_FSYNC] = {U_OFF | U_LEN, 0, 1},
	[IORING_OP_READ_FIXED] = {U_RW, 0, RWF},
	[IORING_OP_WRITE_FIXED] = {U_RW, 0, RWF},
	[IORING_OP_POLL_ADD] = {U_LEN, 0, 0x1000201fU},
	[IORING_OP_POLL_REMOVE] = {U_ADDR | U_OFF | U_LEN, 0, 0x1000201fU},
	[IORING_OP_SYNC_FILE_RANGE] = {U_OFF | U_LEN, 0, 7},
	[IORING_OP_SENDMSG] = {U_ADDR | U_LEN | U_BUF, 0x1f, MSGF},
	[IORING_OP_RECVMSG] = {U_ADDR | U_LEN | U_BUF, 0x1f, MSGF},
	[IORING_OP_TIMEOUT] = {U_OFF | U_ADDR | U_LEN, 0, 0x7f},
	[IORING_OP_TIMEOUT_REMOVE] = {U_OFF | U_ADDR, 0, 0x7f},
	[IORING_OP_ACCEPT] = {U_OFF | U_ADDR | U_FIDX, 7, 0x80800},
	[IORING_OP_ASYNC_CANCEL] = {U_ADDR, 0, 0x3f},
	[IORING_OP_LINK_TIMEOUT] = {U_ADDR | U_LEN, 0, 0x7f},
	[IORING_OP_CONNECT] = {U_ADDR | U_OFF, 0, 0},
	[IORING_OP_FALLOCATE] = {U_OFF | U_ADDR | U_LEN, 0, 0},
	[IORING_OP_OPENAT] = {U_ADDR | U_LEN | U_FIDX, 0, 0x3ffffff},
	[IORING_OP_CLOSE] = {U_FIDX, 0, 0},
	[IORING_OP_FILES_UPDATE] = {U_OFF | U_ADDR | U_LEN, 0, 0},
	[IORING_OP_STATX] = {U_OFF | U_ADDR | U_LEN, 0, 0x7900},
	[IORING_OP_READ] = {U_RW, 0, RWF},
	[IORING_OP_WRITE] = {U_RW, 0, RWF},
	[IORING_OP_FADVISE] = {U_OFF | U_LEN, 0, 7},
	[IORING_OP_MADVISE] = {U_ADDR | U_LEN, 0, 0x1f},
	[IORING_OP_SEND] = {U_SR, 0x1f, MSGF},
	[IORING_OP_RECV] = {U_ADDR | U_LEN | U_BUF, 0x1f, MSGF},
	[IORING_OP_OPENAT2] = {U_OFF | U_ADDR | U_LEN | U_FIDX, 0, 0},
	[IORING_OP_EPOLL_CTL] = {U_OFF | U_ADDR | U_LEN, 0, 0},
	[IORING_OP_SPLICE] = {U_OFF | U_ADDR | U_LEN | U_FIDX, 0, 0x8000000f},
	[IORING_OP_PROVIDE_BUFFERS] = {U_OFF | U_ADDR | U_LEN | U_BUF, 0, 0},
	[IORING_OP_REMOVE_BUFFERS] = {U_BUF, 0, 0},
	[IORING_OP_TEE] = {U_LEN | U_FIDX, 0, 0x8000000f},
	[IORING_OP_SHUTDOWN] = {U_LEN, 0, 0},
	[IORING_OP_RENAMEAT] = {U_OFF | U_ADDR | U_LEN, 0, 7},
	[IORING_OP_UNLINKAT] = {U_ADDR, 0, 0x200},
	[IORING_OP_MKDIRAT] = {U_ADDR | U_LEN, 0, 0},
	[IORING_OP_SYMLINKAT] = {U_OFF | U_ADDR, 0, 0},
	[IORING_OP_LINKAT] = {U_OFF | U_ADDR | U_LEN, 0, 0x1400},
	[IORING_OP_MSG_RING] = {U_OFF | U_ADDR | U_LEN | U_FIDX | U_ADDR3, 0,
				3},
	[IORING_OP_FSETXATTR] = {U_OFF | U_ADDR | U_LEN, 0, 3},
	[IORING_OP_SETXATTR] = {U_OFF | U_ADDR | U_LEN | U_ADDR3, 0, 3},
	[IORING_OP_FGETXATTR] = {U_OFF | U_ADDR | U_LEN, 0, 0},
	[IORING_OP_GETXATTR] = {U_OFF | U_ADDR | U_LEN | U_ADDR3, 0, 0},
	[IORING_OP_SOCKET] = {U_OFF | U_FIDX, 0, 0},
	[IORING_OP_URING_CMD] = {U_OFF | U_ADDR | U_ADDR3 | U_FIDX | U_LEN, 0,
				 1},
	[IORING_OP_SEND_ZC] = {U_SR, 0x1f, MSGF},
	[IORING_OP_SENDMSG_ZC] = {U_ADDR | U_LEN | U_BUF, 0x1f, MSGF},
	[NW_OP_READ_MULTISHOT] = {U_LEN | U_BUF, 0, 0},
	[NW_OP_WAITID] = {U_OFF | U_LEN | U_FIDX, 0, 0},
	[NW_OP_FUTEX_WAIT] = {U_OFF | U_ADDR | U_ADDR3, 0, 0},
	[NW_OP_FUTEX_WAKE] = {U_OFF | U_ADDR | U_ADDR3, 0, 0},
	[NW_OP_FUTEX_WAITV] = {U_ADDR | U_LEN, 0, 0},
	[NW_OP_FIXED_FD_INSTALL] = {0, 0, 1},
	[NW_OP_FTRUNCATE] = {U_OFF, 0, 0},
	[NW_OP_BIND] = {U_OFF | U_ADDR, 0, 0},
	[NW_OP_LISTEN] = {U_LEN, 0, 0},
	[NW_OP_RECV_ZC] = {U_LEN | U_BUF, 0x1f, 0},
	[NW_OP_EPOLL_WAIT] = {U_ADDR | U_LEN, 0, 0},
	[NW_OP_READV_FIXED] = {U_RW, 0, RWF},
	[NW_OP_WRITEV_FIXED] = {U_RW, 0, RWF},
	[NW_OP_PIPE] = {U_ADDR | U_FIDX, 0, 0x84800},
};

/* A file_index: none, a slot of the table (16), or "allocate". */
static uint32_t tidy_file_index(uint32_t raw)
{
	if (!(raw & 0x30))
		return 0;
	return (raw & 0x80000000U) ? IORING_FILE_INDEX_ALLOC : raw & 15;
}

static void tidy_len(struct io_uring_sqe *sqe)
{
	switch (sqe->opcode) {
	case IORING_OP_POLL_ADD:
		sqe->len &= IORING_POLL_ADD_MULTI | IORING_POLL_ADD_LEVEL;
		break;
	case IORING_OP_POLL_REMOVE:
		sqe->len &= 7;
		break;
	case IORING_OP_SHUTDOWN:
		sqe->len %= 3;
		break;
	case IORING_OP_EPOLL_CTL:
		sqe->len = 1 + sqe->len % 3; /* ADD, DEL, MOD */
		break;
	case NW_OP_WAITID:
		sqe->len %= 4; /* P_ALL, P_PID, P_PGID, P_PIDFD */
		break;
	case IORING_OP_FALLOCATE:
		sqe->len &= 0x7f;
		break;
	case IORING_OP_NOP:
		sqe->len &= 0xff;
		break;
	}
}

static void tidy(struct io_uring_sqe *sqe)
{
	const struct tidy *t = &tidies[sqe->opcode & 63];

	sqe->flags &= 0x7f;
	sqe->ioprio &= t->ioprio;
	sqe->rw_flags &= t->rwf;
	if (!(t->used & U_OFF))
		sqe->off = 0;
	if (!(t->used & U_ADDR))
		sqe->addr = 0;
	if (!(t->used & U_LEN))
		sqe->len = 0;
	if (!(t->used & U_BUF))
		sqe->buf_index = 0;
	else
		sqe->buf_index &= 3; /* a registered buffer, a group */
	if (!(t->used & U_FIDX))
		sqe->splice_fd_in = 0;
	else if (sqe->opcode != IORING_OP_SPLICE &&
		 sqe->opcode != IORING_OP_TEE &&
		 sqe->opcode != IORING_OP_URING_CMD)
		sqe->file_index = tidy_file_index(sqe->file_index);
	if (!(t->used & U_ADDR3))
		sqe->addr3 = 0;
	if (!(t->used & U_PAD2))
		sqe->__pad2[0] = 0;
	tidy_len(sqe);
}

void fz_sanitize(struct fz_env *e, struct io_uring_sqe *sqe)
{
	unsigned int sel = sqe->personality;

	if (!fz_wide) {
		/* As before: opcodes to 48, nothing tidied, no personality. */
		sqe->opcode %= 52;
		if (sqe->opcode >= 49)
			sqe->opcode = 250;
		sqe->flags &= (uint8_t)~IOSQE_CQE_SKIP_SUCCESS;
		sqe->personality = 0;
		fix_addrs(sqe, e);
		return;
	}
	/* Every opcode of the table; 63 stands for the unknown ones. */
	sqe->opcode %= 64;
	if (sqe->opcode == 63)
		sqe->opcode = 250;
	if ((sel & 3) != 3)
		tidy(sqe);
	/* The teardown counts CQEs: a skipped success would look lost. */
	sqe->flags &= (uint8_t)~IOSQE_CQE_SKIP_SUCCESS;
	/* A registered personality now and then (creds.c), or a bad one. */
	sqe->personality = 0;
	if ((sel & 0x1c) == 0x1c)
		sqe->personality = e->pers_id ? (uint16_t)e->pers_id : 7;
	fix_addrs(sqe, e);
}

unsigned int fz_setup_flags(unsigned int i, unsigned int *entries,
			    unsigned int *cq_entries)
{
	static const unsigned int flags[FZ_NSETUPS] = {
		0,
		IORING_SETUP_SQPOLL,
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_CQSIZE,
		IORING_SETUP_SUBMIT_ALL,
		IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		IORING_SETUP_CQE32 | IORING_SETUP_SQE128,
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			IORING_SETUP_CQSIZE,
	};

	*entries = 8;
	*cq_entries = 0;
	i %= FZ_NSETUPS;
	if (flags[i] & IORING_SETUP_CQSIZE)
		*cq_entries = 8; /* small: overflow is reached */
	return flags[i];
}

void fz_final_count(struct fz_finals *f, uint64_t ud,
		    const struct io_uring_cqe *c)
{
	if (c->flags & IORING_CQE_F_NOTIF) {
		if (f->notifs[ud]++) {
			fprintf(stderr,
				"fuzz: a second notification for SQE %llu\n",
				(unsigned long long)ud);
			abort();
		}
		/* The result had F_MORE, or was already final. */
		if (!f->finals[ud]++)
			f->nfinal++;
	} else if (c->flags & IORING_CQE_F_MORE) {
		if (f->more[ud] < 255)
			f->more[ud]++;
	} else {
		if (f->finals[ud]++) {
			fprintf(stderr,
				"fuzz: a second final CQE for SQE %llu (res "
				"%d)\n",
				(unsigned long long)ud, c->res);
			abort();
		}
		f->nfinal++;
	}
}

void fz_final_note(struct fz_finals *f, const struct io_uring_sqe *sqe)
{
	uint64_t ud = sqe->user_data;

	if (ud >= 1 && ud <= FZ_MAX_SQES) {
		f->op[ud] = sqe->opcode;
		f->sflags[ud] = sqe->flags;
	}
}

uint64_t fz_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* What is missing now (a hang when fatal; FZ_REAP_NOTE: a slow reap). */
static void final_report(const struct fz_finals *f, const struct t_ring *r,
			 unsigned int consumed, unsigned int queued,
			 uint64_t waited_us, bool fatal);

uint64_t fz_reap_finals(const struct fz_finals *f, struct t_ring *r,
			const struct fz_reaper *o, void *u)
{
	uint64_t t0 = fz_now_us(), waited = 0;
	bool noted = false;

	for (unsigned int i = 0;; i++) {
		o->reap(u);
		/*
		 * Nothing left unconsumed first, then the count: the other
		 * order reads the SQ head twice, and an SQPOLL poller that
		 * consumes between the two reads makes a stale count pass
		 * (the missing CQEs of the 600 s runs; they were on their way).
		 */
		if (!t_ring_flush(r) && f->nfinal >= o->consumed(u))
			break;
		waited = fz_now_us() - t0;
		if (waited > FZ_REAP_LIMIT_S * 1000000ULL)
			break; /* a hang: the caller reports it */
		if (!noted && (waited > 1000000 || i >= 5000) &&
		    getenv("FZ_REAP_NOTE")) {
			/* The old cut (5000 rounds): is it slowness? */
			unsigned int c = o->consumed(u);

			fprintf(stderr, "fuzz-note: slow reap, %u rounds:\n",
				i);
			final_report(f, r, c, c, waited, false);
			noted = true;
		}
		if (i % o->again_every == o->again_every - 1)
			o->again(u);
		o->wait(u);
	}
	o->reap(u);
	if (noted)
		fprintf(stderr,
			"fuzz-note: slow reap ended after %llu ms: %u finals\n",
			(unsigned long long)(waited / 1000), f->nfinal);
	return waited;
}

int fz_enter(int fd, unsigned int to_submit, unsigned int min_complete,
	     unsigned int flags, unsigned int us)
{
	struct __kernel_timespec ts = {.tv_nsec = (long long)us * 1000};
	struct io_uring_getevents_arg arg = {.ts = (uint64_t)(uintptr_t)&ts};

	if (flags & IORING_ENTER_GETEVENTS)
		return nowait_enter(fd, to_submit, min_complete,
				    flags | IORING_ENTER_EXT_ARG, &arg,
				    sizeof(arg));
	return nowait_enter(fd, to_submit, min_complete,
			    flags & ~IORING_ENTER_EXT_ARG, NULL, 0);
}

void fz_sqe_from_input(struct fz_env *e, struct fz_finals *f,
		       struct io_uring_sqe *sqe, const uint8_t *p, uint64_t ud)
{
	memcpy(sqe, p, sizeof(*sqe));
	fz_sanitize(e, sqe);
	sqe->user_data = ud;
	fz_final_note(f, sqe);
}

static void final_report(const struct fz_finals *f, const struct t_ring *r,
			 unsigned int consumed, unsigned int queued,
			 uint64_t waited_us, bool fatal)
{
	const char *w = fatal ? "fuzz" : "fuzz-note";

	fprintf(stderr,
		"%s: %d SQEs consumed, %u final CQEs after %llu ms of "
		"reaping:",
		w, (int)consumed, f->nfinal,
		(unsigned long long)(waited_us / 1000));
	for (unsigned int i = 1; i <= queued && i <= FZ_MAX_SQES; i++)
		if (!f->finals[i])
			fprintf(stderr, " %u", i);
	fprintf(stderr, " missing\n");
	for (unsigned int i = 1; i <= queued && i <= FZ_MAX_SQES; i++)
		if (!f->finals[i])
			fprintf(stderr,
				"%s:   SQE %u: opcode %u flags 0x%x, %u CQEs "
				"with F_MORE, %u notifications\n",
				w, i, f->op[i], f->sflags[i], f->more[i],
				f->notifs[i]);
	fprintf(stderr,
		"%s:   SQ head %u tail %u flags 0x%x dropped %u; CQ head %u "
		"tail %u overflow %u flags 0x%x; %u queued\n",
		w, *r->sq_head, *r->sq_tail, *r->sq_flags, *r->sq_dropped,
		*r->cq_head, *r->cq_tail, *r->cq_overflow,
		r->cq_flags ? *r->cq_flags : 0, queued);
	if (fatal) {
		/* FZ_HANG_DUMP=FILE: every thread's stack, to see the wait. */
		const char *dump = getenv("FZ_HANG_DUMP");
		char cmd[512];

		if (dump) {
			snprintf(cmd, sizeof(cmd),
				 "gdb -p %d -batch -ex 'info threads' -ex "
				 "'thread apply all bt' >>%s 2>&1",
				 (int)getpid(), dump);
			if (system(cmd))
				fprintf(stderr, "fuzz: no dump (%s)\n", cmd);
		}
		abort();
	}
}

void fz_final_missing(const struct fz_finals *f, const struct t_ring *r,
		      unsigned int consumed, unsigned int queued,
		      uint64_t waited_us)
{
	final_report(f, r, consumed, queued, waited_us, true);
}
