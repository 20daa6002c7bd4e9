/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness over ring setups and io_uring_register streams on
 * nowait (make fuzz): register.c, regwq.c, rsrc.c, rsrcbuf.c, ringmem.c,
 * setup.c, creds.c, pin.c, kbuf.c, ringfd.c, tctx.c, sqpoll.c, hook.c.
 *
 * Input: a header of 12 bytes, the setup:
 *   0-1  setup flags, one bit each from setup_bits[] (SQPOLL, CQSIZE,
 *        R_DISABLED, NO_MMAP, DEFER_TASKRUN, ATTACH_WQ, ...);
 *   2    bit 0 REGISTERED_FD_ONLY, 1 CQE_MIXED, 2 an unknown flag, 3 a
 *        reserved field set, 4 the rings mapped apart, 5 a second ring
 *        with SQPOLL, 6-7 NO_MMAP's memory (good, unaligned, one page,
 *        none);
 *   3-4  SQ and CQ entries (entries_of), 5 sq_thread_idle (ms, 0-3),
 *   6    sq_thread_cpu, 7 wq_fd (the second ring, -1, a pipe, 9999),
 *   8-11 unused (room for later);
 * then records of 8 bytes, a kind byte and 7 argument bytes:
 *   kind % 16 < 5  a register call (do_register: files, buffers, tags,
 *                  sparse tables, updates, provided-buffer rings and
 *                  their status, eventfd, probe, personality,
 *                  restrictions, ENABLE_RINGS, io-wq affinity and
 *                  workers, ring fds, the file allocation range, clock,
 *                  NAPI, SYNC_CANCEL, RESIZE_RINGS, CLONE_BUFFERS, QUERY
 *                  and any opcode with an arena argument), now and then
 *                  through the registered ring index;
 *   5-8            an SQE that uses what was registered (fixed files and
 *                  buffers, provided buffers, personalities);
 *   9              submit; 10 an enter call (bounded timeout);
 *   11             a call through include/nowait-hook.h's door;
 *   12             an mmap of one of the ring's offsets, then munmap;
 *   13-15          an SQE of the next 64 input bytes (fz_sanitize).
 * The input also fills the arena (fuzzenv.c) the arguments point into.
 *
 * Teardown, as sqe-fuzz's: a disabled ring is enabled, ASYNC_CANCEL(ANY)
 * and SYNC_CANCEL, then reaping until each consumed SQE has had exactly
 * one final CQE (past FZ_REAP_LIMIT_S: a hang, fz_final_missing; tag
 * CQEs are not counted; the harness's cancels are counted by their CQEs).
 * A second final CQE, or one missing, aborts (a finding). FZ_REG_LOG=1
 * prints each CQE.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <nowait.h>
#include <nowait-abi.h>
#include <nowait-hook.h>
#include "helpers.h"
#include "fuzzenv.h"

#define MAX_SQES FZ_MAX_SQES
#define NPBUF	 4
#define NRINGIDX 4
#define PBUF_SZ	 8192
#define UMEM_SZ	 (512 * 1024)

/* IORING_REGISTER_PBUF_STATUS's argument (6.8; not in 6.1's header). */
struct rf_buf_status {
	uint32_t buf_group;
	uint32_t head;
	uint32_t resv[8];
};

/* IORING_REGISTER_QUERY's header (6.18). */
struct rf_query_hdr {
	uint64_t next_entry;
	uint64_t query_data;
	uint32_t query_op;
	uint32_t size;
	int32_t result;
	uint32_t resv[3];
};

struct run {
	struct t_ring r;
	struct fz_env env;
	unsigned int flags;
	int fd;		    /* what register and enter name: fd or index */
	bool fd_is_index;   /* REGISTERED_FD_ONLY */
	bool usable;	    /* SQEs can be written (mapped) */
	bool disabled;	    /* R_DISABLED and not yet enabled */
	uint32_t req_flags; /* the restrictions' required SQE flags */
	unsigned int queued;
	unsigned int consumed0; /* SQEs consumed before a resize */
	unsigned int head0;
	struct fz_finals fin;  /* final CQEs per user_data */
	unsigned int nown;     /* the harness's cancels' CQEs */
	int ringidx[NRINGIDX]; /* registered ring indexes, -1: none */
	int pers[4];
	uint8_t *umem;	       /* NO_MMAP's memory */
	uint8_t *pbuf[NPBUF];  /* provided-buffer rings' memory */
	void *pbuf_map[NPBUF]; /* IOU_PBUF_RING_MMAP maps */
	struct t_ring peer;    /* the second ring, fd -1: none */
	int clockid;
};

/* FZ_REG_LOG=1: each CQE and the SQ's counts at the end, to stderr. */
static bool fz_log;

static const unsigned int setup_bits[16] = {
	IORING_SETUP_IOPOLL,	    IORING_SETUP_SQPOLL,
	IORING_SETUP_SQ_AFF,	    IORING_SETUP_CQSIZE,
	IORING_SETUP_CLAMP,	    IORING_SETUP_ATTACH_WQ,
	IORING_SETUP_R_DISABLED,    IORING_SETUP_SUBMIT_ALL,
	IORING_SETUP_COOP_TASKRUN,  IORING_SETUP_TASKRUN_FLAG,
	IORING_SETUP_SQE128,	    IORING_SETUP_CQE32,
	IORING_SETUP_SINGLE_ISSUER, IORING_SETUP_DEFER_TASKRUN,
	IORING_SETUP_NO_MMAP,	    IORING_SETUP_NO_SQARRAY,
};

static unsigned int entries_of(uint8_t v)
{
	switch (v >> 6) {
	case 0:
		return 1U << (v & 7);
	case 1:
		return v & 63;
	case 2:
		return 32768U << (v & 3);
	default:
		return 8;
	}
}

static void reap(struct run *u)
{
	unsigned int head, tail, shift;

	if (!u->usable)
		return;
	head = __atomic_load_n(u->r.cq_head, __ATOMIC_RELAXED);
	tail = __atomic_load_n(u->r.cq_tail, __ATOMIC_ACQUIRE);
	shift = t_cqe_shift(&u->r);
	for (; head != tail; head++) {
		unsigned int i = head & (u->r.p.cq_entries - 1);
		struct io_uring_cqe *c = &u->r.cqes[i << shift];
		uint64_t ud = c->user_data;

		if (fz_log)
			fprintf(stderr, "cqe %u: ud %llx res %d flags %x\n",
				head, (unsigned long long)ud, c->res, c->flags);

		if ((u->flags & IORING_SETUP_CQE_MIXED) &&
		    (c->flags & IORING_CQE_F_32))
			head++;
		if (ud == FZ_MARK_OWN && !(c->flags & IORING_CQE_F_SKIP))
			u->nown++;
		if (ud < 1 || ud > MAX_SQES || (c->flags & IORING_CQE_F_SKIP))
			continue;
		fz_final_count(&u->fin, ud, c);
	}
	__atomic_store_n(u->r.cq_head, head, __ATOMIC_RELEASE);
}

static int ring_enter(struct run *u, unsigned int to_submit,
		      unsigned int min_complete, unsigned int flags,
		      unsigned int us)
{
	if (u->fd_is_index)
		flags |= IORING_ENTER_REGISTERED_RING;
	if (u->flags & IORING_SETUP_SQPOLL)
		flags |= IORING_ENTER_SQ_WAKEUP;
	return fz_enter(u->fd, to_submit, min_complete, flags, us);
}

static void submit(struct run *u)
{
	unsigned int n;

	if (!u->usable)
		return;
	n = t_ring_flush(&u->r);
	if (n)
		ring_enter(u, n, 0, 0, 0);
	reap(u);
}

static struct io_uring_sqe *get_sqe(struct run *u)
{
	struct io_uring_sqe *sqe;

	if (!u->usable || u->queued >= MAX_SQES)
		return NULL;
	sqe = t_get_sqe(&u->r);
	if (!sqe) {
		submit(u);
		sqe = t_get_sqe(&u->r);
	}
	if (sqe)
		memset(sqe, 0, sizeof(*sqe) << t_sqe_shift(&u->r));
	return sqe;
}

/* Register through the ring's fd, or its registered index when asked. */
static int reg(struct run *u, bool via_index, unsigned int op, void *arg,
	       unsigned int nr)
{
	if (u->fd_is_index)
		return nowait_register(u->fd,
				       op | IORING_REGISTER_USE_REGISTERED_RING,
				       arg, nr);
	if (via_index)
		for (int i = 0; i < NRINGIDX; i++)
			if (u->ringidx[i] >= 0)
				return nowait_register(
					u->ringidx[i],
					op | IORING_REGISTER_USE_REGISTERED_RING,
					arg, nr);
	return nowait_register(u->fd, op, arg, nr);
}

static int env_fd(struct run *u, uint8_t v)
{
	return (v & 15) == 7 ? u->r.fd : u->env.fd[v & 15];
}

static uint64_t arena_at(struct run *u, uint8_t v)
{
	return (uint64_t)(uintptr_t)(u->env.arena + ((unsigned int)v << 8));
}

static void reg_files(struct run *u, const uint8_t *a, bool vi)
{
	int fds[FZ_NFD];
	uint64_t tags[FZ_NFD];
	unsigned int nr = a[1] % (FZ_NFD + 1);
	struct io_uring_rsrc_register rr = {0};

	for (int i = 0; i < FZ_NFD; i++) {
		fds[i] = ((a[2] | a[3] << 8) >> i) & 1 ? env_fd(u, (uint8_t)i)
						       : -1;
		tags[i] = (a[4] & 2) ? FZ_MARK_TAG | (uint64_t)i : 0;
	}
	if (a[4] & 1) {
		reg(u, vi, IORING_REGISTER_FILES, fds, nr);
		return;
	}
	rr.nr = nr;
	rr.data = (uint64_t)(uintptr_t)fds;
	rr.tags = (uint64_t)(uintptr_t)tags;
	if (a[4] & 4) { /* sparse: a table of empty slots */
		rr.flags = IORING_RSRC_REGISTER_SPARSE;
		rr.data = 0;
		rr.nr = (a[4] & 8) ? 1U << 20 | a[5] : a[5] * 4U;
	}
	if (a[4] & 16)
		rr.resv2 = a[6];
	if (a[4] & 32)
		rr.tags = 0;
	reg(u, vi, IORING_REGISTER_FILES2, &rr, sizeof(rr) - (a[6] & 1));
}

static void reg_files_update(struct run *u, const uint8_t *a, bool vi)
{
	int fds[4];
	uint64_t tags[4];
	unsigned int nr = a[2] % 4 + 1;
	unsigned int off = a[1] == 0xff ? IORING_FILE_INDEX_ALLOC : a[1];

	for (unsigned int i = 0; i < 4; i++) {
		fds[i] = (a[3] >> (2 * i) & 3) == 3 ? -1 : env_fd(u, a[4] + i);
		tags[i] = (a[5] & 1) ? FZ_MARK_TAG | (64 + i) : 0;
	}
	if (a[5] & 2) {
		struct io_uring_rsrc_update up = {
			.offset = off, .data = (uint64_t)(uintptr_t)fds};

		reg(u, vi, IORING_REGISTER_FILES_UPDATE, &up, nr);
	} else {
		struct io_uring_rsrc_update2 up = {
			.offset = off,
			.data = (uint64_t)(uintptr_t)fds,
			.tags = (uint64_t)(uintptr_t)tags,
			.nr = nr,
			.resv2 = (a[5] & 4) ? 1 : 0,
		};

		reg(u, vi, IORING_REGISTER_FILES_UPDATE2, &up,
		    (a[5] & 8) ? 1 : sizeof(up));
	}
}

/*
 * Memory a buffer may not be pinned from, or may (pin.c): read-only, a
 * shared anonymous mapping, a shared mapping of a file on a disk
 * filesystem (FOLL_LONGTERM refuses it), two mappings side by side.
 */
static uint8_t *odd_mem[4];

static void odd_mem_init(void)
{
	int f = open("reg-fuzz-map", O_RDWR | O_CREAT | O_TRUNC, 0600);

	odd_mem[0] =
		mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	odd_mem[1] = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (f < 0 || ftruncate(f, 8192))
		abort();
	odd_mem[2] = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	close(f);
	unlink("reg-fuzz-map");
	odd_mem[3] = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 4; i++)
		if (odd_mem[i] == MAP_FAILED)
			abort();
	/* The second page another mapping (other protections). */
	if (mprotect(odd_mem[3] + 4096, 4096,
		     PROT_READ | PROT_WRITE | PROT_EXEC))
		abort();
}

