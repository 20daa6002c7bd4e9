/* SPDX-License-Identifier: MIT */
/*
 * libnowait-preload.so, the site patcher: an inline `syscall` for
 * io_uring_enter that trapped once (route.c's SIGSYS handler) is rewritten
 * so that its next runs jump to a stub that calls the engine, with no
 * signal. docs/syscall-patching.md is the design and the safety story; in
 * short:
 * - only io_uring_enter, only in user mode, only a site of the shape
 *   `mov $426,%eax; [up to two whitelisted moves into argument
 *   registers]; syscall` in a private r-x file mapping, whose registers
 *   at the trap agree with that reading of its bytes;
 * - the 5 bytes of the `mov $426,%eax` become `jmp rel32` to a stub page
 *   of its own within +-2 GiB; the moves and the `syscall` stay, so a
 *   jump past the first byte still finds the original code (and traps);
 * - the bytes are written in the kernel's text_poke_bp order: int3,
 *   sync every core (membarrier SYNC_CORE), the jump's offset, sync, the
 *   jump's opcode, sync. A thread that meets the int3 meanwhile takes a
 *   SIGTRAP whose handler here sends it back to the site's first byte;
 *   other SIGTRAPs go to the program's handler;
 * - anything refused (no membarrier SYNC_CORE, no RWX mprotect: W^X, MDWE,
 *   no XSAVE, a tracer attached, no room for a stub, NOWAIT_PATCH=0)
 *   leaves the site as it is: it keeps trapping, correct and slower.
 * Only system calls run here (no stdio, no malloc): the patcher runs in a
 * SIGSYS handler.
 */
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <nowait-hook.h>

#define EXPORT	    __attribute__((visibility("default")))
#define PAGE	    4096UL
#define MAX_SITES   64
#define MAX_MOVES   2
#define NR_ENTER    426 /* __NR_io_uring_enter on x86-64 */
#define STUB_REACH  (0x7fffffffUL - 2 * PAGE)
#define XSTATE_MASK 0xe7ULL /* x87 SSE AVX opmask ZMM_Hi256 Hi16_ZMM */

/* A site the patcher looked at: patched, being patched, or refused. */
struct site {
	uintptr_t addr; /* the `mov $426,%eax` (or the syscall when refused) */
	bool patched;	/* the jmp is (being) written: SIGTRAP comes back */
};

static struct site sites[MAX_SITES];
static unsigned int nsites;    /* published with release */
static unsigned long npatched; /* sites rewritten, for the tests */
static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;
static int patch_state;			   /* 0 untried, 1 ready, -1 off */
static unsigned int tries = 4 * MAX_SITES; /* looks, in all */
static struct sigaction trap_old;	   /* the program's SIGTRAP action */
static uint32_t xsave_size;		   /* bytes, a multiple of 64 */
static uint32_t xsave_mask;		   /* XCR0 & XSTATE_MASK */
static bool xsavec; /* XSAVEC: skips components at init */
static bool xinuse; /* XGETBV 1: which components are in use */
/* How the stub keeps the vector state (vec_init). */
enum { SAVE_XMM, SAVE_YMM, SAVE_XSAVE };
static int save_how;

/* One relocated move, as decoded. */
struct move {
	int len;
	int dst, src; /* register numbers; src -1 for an immediate */
	bool wide;    /* a 64-bit write */
	uint64_t imm;
};

static bool arg_reg(int r)
{
	return r == 7 || r == 6 || r == 2 || r == 10 || r == 8 || r == 9;
}

