/* SPDX-License-Identifier: MIT */
/*
 * libnowait-preload.so, the io_uring route (the pipe spinner is
 * pipespin.c): the drop-in route for unmodified io_uring programs
 * (LD_PRELOAD, see nowait-run). Two ways in, both ending in
 * nowait_setup/enter/register:
 * - libc's syscall() is interposed for the three io_uring numbers (fio's
 *   setup and register, libuv): the cheap path;
 * - a seccomp filter traps exactly those three numbers (SECCOMP_RET_TRAP,
 *   which takes precedence over a container profile's EPERM) so that
 *   inline `syscall` instructions (liburing on x86-64, fio's enter) raise
 *   SIGSYS; the handler runs the engine and writes the result into the
 *   saved registers, and the program resumes after its syscall.
 * The mode comes from NOWAIT_MODE: auto (default: the kernel's io_uring
 * when a probe ring works, else this engine), user, or kernel. NOWAIT_LOG=1
 * logs the choice; a fallback in auto mode is always logged once.
 *
 * System-wide use (/etc/ld.so.preload, an image's ENV LD_PRELOAD): a
 * process that never calls io_uring is left alone as far as possible.
 * The kernel probe, the decision and the log line wait for its first
 * io_uring call (decide). What cannot wait, in auto and user mode, is the
 * filter and the no_new_privs it needs: the first inline io_uring_setup
 * would otherwise reach the kernel unseen. So from load on, exec'd
 * set-id programs and programs with file capabilities run without their
 * privileges, and an exec'd image without this library (static, or a
 * cleared environment) is killed by its first io_uring call; README.md
 * says so. When auto mode decides for the kernel, the trapped calls are
 * passed on from the trampoline (a page at a fixed address, the one
 * instruction the filter lets through, the same in exec'd children that
 * inherit the filter): a signal per call, which NOWAIT_MODE=kernel
 * avoids (no filter at all).
 * A program on liburing.so.2 reaches the engine without the trap for its
 * submit and wait calls: liburing.c defines them over the library's.
 * libc's mmap is interposed too, for the one mapping a ring fd's file
 * cannot give: a NO_MMAP ring's IOU_PBUF_RING_MMAP rings (pbuf_mmap).
 * Limits: a program that blocks or ignores SIGSYS when it makes an
 * io_uring call is killed by the kernel ("Bad system call").
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <nowait.h>
#include <nowait-abi.h>
#include <nowait-hook.h>
#include "uring-filter.h"

#define EXPORT __attribute__((visibility("default")))

/* readiness.c: ring fds in poll, select and epoll. */
void nw_readiness_fd_range_closing(unsigned int first, unsigned int last);
bool nw_readiness_syscall(long nr, const long *a, long *res);
/* patch.c: rewrite a trapped io_uring_enter site to call the engine. */
void nw_patch_trapped(long nr, void *ctx);

static long (*real_syscall)(long nr, ...);
static int user_mode; /* 1: io_uring calls go to the engine */

/* Modes: decided at load (kernel, user) or at the first io_uring call. */
enum { MODE_KERNEL, MODE_USER, MODE_AUTO };
static int mode = MODE_KERNEL;
static bool log_on, filtered;
static pthread_once_t decide_once = PTHREAD_ONCE_INIT;

static bool is_uring(long nr)
{
	return nr == __NR_io_uring_setup || nr == __NR_io_uring_enter ||
	       nr == __NR_io_uring_register;
}

/* Run one io_uring call on the engine: the kernel's convention, -errno. */
static long engine_call(long nr, const long *a)
{
	switch (nr) {
	case __NR_io_uring_setup:
		return nowait_setup((unsigned int)a[0], (void *)a[1]);
	case __NR_io_uring_enter:
		return nowait_hook_enter((int)a[0], (unsigned int)a[1],
					 (unsigned int)a[2], (unsigned int)a[3],
					 (const void *)a[4], (size_t)a[5]);
	case __NR_io_uring_register:
		return nowait_register((int)a[0], (unsigned int)a[1],
				       (void *)a[2], (unsigned int)a[3]);
	}
	return -ENOSYS;
}

/*
 * read() on a ring fd: the kernel's io_uring file has no read method
 * (-EINVAL); ours is a memfd, which would hand out the ring's bytes.
 * Called by the read() interposer (pipespin.c).
 */