static void fill_iovs(struct run *u, struct iovec *iov, const uint8_t *a)
{
	for (int i = 0; i < 4; i++) {
		uint8_t s = a[i];

		iov[i].iov_base = (void *)(uintptr_t)arena_at(u, s & 0xf0);
		iov[i].iov_len = (size_t)(s & 3) << 12;
		if ((s & 0x0c) == 0x04) {
			iov[i].iov_len = s; /* short, odd */
		} else if ((s & 0x0c) == 0x08) {
			/* sparse, or -EFAULT; or a page below mmap_min_addr,
			 * where nothing is mapped: a hole (pin.c) */
			iov[i].iov_base =
				(s & 0x10) ? (void *)(uintptr_t)0x1000 : NULL;
		} else if ((s & 0x0c) == 0x0c) {
			iov[i].iov_base = odd_mem[s & 3] + (s >> 6) * 1024;
			iov[i].iov_len =
				(s & 0x20) ? 4096 : 8192 - (s >> 6) * 1024;
			if (s & 0x10)
				iov[i].iov_len = 1UL << 31; /* past the arena */
		}
	}
}

static void reg_buffers(struct run *u, const uint8_t *a, bool vi)
{
	struct iovec iov[4];
	uint64_t tags[4];
	unsigned int nr = a[1] % 5;

	fill_iovs(u, iov, a + 2);
	for (int i = 0; i < 4; i++)
		tags[i] = (a[6] & 2) ? FZ_MARK_TAG | (128 + i) : 0;
	if (a[6] & 1) {
		reg(u, vi, IORING_REGISTER_BUFFERS, iov, nr);
	} else {
		struct io_uring_rsrc_register rr = {
			.nr = nr,
			.data = (uint64_t)(uintptr_t)iov,
			.tags = (uint64_t)(uintptr_t)tags,
		};

		if (a[6] & 4) {
			rr.flags = IORING_RSRC_REGISTER_SPARSE;
			rr.data = 0;
			rr.nr = (a[6] & 8) ? 1U << 16 | a[1] : a[1] % 32;
		}
		reg(u, vi, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr));
	}
}

static void reg_buffers_update(struct run *u, const uint8_t *a, bool vi)
{
	struct iovec iov[4];
	uint64_t tags[4];
	struct io_uring_rsrc_update2 up = {
		.offset = a[1] % 34,
		.data = (uint64_t)(uintptr_t)iov,
		.tags = (uint64_t)(uintptr_t)tags,
		.nr = a[6] % 3 + 1,
	};

	fill_iovs(u, iov, a + 2);
	for (int i = 0; i < 4; i++)
		tags[i] = (a[6] & 4) ? FZ_MARK_TAG | (192 + i) : 0;
	if (a[6] & 8)
		up.tags = 0;
	reg(u, vi, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up));
}