/* Registers a relocated move may not read: rax, rcx, rsp, r11. */
static bool bad_src(int r)
{
	return r == 0 || r == 1 || r == 4 || r == 11;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/*
 * The register-only forms (REX optional, W either way): mov r,r (89, 8b),
 * xor r,r of one register (31, 33: zero), mov $imm32,r (b8+r), mov
 * $simm32,r (c7 /0), movabs $imm64,r (REX.W b8+r). Length, or 0.
 */
static int decode_move(const uint8_t *p, const uint8_t *end, struct move *m)
{
	unsigned int rex = 0, op, mrm, reg, rm;
	int n = 0;

	if (end - p >= 1 && (p[0] & 0xf0) == 0x40)
		rex = p[n++];
	if (rex & 2) /* REX.X: no index register in these forms */
		return 0;
	if (end - p < n + 1)
		return 0;
	op = p[n++];
	m->wide = rex & 8;
	if (op >= 0xb8 && op <= 0xbf) {
		m->dst = (int)((op - 0xb8) | (rex & 1) << 3);
		m->src = -1;
		if (end - p < n + (m->wide ? 8 : 4))
			return 0;
		m->imm = le32(p + n);
		if (m->wide)
			m->imm |= (uint64_t)le32(p + n + 4) << 32;
		return m->len = n + (m->wide ? 8 : 4);
	}
	if (end - p < n + 1)
		return 0;
	mrm = p[n++];
	if (mrm >> 6 != 3)
		return 0; /* a memory operand */
	reg = ((mrm >> 3) & 7) | (rex & 4) << 1;
	rm = (mrm & 7) | (rex & 1) << 3;
	switch (op) {
	case 0x89:
		m->dst = (int)rm, m->src = (int)reg;
		return m->len = n;
	case 0x8b:
		m->dst = (int)reg, m->src = (int)rm;
		return m->len = n;
	case 0x31:
	case 0x33:
		if (reg != rm)
			return 0;
		m->dst = (int)rm, m->src = -1, m->imm = 0;
		return m->len = n;
	case 0xc7:
		if ((mrm >> 3 & 7) != 0 || end - p < n + 4)
			return 0;
		m->dst = (int)rm, m->src = -1;
		m->imm = (uint64_t)(int64_t)(int32_t)le32(p + n);
		return m->len = n + 4;
	}
	return 0;
}

/* The saved register r of the trap (x86 numbering). */
static uint64_t reg_of(const greg_t *g, int r)
{
	static const int map[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX,
				    REG_RSP, REG_RBP, REG_RSI, REG_RDI,
				    REG_R8,  REG_R9,  REG_R10, REG_R11,
				    REG_R12, REG_R13, REG_R14, REG_R15};

	return (uint64_t)g[map[r]];
}

/*
 * Do the trapped registers agree with the moves? Each destination must
 * hold what its move put there, read from a source no move writes, and
 * be written once: a reading of the bytes that the real instruction
 * stream did not run is then (almost surely) caught.
 */
static bool moves_agree(const struct move *m, int n, const greg_t *g)
{
	for (int i = 0; i < n; i++) {
		uint64_t want;

		if (!arg_reg(m[i].dst) || (m[i].src >= 0 && bad_src(m[i].src)))
			return false;
		for (int j = 0; j < n; j++)
			if (j != i &&
			    (m[j].dst == m[i].dst || m[j].dst == m[i].src))
				return false;
		want = m[i].src < 0 ? m[i].imm : reg_of(g, m[i].src);
		if (!m[i].wide) /* a 32-bit write zero-extends */
			want &= 0xffffffffULL;
		if (reg_of(g, m[i].dst) != want)
			return false;
	}
	return true;
}

/* Bytes that make b8 the tail of a longer instruction: refused. */
static bool prefix_like(uint8_t b)
{
	return (b & 0xf0) == 0x40 || b == 0x66 || b == 0x67 || b == 0xf0 ||
	       b == 0xf2 || b == 0xf3 || b == 0x0f || b == 0x2e || b == 0x36 ||
	       b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
}

/*
 * Find the site's start for the syscall ending at rip, within [lo, rip):
 * `b8 aa 01 00 00`, up to MAX_MOVES moves, `0f 05`. The start, or 0.
 */
static uintptr_t find_site(uintptr_t lo, uintptr_t rip, const greg_t *g,
			   struct move *m, int *nm)
{
	static const uint8_t mov426[5] = {0xb8, 0xaa, 0x01, 0x00, 0x00};
	const uint8_t *sc = (const uint8_t *)(rip - 2);

	if (rip - 2 < lo || sc[0] != 0x0f || sc[1] != 0x05)
		return 0;
	for (uintptr_t gap = 0; gap <= 2 * 10; gap++) {
		const uint8_t *s = sc - gap - 5, *p;
		int n = 0;

		if ((uintptr_t)s <= lo || memcmp(s, mov426, 5) ||
		    prefix_like(s[-1]))
			continue;
		for (p = s + 5; p < sc && n < MAX_MOVES; n++) {
			int len = decode_move(p, sc, &m[n]);

			if (!len)
				break;
			p += len;
		}
		if (p == sc && moves_agree(m, n, g)) {
			*nm = n;
			return (uintptr_t)s;
		}
	}
	return 0;
}

/* /proc/self/maps, one line at a time, with system calls only. */
struct maps_line {
	uintptr_t lo, hi;
	char perms[5];
	unsigned long inode;
	bool stack, heap;
};

static uintptr_t hex(const char **s)
{
	uintptr_t v = 0;

	for (;; (*s)++) {
		char c = **s;

		if (c >= '0' && c <= '9')
			v = v << 4 | (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uintptr_t)(c - 'a' + 10);
		else
			return v;
	}
}

static void parse_line(const char *s, struct maps_line *l)
{
	l->lo = hex(&s);
	s++;
	l->hi = hex(&s);
	s++;
	memcpy(l->perms, s, 4);
	l->perms[4] = 0;
	s += 5;
	hex(&s); /* offset */
	s++;
	while (*s && *s != ' ')
		s++; /* dev */
	s++;
	l->inode = 0;
	while (*s >= '0' && *s <= '9')
		l->inode = l->inode * 10 + (unsigned long)(*s++ - '0');
	l->stack = strstr(s, "[stack") != NULL;
	l->heap = strstr(s, "[heap]") != NULL;
}

typedef bool (*maps_fn)(const struct maps_line *l, void *ctx);

/* Call fn for every mapping until it returns false. */
static void maps_each(maps_fn fn, void *ctx)
{
	char buf[4096], line[512];
	size_t ll = 0;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			struct maps_line l;

			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			ll = 0;
			parse_line(line, &l);
			if (!fn(&l, ctx)) {
				close(fd);
				return;
			}
		}
	}
	close(fd);
}

