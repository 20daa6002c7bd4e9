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
#include <unistd.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include "fuzzenv.h"

static uint8_t *arena;
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
	/* The page after the arena is unmapped: "bad" addresses land there. */
	munmap(arena + FZ_ARENA, 4096);
	snprintf(scratch, sizeof(scratch), "/tmp/nowait-fuzz.%d", getpid());
	mkdir(scratch, 0700);
	if (chdir(scratch))
		abort();
	memset(long_name, 'n', sizeof(long_name) - 1);
	getrlimit(RLIMIT_NOFILE, &rl);
	/* The engine keeps its own fds from half the limit up (fdhigh.c). */
	fd_limit = (int)(rl.rlim_cur / 2 < 1024 ? rl.rlim_cur / 2 : 1024);
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

static void put_fd(struct fz_env *e, int slot, int fd)
{
	int want = FZ_FD_BASE + slot;

	if (fd < 0) {
		e->fd[slot] = fd;
		return;
	}
	if (fd != want) {
		if (dup2(fd, want) < 0)
			abort();
		close(fd);
	}
	e->fd[slot] = want;
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
	if (c < 0 || connect(c, (void *)&a, sizeof(a)))
		abort();
	s = accept(l, NULL, NULL);
	if (s < 0)
		abort();
	put_fd(e, 12, c);
	put_fd(e, 13, s);
	put_fd(e, 14, l);
}

void fz_env_open(struct fz_env *e, const uint8_t *data, size_t size)
{
	static const char content[] = "0123456789abcdef";
	int p[2], s[2], f;

	snapshot_fds();
	e->arena = arena;
	for (size_t i = 0; i < FZ_ARENA; i++)
		arena[i] = (uint8_t)(i * 37 + 11);
	memcpy(arena, data, size < FZ_ARENA ? size : FZ_ARENA);
	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		abort();
	put_fd(e, 0, p[0]);
	put_fd(e, 1, p[1]);
	put_fd(e, 2, s[0]);
	put_fd(e, 3, s[1]);
	f = open("f0", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (f < 0)
		abort();
	for (int i = 0; i < 256; i++)
		if (write(f, content, 16) != 16)
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
	for (int fd = 3; fd < fd_limit; fd++)
		if (fd >= 1024 || !preexisting[fd])
			close(fd);
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

static void fix_addrs(struct io_uring_sqe *sqe, struct fz_env *e)
{
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
	case IORING_OP_MADVISE:
		sqe->addr = map_addr(sqe->addr, 4096);
		sqe->len &= 4095;
		break;
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
		return;
	case IORING_OP_SPLICE:
	case IORING_OP_TEE:
		sqe->splice_fd_in = map_fd(e, (uint32_t)sqe->splice_fd_in);
		sqe->len &= 0xfffff;
		break;
	case IORING_OP_EPOLL_CTL:
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
		sqe->addr = map_addr(sqe->addr, 1);
		sqe->len &= 0x1ffff;
		break;
	}
	if (sqe->flags & IOSQE_FIXED_FILE)
		sqe->fd &= 15;
	else
		sqe->fd = map_fd(e, (uint32_t)sqe->fd);
}

void fz_sanitize(struct fz_env *e, struct io_uring_sqe *sqe)
{
	/* Opcodes past nowait's table: one unknown number stands for all. */
	sqe->opcode %= 52;
	if (sqe->opcode >= 49)
		sqe->opcode = 250;
	/* The teardown counts CQEs: a skipped success would look lost. */
	sqe->flags &= (uint8_t)~IOSQE_CQE_SKIP_SUCCESS;
	sqe->personality = 0;
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