/* A provided-buffer ring: in the program's memory, or the engine's. */
static void reg_pbuf(struct run *u, const uint8_t *a, bool vi)
{
	unsigned int slot = a[1] % NPBUF;
	struct io_uring_buf_reg br = {
		.bgid = (a[1] & 0x80) ? (uint16_t)(a[1] << 8 | a[6]) : slot,
		.ring_entries = (a[2] & 0x80) ? a[2] : 1U << (a[2] % 9),
		.pad = a[3] & 3, /* flags: IOU_PBUF_RING_MMAP, _INC */
	};
	struct io_uring_buf_ring *br_ring;
	unsigned int n;

	if (!(br.pad & NW_PBUF_RING_MMAP)) {
		br.ring_addr = (uint64_t)(uintptr_t)u->pbuf[slot];
		if (a[3] & 4)
			br.ring_addr += 64; /* unaligned: -EINVAL */
		else if (a[3] & 8)
			br.ring_addr = 0;
	}
	if (a[3] & 16)
		br.resv[0] = 1;
	if (reg(u, vi, IORING_REGISTER_PBUF_RING, &br, 1) || br.bgid >= NPBUF)
		return;
	if (br.pad & NW_PBUF_RING_MMAP) {
		void *m;

		if (u->pbuf_map[slot] || u->fd_is_index)
			return;
		m = mmap(NULL, PBUF_SZ, PROT_READ | PROT_WRITE, MAP_SHARED,
			 u->r.fd,
			 (off_t)(IORING_OFF_PBUF_RING |
				 (uint64_t)br.bgid << IORING_OFF_PBUF_SHIFT));
		if (m == MAP_FAILED)
			return;
		u->pbuf_map[slot] = m;
		br_ring = m;
	} else {
		br_ring = (void *)(uintptr_t)br.ring_addr;
	}
	/* Some buffers in it, bids 0..n-1, in the arena. */
	n = a[4] % 9;
	if (n > br.ring_entries)
		n = br.ring_entries;
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_buf *b = &br_ring->bufs[i];

		b->addr = arena_at(u, (uint8_t)(a[5] + i * 4));
		b->len = (a[4] & 0x80) ? 1 + i : 512;
		b->bid = (uint16_t)i;
	}
	__atomic_store_n(&br_ring->tail, (uint16_t)n, __ATOMIC_RELEASE);
}

static void reg_pbuf_other(struct run *u, const uint8_t *a, bool vi)
{
	if (a[2] & 1) {
		struct io_uring_buf_reg br = {.bgid = a[1] % 8};

		if (a[2] & 2)
			br.resv[1] = 1;
		reg(u, vi, IORING_UNREGISTER_PBUF_RING, &br, 1);
	} else {
		struct rf_buf_status st = {.buf_group = a[1] % 8};

		if (a[2] & 2)
			st.resv[a[3] % 8] = 1;
		reg(u, vi, IORING_REGISTER_PBUF_STATUS, &st,
		    (a[2] & 4) ? 2 : 1);
	}
}

static void reg_restrict(struct run *u, const uint8_t *a, bool vi)
{
	struct io_uring_restriction res[8];
	unsigned int n = a[1] % 4 + 1;

	memset(res, 0, sizeof(res));
	for (unsigned int i = 0; i < n - 1; i++) {
		uint8_t v = a[2 + i];

		res[i].opcode = v % 5; /* 4: not a restriction */
		switch (v % 5) {
		case IORING_RESTRICTION_REGISTER_OP:
			res[i].register_op = v >> 3;
			break;
		case IORING_RESTRICTION_SQE_OP:
			res[i].sqe_op = v >> 2;
			break;
		case IORING_RESTRICTION_SQE_FLAGS_ALLOWED:
			res[i].sqe_flags = v >> 1;
			break;
		case IORING_RESTRICTION_SQE_FLAGS_REQUIRED:
			/* Only ASYNC, which the teardown's cancel can carry. */
			res[i].sqe_flags = v & IOSQE_ASYNC;
			break;
		}
	}
	/* The teardown's cancels stay allowed. */
	res[n - 1].opcode = IORING_RESTRICTION_SQE_OP;
	res[n - 1].sqe_op = IORING_OP_ASYNC_CANCEL;
	res[n].opcode = IORING_RESTRICTION_REGISTER_OP;
	res[n].register_op = IORING_REGISTER_SYNC_CANCEL;
	res[n + 1].opcode = IORING_RESTRICTION_REGISTER_OP;
	res[n + 1].register_op = IORING_UNREGISTER_RING_FDS;
	res[n + 2].opcode = IORING_RESTRICTION_REGISTER_OP;
	res[n + 2].register_op = IORING_UNREGISTER_FILES;
	res[n + 3].opcode = IORING_RESTRICTION_REGISTER_OP;
	res[n + 3].register_op = IORING_UNREGISTER_BUFFERS;
	if (a[5] & 1)
		res[0].resv = 1;
	if (reg(u, vi, IORING_REGISTER_RESTRICTIONS, res, n + 4) == 0)
		for (unsigned int i = 0; i < n; i++)
			if (res[i].opcode ==
			    IORING_RESTRICTION_SQE_FLAGS_REQUIRED)
				u->req_flags |= res[i].sqe_flags;
}

static void reg_enable(struct run *u, const uint8_t *a, bool vi)
{
	if (reg(u, vi, IORING_REGISTER_ENABLE_RINGS, (a[1] & 1) ? u : NULL,
		a[1] >> 6) == 0)
		u->disabled = false;
}

static void reg_iowq(struct run *u, const uint8_t *a, bool vi)
{
	uint8_t mask[16];
	uint32_t vals[2] = {a[2] % 5, a[3] % 5};

	memset(mask, a[2], sizeof(mask));
	switch (a[1] % 4) {
	case 0:
		reg(u, vi, IORING_REGISTER_IOWQ_AFF, mask, a[4] % 17);
		break;
	case 1:
		reg(u, vi, IORING_UNREGISTER_IOWQ_AFF, NULL, a[4] & 1);
		break;
	default:
		if (a[4] & 1)
			vals[0] = 1U << 31;
		reg(u, vi, IORING_REGISTER_IOWQ_MAX_WORKERS, vals,
		    (a[4] & 2) ? 1 : 2);
		break;
	}
}

static void reg_ringfds(struct run *u, const uint8_t *a, bool vi)
{
	struct io_uring_rsrc_update up[2];
	unsigned int nr = a[2] % 3;
	int ret;

	memset(up, 0, sizeof(up));
	for (unsigned int i = 0; i < 2; i++) {
		up[i].offset =
			(a[1] >> (4 * i) & 15) == 15 ? -1U : a[1] >> (4 * i);
		up[i].data =
			(uint64_t)((a[3] >> i) & 1 ? env_fd(u, a[4]) : u->r.fd);
		if (a[5] & 1)
			up[i].resv = 1;
	}
	if (a[2] & 0x80) {
		for (unsigned int i = 0; i < 2; i++)
			up[i].offset =
				(uint32_t)u->ringidx[(a[6] + i) % NRINGIDX];
		reg(u, vi, IORING_UNREGISTER_RING_FDS, up, nr);
		return;
	}
	ret = reg(u, vi, IORING_REGISTER_RING_FDS, up, nr);
	for (int i = 0; i < ret && i < 2; i++)
		for (int j = 0; j < NRINGIDX; j++)
			if (u->ringidx[j] < 0 ||
			    u->ringidx[j] == (int)up[i].offset) {
				u->ringidx[j] = (int)up[i].offset;
				break;
			}
}