/* The mapping holding an address, and the free page nearest to it. */
struct near {
	uintptr_t at;	       /* the site */
	struct maps_line home; /* its mapping (home.hi 0: none) */
	uintptr_t read_lo;     /* readable without a gap from here to it */
	uintptr_t run_lo;      /* start of the readable run so far */
	uintptr_t prev_hi;     /* end of the mapping before */
	bool prev_heap;
	uintptr_t best; /* a free page, 0 if none */
};

static uintptr_t dist(uintptr_t a, uintptr_t b)
{
	return a > b ? a - b : b - a;
}

static void consider(struct near *nr, uintptr_t page)
{
	if (page < (1UL << 20) || page >= (1UL << 47) ||
	    dist(page, nr->at) > STUB_REACH)
		return;
	if (!nr->best || dist(page, nr->at) < dist(nr->best, nr->at))
		nr->best = page;
}

static bool near_line(const struct maps_line *l, void *ctx)
{
	struct near *nr = ctx;

	if (l->perms[0] != 'r')
		nr->run_lo = 0;
	else if (!nr->run_lo || l->lo != nr->prev_hi)
		nr->run_lo = l->lo;
	/* One file's r-x pages split in VMAs by an earlier patch: one home. */
	if (nr->home.hi == l->lo && nr->home.inode == l->inode &&
	    !strcmp(nr->home.perms, l->perms))
		nr->home.hi = l->hi;
	if (nr->at >= l->lo && nr->at < l->hi) {
		nr->home = *l;
		nr->read_lo = nr->run_lo;
	}
	/* A gap [prev_hi, lo): its top (not below a stack), its bottom (not
	 * above the heap), two pages at least so neither neighbour is
	 * touched on both sides. */
	if (nr->prev_hi && l->lo >= nr->prev_hi + 2 * PAGE) {
		if (!l->stack)
			consider(nr, l->lo - PAGE);
		if (!nr->prev_heap)
			consider(nr, nr->prev_hi);
	}
	nr->prev_hi = l->hi;
	nr->prev_heap = l->heap;
	return true;
}

