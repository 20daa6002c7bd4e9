/* SPDX-License-Identifier: MIT */
/*
 * The preload's site patcher (preload/patch.c, docs/syscall-patching.md):
 * inline `syscall` sites for io_uring_enter of the shapes it rewrites
 * (fio t/io_uring's `mov $426,%eax; mov %r13d,%esi; syscall`, two moves,
 * the bare pair, one that keeps vector and argument registers live across
 * it) are run by 4 threads at once from their first call, so that the
 * rewrite happens while others execute the site: every enter returns the
 * number of NOPs it submitted and waited for, the CQEs are all there, the
 * registers a `syscall` preserves (xmm0, xmm8, rdi, rsi, rdx, r10, r8, r9)
 * are preserved, and afterwards the preload's trap count
 * (nowait_preload_traps) no longer moves while nowait_preload_patched
 * counts the four sites (five with AVX: one keeps ymm0's upper half
 * live); a forked child runs them too. A site outside the
 * whitelist (its argument read from memory) traps at every call and
 * works; with NOWAIT_PATCH=0 nothing is rewritten and every call traps;
 * NOWAIT_PATCH=xsave and =sse run the stub's other two ways of keeping
 * the vector registers.
 * The kernel run executes the same sites on the kernel's io_uring.
 */
#include <dlfcn.h>
#include <limits.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/wait.h>
#include "helpers.h"

#define CHILD_ENV "NOWAIT_TEST_PRELOAD_PATCH_CHILD"
#define THREADS	  4
#define ROUNDS	  400
#define AFTER	  200

#if defined(__clang__)
#define SITE_FN __attribute__((noinline))
#else
#define SITE_FN __attribute__((noinline, noipa))
#endif

/* fio t/io_uring's shape: the to_submit move between mov and syscall. */
SITE_FN static long site_fio(int fd, unsigned int n, unsigned int min,
			     unsigned int flags)
{
	register long r13 __asm__("r13") = n;
	register long r10 __asm__("r10") = flags;
	register long r8 __asm__("r8") = 0;
	register long r9 __asm__("r9") = 0;
	long r;

	__asm__ volatile("movl $426, %%eax\n\t"
			 "movl %%r13d, %%esi\n\t"
			 "syscall"
			 : "=a"(r)
			 : "D"((long)fd), "r"(r13), "d"((long)min), "r"(r10),
			   "r"(r8), "r"(r9)
			 : "rsi", "rcx", "r11", "memory");
	return r;
}

/* Two moves: min_complete from r12, the argument zeroed by xor. */
SITE_FN static long site_two(int fd, unsigned int n, unsigned int min,
			     unsigned int flags)
{
	register long r12 __asm__("r12") = min;
	register long r10 __asm__("r10") = flags;
	register long r8 __asm__("r8") = 0x1234;
	register long r9 __asm__("r9") = 0;
	long r;

	__asm__ volatile("movl $426, %%eax\n\t"
			 "movl %%r12d, %%edx\n\t"
			 "xorl %%r8d, %%r8d\n\t"
			 "syscall"
			 : "=a"(r), "+r"(r8)
			 : "D"((long)fd), "S"((long)n), "r"(r12), "r"(r10),
			   "r"(r9)
			 : "rdx", "rcx", "r11", "memory");
	return r;
}