/*
 * A personality; with a[3] & 1 (as root) one of other credentials: this
 * thread's egid and groups changed for the call alone (the raw system
 * calls change the calling thread's only), so that a request using it
 * switches credentials in a worker (creds.c).
 */
static int reg_pers(struct run *u, const uint8_t *a, bool vi)
{
	gid_t g = 4200 + a[4] % 8, egid = getegid(), groups[64];
	int ret, n = getgroups(64, groups);

	if (!(a[3] & 1) || geteuid() != 0 || n < 0)
		return reg(u, vi, IORING_REGISTER_PERSONALITY, NULL, 0);
	if (syscall(SYS_setresgid, -1, g, -1) ||
	    syscall(SYS_setgroups, (a[3] & 2) ? 1 : 0, &g))
		abort();
	ret = reg(u, vi, IORING_REGISTER_PERSONALITY, NULL, 0);
	if (syscall(SYS_setgroups, n, groups) ||
	    syscall(SYS_setresgid, -1, egid, -1))
		abort();
	return ret;
}

static void reg_misc(struct run *u, const uint8_t *a, bool vi)
{
	switch (a[1] % 6) {
	case 0: {
		struct io_uring_file_index_range r = {
			.off = a[2], .len = a[3], .resv = a[4] & 1};

		if (a[4] & 2)
			r.len = -1U;
		reg(u, vi, IORING_REGISTER_FILE_ALLOC_RANGE, &r, 0);
		break;
	}
	case 1: {
		struct nw_clock_register c = {.clockid = a[2] % 9};

		if (a[3] & 1)
			c.resv[0] = 1;
		if (reg(u, vi, IORING_REGISTER_CLOCK, &c, 0) == 0)
			u->clockid = (int)c.clockid;
		break;
	}
	case 2: {
		struct nw_napi_register n = {
			.busy_poll_to = a[2],
			.prefer_busy_poll = a[3] & 1,
			.opcode = a[3] >> 1 & 3,
			.op_param = a[4] % 3,
		};

		if (a[5] & 1)
			n.resv = 1;
		reg(u, vi,
		    (a[5] & 2) ? IORING_UNREGISTER_NAPI : IORING_REGISTER_NAPI,
		    (a[5] & 4) ? NULL : &n, a[6] % 2);
		break;
	}
	case 3: {
		int ret = reg_pers(u, a, vi);

		if (ret > 0)
			u->pers[a[2] % 4] = ret;
		break;
	}
	case 4:
		reg(u, vi, IORING_UNREGISTER_PERSONALITY, NULL,
		    (a[3] & 1) ? a[2] : (unsigned int)u->pers[a[2] % 4]);
		break;
	default: {
		static uint8_t probe[sizeof(struct io_uring_probe) +
				     256 * sizeof(struct io_uring_probe_op)];

		memset(probe, 0, sizeof(probe));
		if (a[3] & 1)
			probe[a[4] % sizeof(probe)] = 1;
		reg(u, vi, IORING_REGISTER_PROBE, probe, a[2]);
		break;
	}
	}
}

static void reg_cancel(struct run *u, const uint8_t *a, bool vi)
{
	struct io_uring_sync_cancel_reg c = {
		.addr = a[2] % (MAX_SQES + 1),
		.fd = (a[3] & 1) ? env_fd(u, a[4]) : (int)(a[4] % 4),
		.flags = a[1],
		.timeout = {.tv_sec = 0,
			    .tv_nsec = (long long)(a[5] % 3) * 1000000},
	};

	if (!(a[3] & 2))
		c.flags &= ~IORING_ASYNC_CANCEL_OP;
	/* 6.3's opcode, the first byte of the padding, then the rest. */
	memset(&c.pad, a[6], 1);
	if (a[3] & 4)
		c.pad[1] = 1;
	reg(u, vi, IORING_REGISTER_SYNC_CANCEL, &c, 1);
}

/* Remap after a resize: the rings moved. */
static void remap(struct run *u, const struct io_uring_params *np)
{
	struct io_uring_params p = u->r.p;
	int fd = u->r.fd;

	u->consumed0 +=
		__atomic_load_n(u->r.sq_head, __ATOMIC_ACQUIRE) - u->head0;
	p.sq_entries = np->sq_entries;
	p.cq_entries = np->cq_entries;
	p.sq_off = np->sq_off;
	p.cq_off = np->cq_off;
	t_ring_unmap(&u->r);
	u->r.fd = fd;
	u->usable = t_ring_map(&u->r, fd, &p) == 0;
	if (!u->usable) {
		u->r.fd = fd;
		return;
	}
	u->head0 = __atomic_load_n(u->r.sq_head, __ATOMIC_ACQUIRE);
}

static void reg_resize(struct run *u, const uint8_t *a, bool vi)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.sq_entries = entries_of(a[1]);
	p.cq_entries = entries_of(a[2]);
	p.flags = (a[3] & 1 ? IORING_SETUP_CQSIZE : 0) |
		  (a[3] & 2 ? IORING_SETUP_CLAMP : 0) |
		  (a[3] & 4 ? IORING_SETUP_SQPOLL : 0);
	if (a[3] & 8)
		p.resv[0] = 1;
	reap(u);
	/* A NO_MMAP ring's new rings need memory: user_addr 0, -EFAULT. */
	if (reg(u, vi, IORING_REGISTER_RESIZE_RINGS, &p, 1) == 0) {
		if (u->flags & IORING_SETUP_NO_MMAP) {
			fprintf(stderr, "fuzz: a resize to no memory worked\n");
			abort();
		}
		remap(u, &p);
	}
}

static void reg_clone(struct run *u, const uint8_t *a, bool vi)
{
	struct nw_clone_buffers c = {
		.src_fd = (uint32_t)((a[1] & 1) ? u->peer.fd : env_fd(u, a[2])),
		.flags = a[1] >> 1 & 3,
		.src_off = a[3] % 4,
		.dst_off = a[4] % 4,
		.nr = a[5] % 5,
	};

	if (a[1] & 8)
		c.pad[0] = 1;
	reg(u, vi, IORING_REGISTER_CLONE_BUFFERS, &c, 1);
}

static void reg_query(struct run *u, const uint8_t *a, bool vi)
{
	static uint8_t data[256];
	struct rf_query_hdr h[2] = {
		{
			.query_data = (uint64_t)(uintptr_t)data,
			.query_op = a[1] % 4,
			.size = a[2],
		},
	};

	if (a[3] & 1)
		h[0].next_entry = (uint64_t)(uintptr_t)&h[1];
	h[1] = h[0];
	h[1].query_op = a[4] % 4;
	if (a[3] & 2)
		h[0].resv[0] = 1;
	if (a[3] & 4)
		h[0].query_data = arena_at(u, a[5]);
	if (a[3] & 8)
		nowait_register(-1, IORING_REGISTER_QUERY, h, 0);
	else
		reg(u, vi, IORING_REGISTER_QUERY, h, a[6] & 1);
}