/* Is a tracer attached (TracerPid)? A debugger would see our int3. */
static bool traced(void)
{
	char buf[2048];
	const char *t;
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = 0;
	t = strstr(buf, "TracerPid:");
	if (!t)
		return true;
	t += 10;
	while (*t == ' ' || *t == '\t')
		t++;
	return *t != '0';
}

static long membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

/* Serialise every thread's core before it runs the bytes written. */
static bool sync_cores(void)
{
	return membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) == 0;
}

/*
 * The vector state the stub keeps: XCR0's components of XSTATE_MASK, their
 * XSAVE size (standard form), and how to save them.
 */
static bool xsave_init(const char *how)
{
	unsigned int a, b, c, d, end = 576;
	uint32_t lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1U << 27)))
		return false; /* no OSXSAVE */
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	xsave_mask = (uint32_t)(((uint64_t)hi << 32 | lo) & XSTATE_MASK);
	for (unsigned int i = 2; i < 8; i++) {
		if (!(xsave_mask & (1U << i)))
			continue;
		__cpuid_count(0xd, i, a, b, c, d);
		if (a + b > end)
			end = a + b;
	}
	/* The standard layout's size bounds the compacted one's. */
	xsave_size = (end + 63) & ~63U;
	__cpuid_count(0xd, 1, a, b, c, d);
	xsavec = a & 2;
	xinuse = a & 4; /* XGETBV with ECX=1 */
	/*
	 * Without AVX-512 state the 16 registers and MXCSR are moved to the
	 * stack (about 30 ns, where an XSAVE and XRSTOR pair took 400 ns on
	 * the VM measured); with it, XSAVE: glibc's evex string routines use
	 * ymm16-31 and the mask registers.
	 */
	save_how = xsave_mask & 0xe0 ? SAVE_XSAVE
		   : xsave_mask & 4  ? SAVE_YMM
				     : SAVE_XMM;
	/* NOWAIT_PATCH=xsave or =sse: the other ways, for the tests. */
	if (how && !strcmp(how, "xsave"))
		save_how = SAVE_XSAVE;
	else if (how && !strcmp(how, "sse"))
		save_how = SAVE_XMM;
	if (save_how != SAVE_XSAVE)
		xsave_size = 576;
	return true;
}

/* The program's SIGTRAP, for a trap that is not ours. */
static void trap_chain(int sig, siginfo_t *si, void *ctx)
{
	struct sigaction old = trap_old;

	if (old.sa_flags & SA_SIGINFO) {
		old.sa_sigaction(sig, si, ctx);
	} else if (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN) {
		/* What the kernel would have done: the action, again. */
		sigaction(sig, &old, NULL);
		raise(sig);
	} else {
		old.sa_handler(sig);
	}
}

/*
 * An int3 of a site being patched: back to the site's first byte, which
 * is the int3 again (the patch goes on) or the finished jmp.
 */
static void on_sigtrap(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	uintptr_t at = (uintptr_t)g[REG_RIP] - 1;
	unsigned int n = __atomic_load_n(&nsites, __ATOMIC_ACQUIRE);

	if (si->si_code == SI_KERNEL || si->si_code == TRAP_BRKPT)
		for (unsigned int i = 0; i < n; i++)
			if (sites[i].patched && sites[i].addr == at) {
				g[REG_RIP] = (greg_t)at;
				return;
			}
	trap_chain(sig, si, ctx);
}

/* Ours for SIGTRAP, the program's kept to chain to (each patch: it may
 * have set its own since). */