int nw_preload_ring_read(int fd);
int nw_preload_ring_read(int fd)
{
	return user_mode && nowait_hook_is_ring_fd(fd);
}

/*
 * Does the message pass a ring fd (SCM_RIGHTS)? The kernel refuses an
 * io_uring file in a message with -EINVAL (scm_fp_copy, 6.7 on): its
 * rings could otherwise be kept alive by sockets in flight. Ours are
 * memfds, which the kernel lets through.
 */
static bool rights_hold_ring(const struct msghdr *msg)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(msg); c;
	     c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
		size_t n;
		int fd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (nowait_hook_is_ring_fd(fd))
				return true;
		}
	}
	return false;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);

	if (user_mode && msg && msg->msg_control && msg->msg_controllen &&
	    rights_hold_ring(msg)) {
		errno = EINVAL;
		return -1;
	}
	if (!real_sendmsg)
		real_sendmsg = (ssize_t(*)(int, const struct msghdr *,
					   int))dlsym(RTLD_NEXT, "sendmsg");
	if (!real_sendmsg)
		return syscall(SYS_sendmsg, fd, msg, flags);
	return real_sendmsg(fd, msg, flags);
}

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
static mmap_fn real_mmap, real_mmap64;

/*
 * mmap of a ring fd at IORING_OFF_PBUF_RING (the kernel's io_uring_mmap):
 * a NO_MMAP ring's IOU_PBUF_RING_MMAP rings are pages its sealed memfd
 * does not have, which the engine maps (nowait_hook_mmap). Any other
 * mmap costs a test of the offset. Inline mmap system calls are not seen.
 */
static bool pbuf_mmap(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off, void **res)
{
	int r;

	if (fd < 0 ||
	    ((uint64_t)off & IORING_OFF_MMAP_MASK) != IORING_OFF_PBUF_RING ||
	    !nowait_hook_is_ring_fd(fd))
		return false;
	r = nowait_hook_mmap(addr, len, prot, flags, fd, (uint64_t)off, res);
	if (r < 0) {
		errno = -r;
		*res = MAP_FAILED;
	}
	return r != 0;
}

static void *mmap_via(mmap_fn *fn, const char *name, void *addr, size_t len,
		      int prot, int flags, int fd, off_t off)
{
	void *res;

	if (pbuf_mmap(addr, len, prot, flags, fd, off, &res))
		return res;
	if (!*fn)
		*fn = (mmap_fn)dlsym(RTLD_NEXT, name);
	if (!*fn)
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd,
				       off);
	return (*fn)(addr, len, prot, flags, fd, off);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	return mmap_via(&real_mmap, "mmap", addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	return mmap_via(&real_mmap64, "mmap64", addr, len, prot, flags, fd,
			off);
}

/*
 * close(), dup2() and dup3() over a number, close_range() (pipespin.c's
 * interposers, before the real call): the engine's requests parked on
 * the fd keep its file, as on the kernel (nowait_fd_closing). One load
 * when the engine never saw the fd; nothing in kernel mode.
 */
void nw_preload_fd_closing(int fd);
void nw_preload_fd_closing(int fd)
{
	if (user_mode) {
		nowait_hook_fd_closing(fd);
		nw_readiness_fd_range_closing(fd, fd);
	}
}

/*
 * The program wrote to an fd (pipespin.c's write interposers, after the
 * real call): the engine harvests what it made ready for a POLL_ADD, as
 * the kernel's wake-up inside the write does. Nothing in kernel mode.
 */
void nw_preload_wrote(void);
void nw_preload_wrote(void)
{
	if (user_mode)
		nowait_hook_wrote();
}

void nw_preload_fd_range_closing(unsigned int first, unsigned int last);
void nw_preload_fd_range_closing(unsigned int first, unsigned int last)
{
	if (user_mode) {
		nowait_hook_fd_range_closing(first, last);
		nw_readiness_fd_range_closing(first, last);
	}
}

/*
 * The trampoline: `syscall; ret` in a page at a fixed address, in every
 * process that loads this library, so that the filter (inherited across
 * exec, with the address in it) lets through exactly the calls made from
 * there. Arguments as syscall(2)'s: nr in rdi, then rsi, rdx, rcx, r8, r9
 * and the stack. Mapped at first use; NULL if the address is taken.
 */