/* Any opcode (with flag bits), its argument somewhere in the arena. */
static void reg_raw(struct run *u, const uint8_t *a, bool vi)
{
	unsigned int op = a[1] % 40;
	void *arg = NULL;

	if (a[2] & 1)
		arg = (void *)(uintptr_t)(arena_at(u, a[3]) + a[4]);
	if (a[2] & 2)
		arg = u->env.arena + FZ_ARENA - (a[4] % 64); /* at the end */
	/* The unsafe ones (an enable, a resize, ring fds) have their own. */
	if (op == IORING_REGISTER_ENABLE_RINGS ||
	    op == IORING_REGISTER_RESIZE_RINGS ||
	    op == IORING_REGISTER_RING_FDS ||
	    op == IORING_REGISTER_RESTRICTIONS ||
	    op == IORING_REGISTER_SYNC_CANCEL || /* a timeout of -1: forever */
	    op == IORING_REGISTER_PBUF_RING)
		op = IORING_REGISTER_PROBE;
	if (a[2] & 4)
		op |= 1U << (a[5] % 8 + 24);
	reg(u, vi, op, arg, (unsigned int)a[5] | (unsigned int)a[6] << 8);
}

static void do_register(struct run *u, const uint8_t *a)
{
	static void (*const ops[])(struct run *, const uint8_t *, bool) = {
		reg_files,  reg_files_update, reg_buffers,  reg_buffers_update,
		reg_pbuf,   reg_pbuf_other,   reg_restrict, reg_enable,
		reg_iowq,   reg_ringfds,      reg_misc,	    reg_cancel,
		reg_resize, reg_clone,	      reg_query,    reg_raw,
		reg_misc,   reg_files,
	};
	unsigned int n = sizeof(ops) / sizeof(ops[0]);
	bool vi = (a[0] / n) & 1;

	if (a[0] % n == 1 && (a[0] / n) & 2) {
		/* The unregisters. */
		reg(u, vi,
		    (a[1] & 1) ? IORING_UNREGISTER_FILES
			       : IORING_UNREGISTER_BUFFERS,
		    NULL, a[2] & 1);
	} else if (a[0] % n == 7 && (a[0] / n) & 2) {
		int efd = env_fd(u, (a[1] & 1) ? 5 : a[2]);

		if (a[1] & 2)
			reg(u, vi, IORING_UNREGISTER_EVENTFD, NULL, 0);
		else
			reg(u, vi,
			    (a[1] & 4) ? IORING_REGISTER_EVENTFD_ASYNC
				       : IORING_REGISTER_EVENTFD,
			    &efd, (a[1] & 8) ? 2 : 1);
	} else {
		ops[a[0] % n](u, a, vi);
	}
	reap(u);
}

/* The resource SQEs' own fields (kbuf.c, rsrc.c, ringpoll.c). */
static void sqe_rsrc(struct run *u, struct io_uring_sqe *sqe, const uint8_t *a)
{
	int *fds = (int *)(uintptr_t)arena_at(u, 0xfe);

	switch (sqe->opcode) {
	case IORING_OP_PROVIDE_BUFFERS:
	case IORING_OP_REMOVE_BUFFERS:
		sqe->fd = a[2] % 9;   /* how many */
		sqe->off = a[4] % 16; /* the first bid */
		sqe->len = (a[6] & 0x80) ? 1U << 31 : a[6] * 8U;
		sqe->buf_group = a[5] % 8;
		break;
	case IORING_OP_FILES_UPDATE:
		for (int i = 0; i < 4; i++)
			fds[i] = env_fd(u, (uint8_t)(a[2] + i));
		sqe->fd = -1;
		sqe->addr = (uint64_t)(uintptr_t)fds;
		sqe->len = a[6] % 5;
		sqe->off = a[4] == 0xff ? IORING_FILE_INDEX_ALLOC : a[4] % 24;
		break;
	case NW_OP_FIXED_FD_INSTALL: /* the flag it needs, or not */
		sqe->flags |= (a[4] & 1) ? 0 : IOSQE_FIXED_FILE;
		sqe->fd = a[2] % 20;
		sqe->rw_flags = (a[4] & 2) ? IORING_FIXED_FD_NO_CLOEXEC : 0;
		sqe->addr = sqe->off = sqe->len = 0;
		break;
	case IORING_OP_EPOLL_CTL: { /* the environment's epoll set */
		struct epoll_event *ev = (void *)(uintptr_t)arena_at(u, 0xfd);

		ev->events = EPOLLIN | ((a[4] & 1) ? EPOLLET : 0);
		ev->data.u64 = a[2];
		sqe->fd = (a[4] & 2) ? env_fd(u, a[5]) : u->env.fd[6];
		sqe->off = (uint64_t)(uint32_t)env_fd(u, a[2]);
		sqe->len = a[6] % 4; /* EPOLL_CTL_ADD, DEL, MOD; 0 bad */
		sqe->addr = (uint64_t)(uintptr_t)ev;
		break;
	}
	case NW_OP_EPOLL_WAIT:
		if (!(sqe->flags & IOSQE_FIXED_FILE))
			sqe->fd = (a[4] & 2) ? env_fd(u, a[5]) : u->env.fd[6];
		sqe->addr = arena_at(u, 0xfc);
		sqe->len = a[6] % 8;
		sqe->off = 0;
		break;
	case IORING_OP_POLL_ADD: /* readiness of the ring's own CQ */
		sqe->fd = u->r.fd;
		sqe->flags &= (uint8_t)~IOSQE_FIXED_FILE;
		sqe->poll32_events = POLLIN | ((a[4] & 1) ? POLLOUT : 0);
		sqe->len = (a[4] & 2) ? IORING_POLL_ADD_MULTI : 0;
		sqe->addr = sqe->off = 0;
		break;
	}
}

/* An SQE using what was registered: fixed files and buffers, groups. */
static void add_sqe_small(struct run *u, const uint8_t *a)
{
	static const uint8_t ops[] = {
		IORING_OP_NOP,
		IORING_OP_READ_FIXED,
		IORING_OP_WRITE_FIXED,
		IORING_OP_READ,
		IORING_OP_RECV,
		IORING_OP_WRITE,
		NW_OP_READ_MULTISHOT,
		NW_OP_READV_FIXED,
		IORING_OP_PROVIDE_BUFFERS,
		IORING_OP_REMOVE_BUFFERS,
		IORING_OP_FILES_UPDATE,
		NW_OP_FIXED_FD_INSTALL,
		IORING_OP_POLL_ADD,
		IORING_OP_EPOLL_CTL,
		NW_OP_EPOLL_WAIT,
	};
	struct io_uring_sqe *sqe = get_sqe(u);
	uint8_t fd = a[2];

	if (!sqe)
		return;
	sqe->opcode = ops[a[0] % (sizeof(ops) / sizeof(ops[0]))];
	/* No CQE_SKIP_SUCCESS: the teardown counts CQEs (as fz_sanitize). */
	sqe->flags = a[1] & (IOSQE_FIXED_FILE | IOSQE_IO_LINK | IOSQE_ASYNC |
			     IOSQE_BUFFER_SELECT);
	sqe->fd = (sqe->flags & IOSQE_FIXED_FILE) ? fd % 20 : env_fd(u, fd);
	sqe->addr = arena_at(u, a[3] & 0xf0) + (a[3] & 0x0f);
	sqe->len = a[6] * 16U;
	sqe->off = (a[4] & 0x80) ? -1ULL : (uint64_t)a[4] * 16;
	sqe->buf_index =
		(sqe->flags & IOSQE_BUFFER_SELECT) ? a[5] % 8 : a[5] % 6;
	if (a[5] & 0x80) /* a personality: registered, or not */
		sqe->personality =
			(a[5] & 0x40) ? u->pers[a[5] >> 3 & 3] : (a[5] & 7);
	switch (sqe->opcode) {
	case IORING_OP_NOP:
		sqe->rw_flags = a[4] & 0x3f; /* IORING_NOP_* */
		break;
	case IORING_OP_RECV:
		sqe->ioprio = a[4] & 3; /* IORING_RECV_MULTISHOT, ... */
		if (a[4] & 4)
			sqe->ioprio |= 1U << 4; /* IORING_RECVSEND_BUNDLE */
		sqe->off = 0;
		break;
	case NW_OP_READV_FIXED: {
		struct iovec *iov = (void *)(uintptr_t)arena_at(u, 0xff);

		iov[0].iov_base = (void *)(uintptr_t)arena_at(u, a[3]);
		iov[0].iov_len = a[6];
		sqe->addr = (uint64_t)(uintptr_t)iov;
		sqe->len = 1;
		break;
	}
	default:
		sqe_rsrc(u, sqe, a);
		break;
	}
	sqe->user_data = ++u->queued;
	fz_final_note(&u->fin, sqe);
}