/* liburing's own shape: the bare pair. */
SITE_FN static long site_pair(int fd, unsigned int n, unsigned int min,
			      unsigned int flags)
{
	register long r10 __asm__("r10") = flags;
	register long r8 __asm__("r8") = 0;
	register long r9 __asm__("r9") = 0;
	long r;

	__asm__ volatile("movl $426, %%eax\n\t"
			 "syscall"
			 : "=a"(r)
			 : "D"((long)fd), "S"((long)n), "d"((long)min),
			   "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return r;
}

/* Outside the whitelist: to_submit read from memory. Keeps trapping. */
SITE_FN static long site_mem(int fd, unsigned int n, unsigned int min,
			     unsigned int flags)
{
	register const unsigned int *r12 __asm__("r12") = &n;
	register long r10 __asm__("r10") = flags;
	register long r8 __asm__("r8") = 0;
	register long r9 __asm__("r9") = 0;
	long r;

	__asm__ volatile("movl $426, %%eax\n\t"
			 "movl (%%r12), %%esi\n\t"
			 "syscall"
			 : "=a"(r)
			 : "D"((long)fd), "r"(r12), "d"((long)min), "r"(r10),
			   "r"(r8), "r"(r9)
			 : "rsi", "rcx", "r11", "memory");
	return r;
}

/* What a `syscall` preserves, live across the site. */
struct live {
	long rdi, rsi, rdx, r10, r8, r9, x0, x8;
};

/* The fio shape with xmm0, xmm8 and the argument registers kept live. */
SITE_FN static long site_regs(int fd, unsigned int n, unsigned int min,
			      unsigned int flags, struct live *l)
{
	register long r13 __asm__("r13") = n;
	register long r10 __asm__("r10") = flags;
	register long r8 __asm__("r8") = 0;
	register long r9 __asm__("r9") = 0;
	register long r14 __asm__("r14") = 0x0123456789abcdefL;
	register long r15 __asm__("r15") = 0x7edcba9876543210L;
	long rdi = fd, rsi = 0, rdx = min, r;

	__asm__ volatile("movq %%r14, %%xmm0\n\t"
			 "movq %%r15, %%xmm8\n\t"
			 "movl $426, %%eax\n\t"
			 "movl %%r13d, %%esi\n\t"
			 "syscall\n\t"
			 "movq %%xmm0, %%r14\n\t"
			 "movq %%xmm8, %%r15"
			 : "=a"(r), "+D"(rdi), "+S"(rsi), "+d"(rdx), "+r"(r10),
			   "+r"(r8), "+r"(r9), "+r"(r14), "+r"(r15)
			 : "r"(r13)
			 : "rcx", "r11", "xmm0", "xmm8", "memory");
	*l = (struct live){rdi, rsi, rdx, r10, r8, r9, r14, r15};
	return r;
}

/*
 * The fio shape with ymm0's upper half in use (AVX): the stub must keep
 * it. Returns the upper half's low quadword; *r the result.
 */
SITE_FN static long site_ymm(int fd, unsigned int n, long *r)
{
	register long r13 __asm__("r13") = n;
	register long r10 __asm__("r10") = IORING_ENTER_GETEVENTS;
	register long r8 __asm__("r8") = 0;
	register long r9 __asm__("r9") = 0;
	register long r14 __asm__("r14") = 0x5a5a5a5a12345678L;

	__asm__ volatile("vmovq %%r14, %%xmm0\n\t"
			 "vinsertf128 $1, %%xmm0, %%ymm0, %%ymm0\n\t"
			 "movl $426, %%eax\n\t"
			 "movl %%r13d, %%esi\n\t"
			 "syscall\n\t"
			 "vextractf128 $1, %%ymm0, %%xmm0\n\t"
			 "vmovq %%xmm0, %%r14\n\t"
			 "vzeroupper"
			 : "=a"(*r), "+r"(r14)
			 : "D"((long)fd), "r"(r13), "d"((long)n), "r"(r10),
			   "r"(r8), "r"(r9)
			 : "rsi", "rcx", "r11", "xmm0", "memory");
	return r14;
}

typedef long (*site_fn)(int, unsigned int, unsigned int, unsigned int);

static unsigned long (*trap_count)(void), (*patch_count)(void);

static unsigned long traps(void)
{
	return trap_count ? trap_count() : 0;
}

/* n NOPs through site, waited for; their CQEs checked. */
static void nops_via(struct t_ring *r, site_fn site, unsigned int n,
		     uint64_t ud)
{
	struct io_uring_cqe cqe;

	for (unsigned int i = 0; i < n; i++)
		t_prep_nop(t_get_sqe(r), ud + i);
	t_ring_flush(r);
	T_ASSERT_EQ(site(r->fd, n, n, IORING_ENTER_GETEVENTS), n);
	for (unsigned int i = 0; i < n; i++) {
		T_ASSERT_EQ(t_peek_cqe(r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, ud + i);
		T_ASSERT_EQ(cqe.res, 0);
	}
	T_ASSERT_EQ(t_peek_cqe(r, &cqe), -EAGAIN);
}

/* An OPENAT prepared in the next SQE (the engine copies its path). */
static void prep_open(struct t_ring *r, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = IORING_OP_OPENAT;
	sqe->fd = AT_FDCWD;
	sqe->addr = (uintptr_t) "/dev/null";
	sqe->open_flags = O_RDONLY | O_CLOEXEC;
	sqe->user_data = ud;
	t_ring_flush(r);
}

static void reap_open(struct t_ring *r, uint64_t ud)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_peek_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, ud);
	T_ASSERT_GE(cqe.res, 0);
	close(cqe.res);
}