#define NW_TRAMP_ADDR 0x7e5700000000UL
#define NW_TRAMP_RET  25 /* the filter sees the address after `syscall` */

typedef long (*nw_tramp_fn)(long nr, long a0, long a1, long a2, long a3,
			    long a4, long a5);

static nw_tramp_fn tramp(void)
{
	static const unsigned char code[] = {
		0x48, 0x89, 0xf8,	      /* mov %rdi,%rax */
		0x48, 0x89, 0xf7,	      /* mov %rsi,%rdi */
		0x48, 0x89, 0xd6,	      /* mov %rdx,%rsi */
		0x48, 0x89, 0xca,	      /* mov %rcx,%rdx */
		0x4d, 0x89, 0xc2,	      /* mov %r8,%r10 */
		0x4d, 0x89, 0xc8,	      /* mov %r9,%r8 */
		0x4c, 0x8b, 0x4c, 0x24, 0x08, /* mov 8(%rsp),%r9 */
		0x0f, 0x05,		      /* syscall */
		0xc3,			      /* ret */
	};
	static void *page;
	void *p = __atomic_load_n(&page, __ATOMIC_ACQUIRE);

	_Static_assert(sizeof(code) == NW_TRAMP_RET + 1, "layout");
	if (p)
		return (nw_tramp_fn)p;
	p = mmap((void *)NW_TRAMP_ADDR, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)NW_TRAMP_ADDR) {
		if (p != MAP_FAILED)
			munmap(p, 4096);
		return NULL;
	}
	memcpy(p, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC)) {
		munmap(p, 4096);
		return NULL;
	}
	__atomic_store_n(&page, p, __ATOMIC_RELEASE);
	return (nw_tramp_fn)p;
}

/*
 * An io_uring call for the kernel: -errno on failure. Past a filter (ours,
 * or one inherited: the call came trapped) only from the trampoline.
 */