static void add_sqe_raw(struct run *u, const uint8_t *p)
{
	struct io_uring_sqe *sqe = get_sqe(u);

	if (sqe)
		fz_sqe_from_input(&u->env, &u->fin, sqe, p, ++u->queued);
}

/*
 * IORING_ENTER_SQ_WAIT waits for the poller to consume, and nothing but
 * SQ_WAKEUP wakes a poller that went idle (IORING_SQ_NEED_WAKEUP): in the
 * kernel too, an SQ_WAIT on a full SQ of an idle poller sleeps until a
 * signal. So as a program (liburing) does, the wakeup goes with it when
 * the flag asks for one, read after the tail (a full barrier: the poller
 * sets the flag, then looks at the tail once more before it sleeps). An
 * input that waited past its poller's idle time on a loaded machine hung
 * here (the 97 s timeout of the 600 s runs).
 */
static unsigned int sq_wait_wake(struct run *u, unsigned int flags)
{
	if (!(flags & IORING_ENTER_SQ_WAIT) ||
	    !(u->flags & IORING_SETUP_SQPOLL))
		return flags;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!u->usable || (__atomic_load_n(u->r.sq_flags, __ATOMIC_RELAXED) &
			   IORING_SQ_NEED_WAKEUP))
		flags |= IORING_ENTER_SQ_WAKEUP;
	return flags;
}

static void do_enter(struct run *u, const uint8_t *a)
{
	unsigned int flags =
		a[0] & (IORING_ENTER_GETEVENTS | IORING_ENTER_SQ_WAKEUP |
			IORING_ENTER_SQ_WAIT | IORING_ENTER_NO_IOWAIT);
	struct __kernel_timespec ts = {.tv_nsec = (a[2] % 4) * 250000};
	struct io_uring_getevents_arg arg = {.ts = (uint64_t)(uintptr_t)&ts};
	unsigned int n = u->usable ? t_ring_flush(&u->r) : 0;

	NW_GETEVENTS_MIN_WAIT(arg) = a[3] % 4 * 100;
	if ((a[1] & 4) && (flags & IORING_ENTER_GETEVENTS)) {
		struct timespec now;

		/* An absolute time on the ring's clock, 1 ms ahead. */
		clock_gettime(u->clockid, &now);
		ts.tv_sec = now.tv_sec;
		ts.tv_nsec = now.tv_nsec + 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		flags |= IORING_ENTER_ABS_TIMER;
	}
	if (a[1] & 8)
		arg.sigmask_sz = 8;
	if (flags & IORING_ENTER_GETEVENTS) {
		flags |= IORING_ENTER_EXT_ARG;
		if (a[1] & 16)
			flags |= IORING_ENTER_EXT_ARG_REG; /* -EINVAL */
	}
	flags = sq_wait_wake(u, flags);
	if (u->fd_is_index)
		flags |= IORING_ENTER_REGISTERED_RING;
	else if ((a[1] & 32) && u->ringidx[a[4] % NRINGIDX] >= 0) {
		flags |= IORING_ENTER_REGISTERED_RING;
		nowait_hook_enter(u->ringidx[a[4] % NRINGIDX], n, a[1] & 3,
				  flags, &arg, (a[1] & 64) ? 8 : sizeof(arg));
		reap(u);
		return;
	}
	if (flags & IORING_ENTER_EXT_ARG)
		nowait_enter(u->fd, n, a[1] & 3, flags, &arg,
			     (a[1] & 64) ? 8 : sizeof(arg));
	else
		nowait_enter(u->fd, n, 0, flags, NULL, 0);
	reap(u);
}

/* Copies of fds the close hooks are told of, then closed. */
static void hook_close(struct run *u, const uint8_t *a, int fd)
{
	int lo, hi;

	if (!(a[4] & 1)) { /* a copy of a ring fd or another, learnt */
		lo = dup((a[2] & 1) ? u->r.fd : fd);
		if (lo >= 0) {
			nowait_hook_ring_fd_learn(lo);
			nowait_hook_is_ring_fd(lo);
			nowait_hook_fd_closing(lo);
			/* nowait.h's close notice, not the door's */
			if (a[4] & 2)
				nowait_fd_closing(lo);
			close(lo);
		}
		return;
	}
	lo = dup(fd);
	hi = dup(u->r.fd);
	/* Only two numbers next to each other: nothing else goes. */
	if (lo >= 0 && hi == lo + 1)
		nowait_hook_fd_range_closing((unsigned int)lo,
					     (unsigned int)hi);
	if (lo >= 0)
		close(lo);
	if (hi >= 0)
		close(hi);
}

/* The ring fd in an epoll set, watched; a PBUF ring mapped by the door. */
static void hook_watch(struct run *u, const uint8_t *a, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int ep = u->env.fd[6], pfd;
	size_t len = (a[3] & 1) ? 4096 : PBUF_SZ;
	uint64_t off = IORING_OFF_PBUF_RING | (uint64_t)(a[2] % 8)
						      << IORING_OFF_PBUF_SHIFT;
	void *res = NULL;

	if (a[4] & 1) {
		if (nowait_hook_mmap(NULL, len, PROT_READ | PROT_WRITE,
				     MAP_SHARED, (a[3] & 2) ? fd : u->r.fd, off,
				     &res) == 1)
			munmap(res, len);
		return;
	}
	if (!epoll_ctl(ep, EPOLL_CTL_ADD, u->r.fd, &ev)) {
		nowait_hook_uring_wake_fd(ep, true);
		epoll_ctl(ep, EPOLL_CTL_DEL, u->r.fd, NULL);
		nowait_hook_uring_wake_fd(ep, false);
	}
	pfd = nowait_ring_pollfd((a[2] & 1) ? u->r.fd : fd);
	if (pfd >= 0) {
		nowait_hook_ring_pollfd_referenced(pfd);
		nowait_ring_poll_mask(u->r.fd);
		nowait_ring_pollfd_close(pfd);
	}
}

/*
 * The CPU verdict as the preload's spinner asks it: the state moved once
 * to a shared page (as before a fork; once, the page is never freed),
 * then asked on the monotonic clock, a[2] * 16 ms ahead, which samples
 * the pressure file again after the interval.
 */