static void trap_own(void)
{
	struct sigaction sa, cur;

	if (sigaction(SIGTRAP, NULL, &cur) || cur.sa_sigaction == on_sigtrap)
		return;
	trap_old = cur;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigtrap;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, NULL);
}

/*
 * The engine's enter for a stub: errno as the program left it (a
 * `syscall` instruction does not touch it), and no cancellation point
 * inside (io_uring_enter is none; an unwind could not pass the stub,
 * which has no unwind tables).
 */
static long stub_enter(long fd, long to_submit, long min_complete, long flags,
		       long arg, long argsz)
{
	int saved = errno, cs;
	long r;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	r = nowait_hook_enter((int)fd, (unsigned int)to_submit,
			      (unsigned int)min_complete, (unsigned int)flags,
			      (const void *)arg, (size_t)argsz);
	pthread_setcancelstate(cs, NULL);
	errno = saved;
	return r;
}

struct emit {
	uint8_t *p;
};

static void put(struct emit *e, const void *b, size_t n)
{
	memcpy(e->p, b, n);
	e->p += n;
}

static void put32(struct emit *e, uint32_t v)
{
	put(e, &v, 4);
}

static void put64(struct emit *e, uint64_t v)
{
	put(e, &v, 8);
}

/* Save, align, zero an XSAVE header: docs/syscall-patching.md. */
static void emit_enter(struct emit *e)
{
	static const uint8_t pro[] = {
		0x48, 0x8d, 0x64, 0x24, 0x80, /* lea -128(%rsp),%rsp */
		0x9c,			      /* pushfq */
		0xfc,			      /* cld */
		0x55,			      /* push %rbp */
		0x48, 0x89, 0xe5,	      /* mov %rsp,%rbp */
		0x57, 0x56, 0x52,	      /* push %rdi, %rsi, %rdx */
		0x41, 0x52, 0x41, 0x50,	      /* push %r10, %r8 */
		0x41, 0x51, 0x50,	      /* push %r9, %rax (a slot) */
		0x48, 0x83, 0xe4, 0xc0,	      /* and $-64,%rsp */
		0x48, 0x81, 0xec,	      /* sub $imm32,%rsp */
	};
	static const uint8_t zero[] = {0x31, 0xc0}; /* xor %eax,%eax */

	put(e, pro, sizeof(pro));
	put32(e, xsave_size);
	if (save_how != SAVE_XSAVE)
		return;
	put(e, zero, sizeof(zero));
	for (uint32_t off = 512; off < 576; off += 8) {
		static const uint8_t st[] = {0x48, 0x89, 0x84, 0x24};

		put(e, st, sizeof(st)); /* mov %rax,off(%rsp) */
		put32(e, off);
	}
}

static void emit_mask(struct emit *e)
{
	uint8_t b = 0xb8; /* mov $mask,%eax */

	put(e, &b, 1);
	put32(e, xsave_mask);
	b = 0xba; /* mov $0,%edx */
	put(e, &b, 1);
	put32(e, 0);
}

/* (v)movdqu of the 16 registers to or from i*32(%rsp). */
static void emit_regs(struct emit *e, bool ymm, bool save)
{
	uint8_t op = save ? 0x7f : 0x6f, b[6];

	for (unsigned int i = 0; i < 16; i++) {
		uint8_t mrm = (uint8_t)(0x84 | (i & 7) << 3);
		int n = 0;

		if (ymm) { /* VEX.256.F3.0F 7f/6f */
			b[n++] = 0xc5;
			b[n++] = i < 8 ? 0xfe : 0x7e;
		} else { /* F3 (REX.R) 0F 7f/6f */
			b[n++] = 0xf3;
			if (i >= 8)
				b[n++] = 0x44;
			b[n++] = 0x0f;
		}
		b[n++] = op;
		b[n++] = mrm;
		b[n++] = 0x24;
		put(e, b, (size_t)n);
		put32(e, i * 32);
	}
}