/*
 * The register-preserving site, with an OPENAT: the engine copies the
 * path (string routines that use the vector registers). Its result and
 * every live register checked.
 */
static void regs_via(struct t_ring *r, uint64_t ud)
{
	struct live l;

	prep_open(r, ud);
	T_ASSERT_EQ(site_regs(r->fd, 1, 1, IORING_ENTER_GETEVENTS, &l), 1);
	T_ASSERT_EQ(l.rdi, r->fd);
	T_ASSERT_EQ(l.rsi, 1);
	T_ASSERT_EQ(l.rdx, 1);
	T_ASSERT_EQ(l.r10, IORING_ENTER_GETEVENTS);
	T_ASSERT_EQ(l.r8, 0);
	T_ASSERT_EQ(l.r9, 0);
	T_ASSERT_EQ(l.x0, 0x0123456789abcdefL);
	T_ASSERT_EQ(l.x8, 0x7edcba9876543210L);
	reap_open(r, ud);
}

/*
 * NOWAIT_PATCH=sse keeps only the xmm halves: for machines without AVX,
 * so the ymm site is left out of that run.
 */
static bool use_ymm(void)
{
	const char *p = getenv("NOWAIT_PATCH");

	return __builtin_cpu_supports("avx") && !(p && !strcmp(p, "sse"));
}

/* With AVX: an OPENAT through site_ymm, ymm0's upper half kept. */
static void ymm_via(struct t_ring *r, uint64_t ud)
{
	long ret;

	if (!use_ymm())
		return;
	prep_open(r, ud);
	T_ASSERT_EQ(site_ymm(r->fd, 1, &ret), 0x5a5a5a5a12345678L);
	T_ASSERT_EQ(ret, 1);
	reap_open(r, ud);
}

static const site_fn good_sites[] = {site_fio, site_two, site_pair};
static pthread_barrier_t start;

/* One thread: every patchable site from its first call, interleaved. */
static void *hammer(void *arg)
{
	unsigned long id = (unsigned long)arg;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	pthread_barrier_wait(&start);
	for (unsigned int i = 0; i < ROUNDS; i++) {
		uint64_t ud = id << 32 | (uint64_t)i << 8;

		nops_via(&r, good_sites[(i + id) % 3], 1 + (i + id) % 4, ud);
		if (i % 8 == id)
			regs_via(&r, ud | 0xff);
		if (i % 8 == id + 4)
			ymm_via(&r, ud | 0xfe);
	}
	t_ring_exit(&r);
	return NULL;
}

/* Calls made after the hammer: (traps added, the rest checked). */
static unsigned long after_calls(struct t_ring *r, unsigned int n)
{
	unsigned long t0 = traps();

	for (unsigned int i = 0; i < n; i++) {
		nops_via(r, good_sites[i % 3], 1 + i % 3, (uint64_t)i << 4);
		regs_via(r, 0xabc0000 + i);
		ymm_via(r, 0xdef0000 + i);
	}
	return traps() - t0;
}