static void hook_pressure(const uint8_t *a)
{
	static bool shared;
	struct timespec now;

	if (!shared) {
		shared = true;
		nowait_hook_pressure_share();
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	nowait_hook_cpu_busy((uint64_t)now.tv_sec * 1000000000ULL +
			     (uint64_t)now.tv_nsec + ((uint64_t)a[2] << 24));
}

/* include/nowait-hook.h's door, as the preload and the bench call it. */
static void do_hook(struct run *u, const uint8_t *a)
{
	int fd = env_fd(u, a[1]);

	switch (a[0] % 7) {
	case 0:
		nowait_hook_is_ring_fd(fd);
		/* nowait.h's version, asked as a program would */
		if ((a[4] & 2) &&
		    nowait_version_check((int)(a[2] % 3) - 1, a[3] % 4) &&
		    !nowait_version())
			abort();
		break;
	case 1:
		hook_close(u, a, fd);
		break;
	case 2:
		nowait_hook_reissue_count();
		nowait_hook_cpu_busy_cached();
		nowait_hook_cpu_busy((uint64_t)a[2] << 24);
		if (a[4] & 2)
			hook_pressure(a);
		if (a[4] & 1) /* the statistics' report (stats.c) */
			raise(SIGUSR2);
		break;
	case 3: /* a write the program did, as the write interposer sees */
		if (write(u->env.fd[(a[2] & 1) ? 3 : 1], "0123456789",
			  a[3] % 10 + 1) > 0)
			nowait_hook_wrote();
		break;
	case 4:
		hook_watch(u, a, fd);
		break;
	case 5:
		nowait_hook_exec();
		break;
	default:
		nowait_hook_enter(
			u->fd, 0, 0,
			sq_wait_wake(u, a[2] & 0x7f) |
				(u->fd_is_index ? IORING_ENTER_REGISTERED_RING
						: 0),
			NULL, 0);
		break;
	}
	reap(u);
}

/* An mmap of the ring's offsets (ringmem.c), then munmap. */
static void do_mmap(struct run *u, const uint8_t *a)
{
	static const uint64_t offs[4] = {IORING_OFF_SQ_RING, IORING_OFF_CQ_RING,
					 IORING_OFF_SQES, IORING_OFF_PBUF_RING};
	uint64_t off = offs[a[0] % 4];
	size_t len = (a[1] & 0x80) ? (size_t)a[1] : (size_t)(a[1] % 8) << 12;
	int prot = (a[2] & 1) ? PROT_READ : PROT_READ | PROT_WRITE;
	void *m;

	if (off == IORING_OFF_PBUF_RING)
		off |= (uint64_t)a[3] << IORING_OFF_PBUF_SHIFT;
	if (a[2] & 2)
		off += 4096;
	m = mmap(NULL, len, prot, (a[2] & 4) ? MAP_PRIVATE : MAP_SHARED,
		 (a[2] & 8) ? u->env.fd[4] : u->r.fd, (off_t)off);
	if (m != MAP_FAILED)
		munmap(m, len);
}

static void run_records(struct run *u, const uint8_t *d, size_t n)
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		unsigned int kind = d[i] % 16;
		const uint8_t *a = d + i + 1;

		if (kind < 5) {
			do_register(u, a);
		} else if (kind < 9) {
			add_sqe_small(u, a);
		} else if (kind == 9) {
			submit(u);
		} else if (kind == 10) {
			do_enter(u, a);
		} else if (kind == 11) {
			do_hook(u, a);
		} else if (kind == 12) {
			do_mmap(u, a);
		} else {
			if (n - i - 8 < sizeof(struct io_uring_sqe))
				return;
			add_sqe_raw(u, d + i + 8);
			i += sizeof(struct io_uring_sqe);
		}
	}
}

static void queue_cancel(struct run *u)
{
	struct io_uring_sqe *sqe;

	if (!u->usable)
		return;
	sqe = t_get_sqe(&u->r);
	if (!sqe)
		return;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->flags = (uint8_t)u->req_flags;
	sqe->fd = -1;
	sqe->cancel_flags = IORING_ASYNC_CANCEL_ANY;
	sqe->user_data = FZ_MARK_OWN;
}

static void sync_cancel(struct run *u)
{
	struct io_uring_sync_cancel_reg c = {
		.fd = -1,
		.flags = IORING_ASYNC_CANCEL_ANY,
		.timeout = {.tv_sec = 0, .tv_nsec = 10000000},
	};

	reg(u, false, IORING_REGISTER_SYNC_CANCEL, &c, 1);
}

static unsigned int consumed_sqes(struct run *u)
{
	return u->consumed0 + __atomic_load_n(u->r.sq_head, __ATOMIC_ACQUIRE) -
	       u->head0 - u->nown;
}

static void td_reap(void *u)
{
	reap(u);
}

static unsigned int td_consumed(void *u)
{
	return consumed_sqes(u);
}

static void td_again(void *u)
{
	queue_cancel(u);
	submit(u);
	sync_cancel(u);
}

static void td_wait(void *p)
{
	struct run *u = p;

	ring_enter(u, t_ring_flush(&u->r), 1, IORING_ENTER_GETEVENTS, 1000);
}