/* jz/jmp rel32 over what follows: its offset is filled in by land. */
static uint8_t *emit_jump(struct emit *e, bool jz)
{
	static const uint8_t jzop[] = {0x0f, 0x84}, jmpop = 0xe9;

	if (jz)
		put(e, jzop, 2);
	else
		put(e, &jmpop, 1);
	put32(e, 0);
	return e->p - 4;
}

static void land(const struct emit *e, uint8_t *rel)
{
	int32_t d = (int32_t)(e->p - (rel + 4));

	memcpy(rel, &d, 4);
}

/*
 * The vector state to (save) or from the area at rsp: xsave64, xsavec64
 * or xrstor64 (%rsp); or the registers by moves, and MXCSR at 512(%rsp).
 * With AVX, ymm only while their upper halves are in use (XGETBV 1's
 * XINUSE bit 2, kept at 516(%rsp)): a 256-bit save and restore of clean
 * halves leaves them dirty, and the program's SSE code after it slow.
 */
static void emit_vec(struct emit *e, bool save)
{
	static const uint8_t xs[][5] = {{0x48, 0x0f, 0xae, 0x24, 0x24},
					{0x48, 0x0f, 0xc7, 0x24, 0x24},
					{0x48, 0x0f, 0xae, 0x2c, 0x24}};
	static const uint8_t inuse[] = {
		0xb9, 0x01, 0x00, 0x00, 0x00, /* mov $1,%ecx */
		0x0f, 0x01, 0xd0,	      /* xgetbv */
		0x89, 0x84, 0x24, 0x04, 0x02,
		0x00, 0x00, /* mov %eax,516(%rsp) */
	};
	static const uint8_t test[] = {
		0xf6, 0x84, 0x24, 0x04,
		0x02, 0x00, 0x00, 0x04}; /* testb $4,516(%rsp) */
	uint8_t b[4] = {0x0f, 0xae, (uint8_t)(save ? 0x9c : 0x94), 0x24};
	uint8_t *skip, *over;

	if (save_how == SAVE_XSAVE) {
		emit_mask(e);
		put(e, xs[save ? (xsavec ? 1 : 0) : 2], 5);
		return;
	}
	if (save_how == SAVE_YMM && xinuse) {
		if (save)
			put(e, inuse, sizeof(inuse));
		put(e, test, sizeof(test));
		skip = emit_jump(e, true);
		emit_regs(e, true, save);
		over = emit_jump(e, false);
		land(e, skip);
		emit_regs(e, false, save);
		land(e, over);
	} else {
		emit_regs(e, save_how == SAVE_YMM, save);
	}
	put(e, b, 4); /* stmxcsr/ldmxcsr 512(%rsp) */
	put32(e, 512);
}

/* The call: the six syscall arguments as the C call's, r10 as rcx. */
static void emit_call(struct emit *e)
{
	static const uint8_t args[] = {
		0x48, 0x8b, 0x7d, 0xf8, /* mov -8(%rbp),%rdi */
		0x48, 0x8b, 0x75, 0xf0, /* mov -16(%rbp),%rsi */
		0x48, 0x8b, 0x55, 0xe8, /* mov -24(%rbp),%rdx */
		0x48, 0x8b, 0x4d, 0xe0, /* mov -32(%rbp),%rcx */
		0x4c, 0x8b, 0x45, 0xd8, /* mov -40(%rbp),%r8 */
		0x4c, 0x8b, 0x4d, 0xd0, /* mov -48(%rbp),%r9 */
		0x48, 0xb8,		/* movabs $fn,%rax */
	};
	static const uint8_t call[] = {
		0xff, 0xd0,		/* call *%rax */
		0x48, 0x89, 0x45, 0xc8, /* mov %rax,-56(%rbp) */
	};

	emit_vec(e, true);
	put(e, args, sizeof(args));
	put64(e, (uint64_t)(uintptr_t)stub_enter);
	put(e, call, sizeof(call));
}

