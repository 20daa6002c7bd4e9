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
 * Limits: a program that blocks or ignores SIGSYS when it makes an
 * io_uring call is killed by the kernel ("Bad system call"); an exec'd
 * image without this library (static, or a cleared environment) is too.
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
#include <ucontext.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <nowait.h>
#include <nowait-hook.h>
#include "uring-filter.h"

#define EXPORT __attribute__((visibility("default")))

/* readiness.c: ring fds in poll, select and epoll. */
void nw_readiness_fd_range_closing(unsigned int first, unsigned int last);
bool nw_readiness_syscall(long nr, const long *a, long *res);

static long (*real_syscall)(long nr, ...);
static int user_mode; /* 1: io_uring calls go to the engine */

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
		return nowait_enter((int)a[0], (unsigned int)a[1],
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

void nw_preload_fd_range_closing(unsigned int first, unsigned int last);
void nw_preload_fd_range_closing(unsigned int first, unsigned int last)
{
	if (user_mode) {
		nowait_hook_fd_range_closing(first, last);
		nw_readiness_fd_range_closing(first, last);
	}
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
	if (!user_mode || !is_uring(nr))
		return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	r = engine_call(nr, a);
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

	g[REG_RAX] = is_uring(si->si_syscall) ? engine_call(si->si_syscall, a)
					      : -ENOSYS;
	errno = saved;
}

/* Trap io_uring_setup/enter/register (425-427) on x86-64, allow the rest. */
static int install_filter(void)
{
	struct sock_filter f[] = NW_URING_FILTER(SECCOMP_RET_TRAP);
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	/* TSYNC: threads that exist already get the filter too. */
	if (real_syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			 SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
		return -errno;
	return 0;
}

/* auto: does the kernel's io_uring work here? 0, or the errno it gave. */
static int probe_kernel(void)
{
	struct io_uring_params p;
	long fd;

	memset(&p, 0, sizeof(p));
	fd = real_syscall(__NR_io_uring_setup, 1, &p);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcmp(v, value);
}

__attribute__((constructor)) static void uring_preload_init(void)
{
	bool log = env_is("NOWAIT_LOG", "1");
	const char *why = "NOWAIT_MODE=user";
	int err = 0, ret;

	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (env_is("NOWAIT_MODE", "kernel")) {
		if (log)
			fprintf(stderr, "nowait: kernel io_uring (NOWAIT_MODE"
					"=kernel)\n");
		return;
	}
	if (!env_is("NOWAIT_MODE", "user")) {
		err = probe_kernel();
		if (!err) {
			if (log)
				fprintf(stderr, "nowait: kernel io_uring "
						"(available; auto mode)\n");
			setenv("NOWAIT_MODE", "kernel", 1);
			return;
		}
		why = strerror(err);
		log = true; /* a fallback is always said */
		setenv("NOWAIT_MODE", "user", 1);
	}
	ret = install_filter();
	if (ret) {
		fprintf(stderr,
			"nowait: cannot trap io_uring calls (%s): "
			"only libc syscall() callers reach the "
			"engine\n",
			strerror(-ret));
	}
	user_mode = 1;
	if (log)
		fprintf(stderr, "nowait: user-space engine (%s%s)\n",
			err ? "kernel io_uring_setup failed: " : "", why);
}