/* A forked child runs the sites (their stubs are in its copy). */
static void forked(const unsigned long *child_traps)
{
	int status;
	pid_t pid = fork();

	T_ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct t_ring r;

		T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
		_exit(after_calls(&r, 20) == *child_traps ? 0 : 3);
	}
	status = t_waitpid_timeout(pid, 20000);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), 0);
}

static void run_checks(bool counted, bool patching)
{
	unsigned long avx = use_ymm() ? 1 : 0;
	unsigned long sites = 4 + avx, child_want;
	unsigned long per_call = counted && !patching ? 2 + avx : 0;
	pthread_t th[THREADS];
	struct t_ring r;
	unsigned long t0;

	T_ASSERT_EQ(pthread_barrier_init(&start, NULL, THREADS), 0);
	for (unsigned long i = 0; i < THREADS; i++)
		T_ASSERT_EQ(pthread_create(&th[i], NULL, hammer, (void *)i), 0);
	for (int i = 0; i < THREADS; i++)
		T_ASSERT_EQ(pthread_join(th[i], NULL), 0);
	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	/* One call each, single-threaded: a site left to a busy patcher. */
	after_calls(&r, 3);
	T_ASSERT_EQ(after_calls(&r, AFTER), per_call * AFTER);
	if (counted)
		T_ASSERT_EQ(patch_count(), patching ? sites : 0);
	/* Outside the whitelist: one trap per call, and the right result. */
	t0 = traps();
	for (unsigned int i = 0; i < 50; i++)
		nops_via(&r, site_mem, 1 + i % 4, (uint64_t)i << 8);
	T_ASSERT_EQ(traps() - t0, counted ? 50 : 0);
	if (counted)
		T_ASSERT_EQ(patch_count(), patching ? sites : 0);
	child_want = per_call * 20;
	forked(&child_want);
	t_ring_exit(&r);
}

static void child_main(const char *how)
{
	trap_count = (unsigned long (*)(void))dlsym(RTLD_DEFAULT,
						    "nowait_preload_traps");
	patch_count = (unsigned long (*)(void))dlsym(RTLD_DEFAULT,
						     "nowait_preload_patched");
	T_ASSERT(trap_count != NULL);
	T_ASSERT(patch_count != NULL);
	T_ASSERT(t_ring_is_nowait());
	run_checks(true, !strcmp(how, "on"));
}

/*
 * The preloaded child, with NOWAIT_PATCH=patch. In the ASan build the
 * preload (built with ASan too) comes before the runtime in the library
 * list, which ASan would refuse.
 */
static void run_child(const char *so, const char *patch)
{
	char asan[512];
	const char *const env[] = {"NOWAIT_MODE",
				   "user",
				   CHILD_ENV,
				   strcmp(patch, "0") ? "on" : "off",
				   "NOWAIT_PATCH",
				   patch,
				   "NOWAIT_TEST_ENGINE",
				   "kernel",
				   "ASAN_OPTIONS",
				   asan,
				   NULL};
	const char *old = getenv("ASAN_OPTIONS");

	snprintf(asan, sizeof(asan), "%s%sverify_asan_link_order=0",
		 old ? old : "", old && *old ? ":" : "");
	t_run_self(so, env, 40000);
}

int main(void)
{
	char so[PATH_MAX + 32];
	const char *how = getenv(CHILD_ENV);

	t_watchdog(50);
	if (how) {
		child_main(how);
		return T_EXIT_PASS;
	}
	t_require_engine();
	if (t_engine() == T_ENGINE_KERNEL) {
		run_checks(false, false);
		return T_EXIT_PASS;
	}
#if defined(__SANITIZE_THREAD__)
	/* A TSan-built preload dies at load, whatever it runs. */
	printf("skip: the preload library under TSan cannot load\n");
	return T_EXIT_SKIP;
#endif
	if (!t_preload_path(so, sizeof(so))) {
		printf("skip: no %s\n", so);
		return T_EXIT_SKIP;
	}
	run_child(so, "1");
	run_child(so, "0");
	/* The stub's two other ways to keep the vector registers. */
	run_child(so, "xsave");
	run_child(so, "sse");
	return T_EXIT_PASS;
}