/* Restore, rcx and r11 as `syscall` leaves them, back after it. */
static void emit_leave(struct emit *e, uintptr_t ret)
{
	static const uint8_t epi[] = {
		0x48, 0x8b, 0x45, 0xc8,		    /* mov -56(%rbp),%rax */
		0x48, 0x8d, 0x65, 0xd0,		    /* lea -48(%rbp),%rsp */
		0x41, 0x59, 0x41, 0x58,		    /* pop %r9, %r8 */
		0x41, 0x5a, 0x5a, 0x5e,		    /* pop %r10, %rdx, %rsi */
		0x5f, 0x5d, 0x9d,		    /* pop %rdi, %rbp; popfq */
		0x9c, 0x41, 0x5b,		    /* pushfq; pop %r11 */
		0x48, 0x8d, 0xa4, 0x24,		    /* lea 128(%rsp),%rsp */
		0x80, 0x00, 0x00, 0x00, 0x48, 0xb9, /* movabs $ret,%rcx */
	};
	uint8_t jmp = 0xe9;

	emit_vec(e, false);
	put(e, epi, sizeof(epi));
	put64(e, ret);
	put(e, &jmp, 1);
	put32(e, (uint32_t)(int32_t)((long)ret - (long)(uintptr_t)(e->p + 4)));
}

/* A stub page at page for the site [s, ret): 0 or -1 (freed). */
static int make_stub(uintptr_t page, uintptr_t s, uintptr_t ret)
{
	struct emit e;
	void *p =
		mmap((void *)page, PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	if (p != (void *)page) {
		munmap(p, PAGE);
		return -1;
	}
	e.p = p;
	put(&e, (const void *)(s + 5), ret - 2 - (s + 5)); /* the moves */
	emit_enter(&e);
	emit_call(&e);
	emit_leave(&e, ret);
	/* W^X (MDWE) refuses X for a page that was writable: no patch. */
	if (mprotect(p, PAGE, PROT_READ | PROT_EXEC)) {
		munmap(p, PAGE);
		return -1;
	}
	return 0;
}

static void poke(uintptr_t at, uint8_t b)
{
	__atomic_store_n((uint8_t *)at, b, __ATOMIC_RELAXED);
}

/*
 * text_poke_bp's order on the live site: int3, sync, the offset, sync,
 * the opcode, sync. The site is published (sites[], for the SIGTRAP
 * handler) before its int3 is written; the pages stay RWX only for the
 * while.
 */
static bool rewrite(struct site *st, uintptr_t s, uintptr_t stub,
		    const struct near *nr)
{
	uintptr_t lo = s & ~(PAGE - 1);
	size_t len = ((s + 5 + PAGE - 1) & ~(PAGE - 1)) - lo;
	int32_t rel = (int32_t)((long)stub - (long)(s + 5));
	const uint8_t *r = (const uint8_t *)&rel;

	if (s + 5 > nr->home.hi)
		return false;
	if (!sync_cores()) /* not registered (a child's mm): no patch */
		return false;
	if (mprotect((void *)lo, len, PROT_READ | PROT_WRITE | PROT_EXEC))
		return false; /* W^X: the site keeps trapping */
	st->addr = s;
	st->patched = true;
	__atomic_store_n(&nsites, nsites + 1, __ATOMIC_RELEASE);
	poke(s, 0xcc);
	sync_cores();
	for (int i = 0; i < 4; i++)
		poke(s + 1 + (uintptr_t)i, r[i]);
	sync_cores();
	poke(s, 0xe9);
	sync_cores();
	mprotect((void *)lo, len, PROT_READ | PROT_EXEC);
	return true;
}

/* Once: NOWAIT_PATCH, membarrier SYNC_CORE registered, XSAVE known. */
static bool patch_ready(void)
{
	const char *v;

	if (patch_state)
		return patch_state > 0;
	__atomic_store_n(&patch_state, -1, __ATOMIC_RELAXED);
	v = getenv("NOWAIT_PATCH");
	if (v && !strcmp(v, "0"))
		return false;
	/*
	 * The registration alone: it fails (-EINVAL) where SYNC_CORE is
	 * not supported, which is what a QUERY first would tell.
	 */
	if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE))
		return false;
	if (!xsave_init(v))
		return false;
	__atomic_store_n(&patch_state, 1, __ATOMIC_RELAXED);
	return true;
}