static void teardown(struct run *u)
{
	static const struct fz_reaper ops = {
		td_reap, td_consumed, td_again, 200, td_wait,
	};
	uint64_t waited;

	if (!u->usable)
		return;
	if (u->disabled)
		reg(u, false, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
	submit(u);
	for (int i = 0; i < 4 && t_ring_flush(&u->r); i++)
		submit(u);
	queue_cancel(u);
	submit(u);
	waited = fz_reap_finals(&u->fin, &u->r, &ops, u);
	if (fz_log)
		fprintf(stderr,
			"sq head0 %u head %u tail %u own %u queued %u\n",
			u->head0, *u->r.sq_head, *u->r.sq_tail, u->nown,
			u->queued);
	if (u->fin.nfinal != consumed_sqes(u)) {
		fprintf(stderr, "fuzz: %u of the harness's cancels posted\n",
			u->nown);
		fz_final_missing(&u->fin, &u->r, consumed_sqes(u), u->queued,
				 waited);
	}
}

/* The program's memory for NO_MMAP (cq_off/sq_off.user_addr). */
static void nommap_mem(struct run *u, struct io_uring_params *p, uint8_t how)
{
	if (!u->umem)
		return;
	memset(u->umem, 0xa5, 8192);
	NW_OFF_USER_ADDR(p->cq_off) = (uint64_t)(uintptr_t)u->umem;
	NW_OFF_USER_ADDR(p->sq_off) =
		(uint64_t)(uintptr_t)u->umem + UMEM_SZ / 2;
	switch (how) {
	case 1:
		NW_OFF_USER_ADDR(p->cq_off) += 64; /* unaligned: -EINVAL */
		break;
	case 2: /* each in the last page before its hole */
		NW_OFF_USER_ADDR(p->cq_off) += UMEM_SZ / 2 - 8192;
		NW_OFF_USER_ADDR(p->sq_off) += UMEM_SZ / 2 - 8192;
		break;
	case 3:
		NW_OFF_USER_ADDR(p->sq_off) = 0; /* -EFAULT */
		break;
	}
}

/* A t_ring over NO_MMAP's memory (as test/no-mmap.c has it). */
static void ring_over(struct t_ring *r, int fd, const struct io_uring_params *p)
{
	char *rings = (char *)(uintptr_t)NW_OFF_USER_ADDR(p->cq_off);

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->p = *p;
	r->sq_head = (unsigned int *)(rings + p->sq_off.head);
	r->sq_tail = (unsigned int *)(rings + p->sq_off.tail);
	r->sq_mask = (unsigned int *)(rings + p->sq_off.ring_mask);
	r->sq_entries = (unsigned int *)(rings + p->sq_off.ring_entries);
	r->sq_flags = (unsigned int *)(rings + p->sq_off.flags);
	r->sq_dropped = (unsigned int *)(rings + p->sq_off.dropped);
	if (!(p->flags & IORING_SETUP_NO_SQARRAY))
		r->sq_array = (unsigned int *)(rings + p->sq_off.array);
	r->cq_head = (unsigned int *)(rings + p->cq_off.head);
	r->cq_tail = (unsigned int *)(rings + p->cq_off.tail);
	r->cq_mask = (unsigned int *)(rings + p->cq_off.ring_mask);
	r->cq_entries = (unsigned int *)(rings + p->cq_off.ring_entries);
	r->cq_overflow = (unsigned int *)(rings + p->cq_off.overflow);
	r->cq_flags = (unsigned int *)(rings + p->cq_off.flags);
	r->cqes = (struct io_uring_cqe *)(rings + p->cq_off.cqes);
	r->sqes = (struct io_uring_sqe *)(uintptr_t)NW_OFF_USER_ADDR(p->sq_off);
	r->sqe_tail = __atomic_load_n(r->sq_tail, __ATOMIC_RELAXED);
}

static void peer_open(struct run *u, const uint8_t *h)
{
	struct io_uring_params p;
	struct iovec iov = {u->env.arena, 8192};

	memset(&p, 0, sizeof(p));
	u->peer.fd = -1;
	if (h[2] & 32) {
		p.flags = IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 1;
	}
	if (t_ring_init(&u->peer, 4, &p) == 0) {
		u->env.ring_fd2 = u->peer.fd;
		/* Buffers for CLONE_BUFFERS to take. */
		nowait_register(u->peer.fd, IORING_REGISTER_BUFFERS, &iov, 1);
	}
}

static int setup(struct run *u, const uint8_t *h)
{
	struct io_uring_params p;
	int fd, wq[4] = {u->peer.fd, -1, u->env.fd[0], 9999};

	memset(&p, 0, sizeof(p));
	for (int i = 0; i < 16; i++)
		if ((h[i / 8] >> (i % 8)) & 1)
			p.flags |= setup_bits[i];
	if (h[2] & 1)
		p.flags |= IORING_SETUP_REGISTERED_FD_ONLY;
	if (h[2] & 2)
		p.flags |= IORING_SETUP_CQE_MIXED;
	if (h[2] & 4)
		p.flags |= 1U << 29; /* no such flag: -EINVAL */
	if (h[2] & 8)
		p.resv[h[8] % 3] = 1;
	p.cq_entries = entries_of(h[4]);
	p.sq_thread_idle = h[5] % 4;
	p.sq_thread_cpu = (h[6] & 0x80) ? -1U : h[6] % 4;
	p.wq_fd = (uint32_t)wq[h[7] % 4];
	if (p.flags & IORING_SETUP_NO_MMAP)
		nommap_mem(u, &p, h[2] >> 6);
	fd = nowait_setup(entries_of(h[3]), &p);
	if (fd < 0)
		return -1;
	u->flags = p.flags;
	u->fd = fd;
	u->disabled = p.flags & IORING_SETUP_R_DISABLED;
	if (p.flags & IORING_SETUP_REGISTERED_FD_ONLY) {
		/* fd is an index in this thread's table; no fd to map. */
		u->fd_is_index = true;
		u->ringidx[0] = fd;
		u->r.fd = -1;
		ring_over(&u->r, -1, &p);
		u->usable = true;
	} else if (p.flags & IORING_SETUP_NO_MMAP) {
		ring_over(&u->r, fd, &p);
		u->usable = true;
	} else {
		u->usable = ((h[2] & 16) ? t_ring_map_apart(&u->r, fd, &p)
					 : t_ring_map(&u->r, fd, &p)) == 0;
		u->r.fd = fd;
	}
	u->env.ring_fd = u->r.fd;
	if (u->usable)
		u->head0 = __atomic_load_n(u->r.sq_head, __ATOMIC_ACQUIRE);
	return 0;
}

static void finish(struct run *u)
{
	/*
	 * A NO_MMAP ring's memory serves a later input's ring: its tag CQEs
	 * are posted now, not by its teardown (which, in the kernel too, may
	 * run after the close) into what is by then another ring.
	 */
	if (u->flags & IORING_SETUP_NO_MMAP) {
		reg(u, false, IORING_UNREGISTER_FILES, NULL, 0);
		reg(u, false, IORING_UNREGISTER_BUFFERS, NULL, 0);
	}
	/* The registered ring indexes go (tctx.c keeps them past a close). */
	for (int i = NRINGIDX - 1; i >= 0; i--) {
		struct io_uring_rsrc_update up = {
			.offset = (uint32_t)u->ringidx[i]};

		if (u->ringidx[i] >= 0)
			nowait_register(
				u->fd_is_index ? u->fd : u->r.fd,
				IORING_UNREGISTER_RING_FDS |
					(u->fd_is_index
						 ? IORING_REGISTER_USE_REGISTERED_RING
						 : 0),
				&up, 1);
	}
	for (int i = 0; i < NPBUF; i++)
		if (u->pbuf_map[i])
			munmap(u->pbuf_map[i], PBUF_SZ);
	if (u->flags &
	    (IORING_SETUP_NO_MMAP | IORING_SETUP_REGISTERED_FD_ONLY)) {
		if (u->r.fd >= 0)
			close(u->r.fd);
	} else if (u->usable) {
		t_ring_exit(&u->r);
	} else {
		close(u->fd);
	}
	if (u->peer.fd >= 0)
		t_ring_exit(&u->peer);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run u;
	static uint8_t *umem, *pbufs;
	static unsigned int nin;

	if (size < 12)
		return 0;
	fz_init();
	if (!umem) {
		setenv("NOWAIT_TRACE", "/dev/null", 0);
		/* JSON: sqe-fuzz's rings report in the table's form. */
		setenv("NOWAIT_STATS", "json", 0);
		setenv("NOWAIT_STATS_FILE", "/dev/null", 0);
		fz_log = getenv("FZ_REG_LOG") != NULL;
		odd_mem_init();
		/*
		 * SIGUSR2 at its default (libFuzzer takes it), so that the
		 * engine's statistics report on it (stats.c), as a program's.
		 */
		signal(SIGUSR2, SIG_DFL);
		/* As the preload does at load: once, for every input. */
		nowait_hook_mmap_routed();
		umem = mmap(NULL, 4 * UMEM_SZ, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		/*
		 * A hole after each half of each: rings, SQEs. PROT_NONE, not
		 * unmapped, so that it stays a hole: another mapping placed
		 * there (ASan's allocator took one) passes the engine's check
		 * of a NO_MMAP ring's memory as the kernel's pin would, and
		 * the ring then overlaps it (the harness's SQ writes into
		 * ASan's memory: "unknown-crash" in t_ring_flush).
		 */
		for (int i = 1; umem != MAP_FAILED && i <= 8; i++)
			if (mprotect(umem + i * (UMEM_SZ / 2) - 4096, 4096,
				     PROT_NONE))
				abort();
		pbufs = mmap(NULL, NPBUF * PBUF_SZ, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (umem == MAP_FAILED || pbufs == MAP_FAILED)
			abort();
	}
	memset(&u, 0, sizeof(u));
	for (int i = 0; i < NRINGIDX; i++)
		u.ringidx[i] = -1;
	/* Four regions in turn: a ring let go of has time to go. */
	u.umem = umem + (size_t)(nin++ % 4) * UMEM_SZ;
	u.clockid = CLOCK_MONOTONIC;
	for (int i = 0; i < NPBUF; i++)
		u.pbuf[i] = pbufs + i * PBUF_SZ;
	memset(pbufs, 0, NPBUF * PBUF_SZ);
	fz_env_open(&u.env, data, size);
	peer_open(&u, data);
	if (setup(&u, data) == 0) {
		run_records(&u, data + 12, size - 12);
		teardown(&u);
		finish(&u);
	} else if (u.peer.fd >= 0) {
		t_ring_exit(&u.peer);
	}
	fz_env_close(&u.env);
	return 0;
}