static long kernel_call(long nr, const long *a, bool trapped)
{
	nw_tramp_fn t;
	long r;

	if (!filtered && !trapped) {
		r = real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		return r < 0 ? -errno : r;
	}
	t = tramp();
	if (!t)
		return -ENOSYS;
	return t(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* auto: does the kernel's io_uring work here? 0, or the errno it gave. */
static int probe_kernel(void)
{
	struct io_uring_params p;
	long fd, a[6] = {1, (long)&p};

	memset(&p, 0, sizeof(p));
	fd = kernel_call(__NR_io_uring_setup, a, false);
	if (fd < 0)
		return (int)-fd;
	close((int)fd);
	return 0;
}

static int filter_err;	    /* install_filter's, said when the engine runs */
static int load_probe = -1; /* NOWAIT_PROBE=load: the probe's errno */

/*
 * The first io_uring call of the process: auto mode probes the kernel now
 * and says which engine runs (a fallback always), user mode says so.
 */
static void decide(void)
{
	const char *why = "NOWAIT_MODE=user";
	int err = 0;

	if (mode == MODE_AUTO) {
		err = load_probe >= 0 ? load_probe : probe_kernel();
		if (!err) {
			mode = MODE_KERNEL;
			setenv("NOWAIT_MODE", "kernel", 1); /* exec'd images */
			if (log_on)
				fprintf(stderr, "nowait: kernel io_uring "
						"(available; auto mode)\n");
			return;
		}
		why = strerror(err);
		log_on = true; /* a fallback is always said */
		setenv("NOWAIT_MODE", "user", 1);
		mode = MODE_USER;
		user_mode = 1;
	}
	if (mode != MODE_USER)
		return;
	if (filter_err)
		fprintf(stderr,
			"nowait: cannot trap io_uring calls (%s): "
			"only libc syscall() callers reach the engine\n",
			strerror(filter_err));
	if (log_on)
		fprintf(stderr, "nowait: user-space engine (%s%s)\n",
			err ? "kernel io_uring_setup failed: " : "", why);
}

/* An io_uring call, from syscall() or trapped: the engine or the kernel. */
static long uring_call(long nr, const long *a, bool trapped)
{
	pthread_once(&decide_once, decide);
	if (user_mode)
		return engine_call(nr, a);
	return kernel_call(nr, a, trapped);
}

/*
 * Does this process run io_uring on the engine? Decided at the first
 * io_uring call (a ring exists by the time liburing.c asks).
 */
bool nw_preload_engine(void);
bool nw_preload_engine(void)
{
	pthread_once(&decide_once, decide);
	return user_mode;
}

static unsigned long traps; /* SIGSYS traps of io_uring calls */

/*
 * The number of io_uring calls this process made by a trapped syscall
 * instruction: for nowait-bench and the tests, which find it with dlsym
 * (the preload's one exported name besides the interposers).
 */
EXPORT unsigned long nowait_preload_traps(void);
EXPORT unsigned long nowait_preload_traps(void)
{
	return __atomic_load_n(&traps, __ATOMIC_RELAXED);
}

/* libc's syscall(): -1 and errno on failure. */
EXPORT long syscall(long nr, ...)
{
	long a[6], r;
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	/* Other libraries' constructors may call us before ours ran. */
	if (!real_syscall)
		real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	/* poll, select and epoll on ring fds: readiness.c */
	if (user_mode && nw_readiness_syscall(nr, a, &r))
		return r;
	if (!is_uring(nr))
		return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	r = uring_call(nr, a, false);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* The trapped syscall instruction: arguments and result in registers. */
static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	int saved = errno;
	long a[6] = {g[REG_RDI], g[REG_RSI], g[REG_RDX],
		     g[REG_R10], g[REG_R8],  g[REG_R9]};

	(void)sig;
	__atomic_fetch_add(&traps, 1, __ATOMIC_RELAXED);
	g[REG_RAX] = is_uring(si->si_syscall)
			     ? uring_call(si->si_syscall, a, true)
			     : -ENOSYS;
	/* Its next runs need no trap where the site allows (patch.c). */
	if (user_mode)
		nw_patch_trapped(si->si_syscall, ctx);
	errno = saved;
}

/*
 * Trap io_uring_setup/enter/register (425-427) on x86-64 but from the
 * trampoline, allow the rest: preload/uring-filter.h's filter with the
 * trampoline's return address let through (seccomp_data's
 * instruction_pointer, low word at 8, high at 12).
 */
static int install_filter(void)
{
	unsigned long ip = NW_TRAMP_ADDR + NW_TRAMP_RET;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __NR_io_uring_setup, 0, 5),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, __NR_io_uring_register, 4,
			 0),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, instruction_pointer)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)ip, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, instruction_pointer) +
				 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)(ip >> 32), 0,
			 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	/* TSYNC: threads that exist already get the filter too. */
	if (real_syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			 SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
		return -errno;
	return 0;
}

/*
 * The SIGSYS handler, always: an image exec'd by a process that decided
 * for the kernel inherits its filter and runs in kernel mode.
 */
static void install_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSYS, &sa, NULL);
}

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcmp(v, value);
}

/*
 * At load: no io_uring call, no line on stderr (decide does both at the
 * first io_uring call), but the filter where one may be needed.
 */
__attribute__((constructor)) static void uring_preload_init(void)
{
	int ret;

	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	real_mmap = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
	nowait_hook_mmap_routed();
	log_on = env_is("NOWAIT_LOG", "1");
	install_handler();
	if (env_is("NOWAIT_MODE", "kernel")) {
		mode = MODE_KERNEL;
		if (log_on)
			fprintf(stderr, "nowait: kernel io_uring (NOWAIT_MODE"
					"=kernel)\n");
		return;
	}
	mode = env_is("NOWAIT_MODE", "user") ? MODE_USER : MODE_AUTO;
	/*
	 * nowait-run's auto mode probes here, before the filter: where the
	 * kernel's io_uring works no filter goes in, so its inline calls cost
	 * no trap. A system-wide preload leaves it to the first call (lazy),
	 * and so does a process under a seccomp filter already: it may be
	 * ours, inherited from a parent still undecided, and trap the probe.
	 */
	if (mode == MODE_AUTO && env_is("NOWAIT_PROBE", "load") &&
	    prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0) {
		load_probe = probe_kernel();
		if (!load_probe) {
			pthread_once(&decide_once, decide);
			return;
		}
	}
	ret = install_filter();
	if (ret)
		filter_err = -ret;
	else
		filtered = true;
	if (mode == MODE_USER)
		user_mode = 1;
}