static bool known(uintptr_t a, uintptr_t b)
{
	for (unsigned int i = 0; i < nsites; i++)
		if (sites[i].addr == a || sites[i].addr == b)
			return true;
	return false;
}

/* Does the trapped site qualify for a stub? Its start, or 0. */
static uintptr_t site_start(const greg_t *g, uintptr_t rip,
			    const struct near *nr)
{
	struct move m[MAX_MOVES];
	uintptr_t s;
	int nm = 0;

	if (!nr->home.hi || strcmp(nr->home.perms, "r-xp") || !nr->home.inode ||
	    !nr->best || traced())
		return 0;
	s = find_site(nr->read_lo, rip, g, m, &nm);
	return s && !known(s, s) ? s : 0;
}

/*
 * Under patch_lock: decode, find room, write the stub, rewrite. Every
 * site looked at is recorded, so that one is looked at once.
 */
static void patch_locked(const greg_t *g, uintptr_t rip)
{
	struct near nr = {.at = rip - 2};
	unsigned int idx = nsites;
	struct site *st = &sites[idx];
	uintptr_t s;

	if (idx >= MAX_SITES || !tries || known(rip - 2, 0) || !patch_ready())
		return;
	tries--;
	maps_each(near_line, &nr);
	st->addr = rip - 2; /* refused, unless patched below */
	st->patched = false;
	s = site_start(g, rip, &nr);
	if (s && make_stub(nr.best, s, rip))
		return; /* the page was taken meanwhile: another time */
	if (s) {
		trap_own();
		if (rewrite(st, s, nr.best, &nr))
			__atomic_fetch_add(&npatched, 1, __ATOMIC_RELAXED);
		else
			munmap((void *)nr.best, PAGE);
	}
	if (nsites == idx)
		__atomic_store_n(&nsites, idx + 1, __ATOMIC_RELEASE);
}

/*
 * route.c's SIGSYS handler, after it ran a trapped io_uring_enter in user
 * mode: rewrite the site if it qualifies, once. A site being looked at by
 * another thread is left to it (trylock: never wait in a signal handler).
 */
void nw_patch_trapped(long nr, void *ctx);
void nw_patch_trapped(long nr, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;

	if (nr != NR_ENTER ||
	    __atomic_load_n(&patch_state, __ATOMIC_RELAXED) < 0 ||
	    pthread_mutex_trylock(&patch_lock))
		return;
	patch_locked(g, (uintptr_t)g[REG_RIP]);
	pthread_mutex_unlock(&patch_lock);
}

/* fork: never with a patch half written (its patcher would be gone). */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&patch_lock);
}

static void atfork_done(void)
{
	pthread_mutex_unlock(&patch_lock);
}

/* The child asks again whether its mm is registered (exec clears it). */
static void atfork_child(void)
{
	__atomic_store_n(&patch_state, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&patch_lock);
}

/*
 * The SYNC_CORE registration is made here, while the process has one
 * thread: with more, the kernel synchronises every CPU's runqueue for it,
 * which took 30-60 ms on a loaded VM inside the first trapped enter (an
 * SQPOLL ring's poller then counted that as idle time: liburing's
 * sqpoll-sleep saw NEED_WAKEUP 50 ms early).
 */
__attribute__((constructor)) static void patch_init(void)
{
	pthread_atfork(atfork_prepare, atfork_done, atfork_child);
	patch_ready();
}

/*
 * Sites rewritten so far: for the tests and nowait-bench, which find it
 * with dlsym, like nowait_preload_traps.
 */
EXPORT unsigned long nowait_preload_patched(void);
EXPORT unsigned long nowait_preload_patched(void)
{
	return __atomic_load_n(&npatched, __ATOMIC_RELAXED);
}
