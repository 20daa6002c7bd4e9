/* SPDX-License-Identifier: MIT */
/*
 * The ring memory (the kernel's io_allocate_scq_urings and memmap.c): one
 * "rings" region with the SQ and CQ headers, the CQEs and the SQ index
 * array, which sq_off and cq_off both index, and the SQE array. They live
 * in a sparse memfd at the kernel's mmap offsets: the rings at
 * IORING_OFF_SQ_RING, the SQEs at IORING_OFF_SQES. The kernel serves the
 * rings at IORING_OFF_CQ_RING too; a memfd cannot alias two offsets, so
 * that offset holds a mirror of the rings' header (the ring sizes are read
 * right after the mmap), and nw_ringmem_settle turns a program's mapping of
 * it into a mapping of the rings region before the program can expect a
 * CQE there. docs/ring-memory.md says why. Runs on the program's threads
 * and the SQPOLL poller.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "ringmem.h"
#include "complete.h"

/* The rings region's header; each hot word on its own cache line. */
enum {
	SQ_OFF_HEAD = 0,
	SQ_OFF_TAIL = 64,
	SQ_OFF_MASK = 128,
	SQ_OFF_ENTRIES = 132,
	SQ_OFF_FLAGS = 136,
	SQ_OFF_DROPPED = 140,
	/* 144..191 unused, but for NW_SQ_OFF_WAKE and NW_SQ_OFF_XLOCK */
	CQ_OFF_HEAD = 192,
	CQ_OFF_TAIL = 256,
	CQ_OFF_MASK = 320,
	CQ_OFF_ENTRIES = 324,
	CQ_OFF_OVERFLOW = 328,
	CQ_OFF_FLAGS = 332,
	CQ_OFF_CQES = 384,
};

/* Mappings of the mirror one settle handles (a program maps it once). */
#define NW_MIRROR_MAPS 8

static pthread_mutex_t settle_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int ring_ids;

/* The SQ index array: after cq CQEs, cache-aligned, as the kernel has it. */
static size_t sq_array_off_n(const struct nw_ring *ring, unsigned int cq)
{
	size_t end = CQ_OFF_CQES + ((size_t)cq << ring->cqe_shift);

	return (end + 63) & ~(size_t)63;
}

static size_t sq_array_off(const struct nw_ring *ring)
{
	return sq_array_off_n(ring, ring->cq_entries);
}

/* The rings region for sq and cq entries. */
static size_t rings_size_n(const struct nw_ring *ring, unsigned int sq,
			   unsigned int cq)
{
	if (ring->flags & IORING_SETUP_NO_SQARRAY)
		return CQ_OFF_CQES + ((size_t)cq << ring->cqe_shift);
	return sq_array_off_n(ring, cq) + (size_t)sq * 4;
}

static size_t rings_size(const struct nw_ring *ring)
{
	return rings_size_n(ring, ring->sq_entries, ring->cq_entries);
}

/*
 * Only DEFER_TASKRUN rings may be resized (IORING_REGISTER_RESIZE_RINGS):
 * theirs are mapped for the largest rings and SQEs from the start (not
 * populated past what is used), so the rings region never moves and
 * threads that set its flags words need no news of a resize.
 */
static bool resizable(const struct nw_ring *ring)
{
	return (ring->flags & IORING_SETUP_DEFER_TASKRUN) && !ring->mem_user;
}

static size_t page_align(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (len + page - 1) & ~(page - 1);
}

/* io_uring_fill_params: user_addr kept with NO_MMAP, all else ours. */
static void fill_offsets(const struct nw_ring *ring, struct io_uring_params *p)
{
	uint64_t sq_user = NW_OFF_USER_ADDR(p->sq_off);
	uint64_t cq_user = NW_OFF_USER_ADDR(p->cq_off);

	memset(&p->sq_off, 0, sizeof(p->sq_off));
	memset(&p->cq_off, 0, sizeof(p->cq_off));
	/* p's sizes: setup's, which the ring has, or a resize's new ones. */
	if (p->flags & IORING_SETUP_NO_MMAP) {
		NW_OFF_USER_ADDR(p->sq_off) = sq_user;
		NW_OFF_USER_ADDR(p->cq_off) = cq_user;
	}
	p->sq_off.head = SQ_OFF_HEAD;
	p->sq_off.tail = SQ_OFF_TAIL;
	p->sq_off.ring_mask = SQ_OFF_MASK;
	p->sq_off.ring_entries = SQ_OFF_ENTRIES;
	p->sq_off.flags = SQ_OFF_FLAGS;
	p->sq_off.dropped = SQ_OFF_DROPPED;
	if (!(p->flags & IORING_SETUP_NO_SQARRAY))
		p->sq_off.array =
			(unsigned int)sq_array_off_n(ring, p->cq_entries);
	p->cq_off.head = CQ_OFF_HEAD;
	p->cq_off.tail = CQ_OFF_TAIL;
	p->cq_off.ring_mask = CQ_OFF_MASK;
	p->cq_off.ring_entries = CQ_OFF_ENTRIES;
	p->cq_off.overflow = CQ_OFF_OVERFLOW;
	p->cq_off.cqes = CQ_OFF_CQES;
	p->cq_off.flags = CQ_OFF_FLAGS;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Map len of fd at off, the first used bytes populated. */
static void *map_region(int fd, off_t off, size_t len, size_t used)
{
	void *ptr =
		mmap(NULL, len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | (len == used ? MAP_POPULATE : 0), fd, off);

	if (ptr == MAP_FAILED)
		return NULL;
	if (len != used)
		madvise(ptr, page_align(used), MADV_POPULATE_WRITE);
	return ptr;
}

static size_t kernel_rings_size(const struct nw_ring *ring);

/* Where the memfd ends: the window of the bgids a program can map. */
#define PBUF_WIN_LEN                                            \
	(((size_t)NW_PBUF_MAP_BGIDS << IORING_OFF_PBUF_SHIFT) + \
	 NW_PBUF_REGION_MAX)
#define PBUF_FILE_END (IORING_OFF_PBUF_RING + PBUF_WIN_LEN)

void nw_ringmem_destroy(struct nw_ring *ring)
{
	/* The program's own memory (NO_MMAP) stays the program's. */
	if (ring->mem_pinned) {
		munmap(ring->rings_map, page_align(kernel_rings_size(ring)));
		munmap(ring->sqe_map, page_align(ring->sqe_map_sz));
	} else if (!ring->mem_user) {
		if (ring->rings_map)
			munmap(ring->rings_map, ring->rings_map_cap);
		if (ring->sqe_map)
			munmap(ring->sqe_map, ring->sqe_map_sz);
	}
	ring->rings_map = ring->sqe_map = NULL;
	if (ring->pbuf_win)
		munmap(ring->pbuf_win, PBUF_WIN_LEN);
	ring->pbuf_win = NULL;
}

static bool fsize_allows(size_t size);

/* Set once, by the preload: the program's mmap calls come to the engine. */
static bool mmap_routed;

void nw_ringmem_mmap_routed(void)
{
	__atomic_store_n(&mmap_routed, true, __ATOMIC_RELEASE);
}

/*
 * A NO_MMAP ring's window: its sealed memfd has no pages, so a file of
 * their own (named as the ring's, so that a program's mapping of them
 * keeps the ring as the kernel's does), mapped whole and the fd closed.
 * Only where the program's mmap reaches nw_kbuf_mmap (the preload): a
 * program's own mmap of the ring fd could not map them.
 */
static int user_pbuf_window(struct nw_ring *ring)
{
	char name[32];
	void *m;
	int fd;

	if (!__atomic_load_n(&mmap_routed, __ATOMIC_ACQUIRE) ||
	    !fsize_allows(PBUF_WIN_LEN))
		return -EINVAL;
	snprintf(name, sizeof(name), "nowait-ring:%u", ring->id);
	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return -ENOMEM;
	m = MAP_FAILED;
	if (!ftruncate(fd, (off_t)PBUF_WIN_LEN))
		m = mmap(NULL, PBUF_WIN_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -ENOMEM;
	__atomic_store_n(&ring->pbuf_win, m, __ATOMIC_RELEASE);
	return 0;
}

/*
 * The engine's mapping of the memfd at IORING_OFF_PBUF_RING, made from its
 * mapping of the rings (mremap of a shared mapping with old size 0 maps
 * the same file anew; no fd is needed), the part below the window let go.
 */
int nw_ringmem_pbuf_window(struct nw_ring *ring)
{
	char *m;

	if (ring->pbuf_win)
		return 0;
	if (ring->mem_user)
		return user_pbuf_window(ring);
	if (!ring->pbuf_file || !ring->rings_map)
		return -EINVAL;
	m = mremap(ring->rings_map, 0, PBUF_FILE_END, MREMAP_MAYMOVE);
	if (m == MAP_FAILED)
		return -ENOMEM;
	munmap(m, IORING_OFF_PBUF_RING);
	__atomic_store_n(&ring->pbuf_win, m + IORING_OFF_PBUF_RING,
			 __ATOMIC_RELEASE);
	return 0;
}

static bool fsize_allows(size_t size)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_FSIZE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	       rl.rlim_cur >= size;
}

/* The ring fd: a memfd with a unique name, its inode the ring's identity. */
static int memfd_open(struct nw_ring *ring)
{
	unsigned int flags = MFD_CLOEXEC;
	char name[32];
	struct stat st;
	int fd;

	/* The reactor finds the program's references by the name. */
	ring->id = __atomic_add_fetch(&ring_ids, 1, __ATOMIC_RELAXED);
	snprintf(name, sizeof(name), "nowait-ring:%u", ring->id);
	if (ring->mem_user)
		flags |= MFD_ALLOW_SEALING;
	fd = memfd_create(name, flags);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -EBADF;
	}
	ring->dev = st.st_dev;
	ring->ino = st.st_ino;
	/*
	 * NO_MMAP: nothing to map (the kernel refuses with -ENOMEM). Sealed
	 * empty, a shared writable mmap fails (-EPERM) rather than mapping
	 * a file of nothing.
	 */
	if (ring->mem_user)
		fcntl(fd, F_ADD_SEALS,
		      F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	return fd;
}

/* Size the memfd and map the two regions into the engine. */
static int map_own(struct nw_ring *ring, int fd)
{
	/*
	 * The memfd spans the kernel's mmap offsets (SQEs at 256 MiB), so
	 * RLIMIT_FSIZE applies to it: a smaller limit would make ftruncate
	 * raise SIGXFSZ, which kills by default. Fail the setup instead.
	 */
	size_t sqe_len = resizable(ring)
				 ? (size_t)NW_MAX_ENTRIES << ring->sqe_shift
				 : ring->sqe_map_sz;

	ring->rings_map_cap =
		resizable(ring)
			? rings_size_n(ring, NW_MAX_ENTRIES, NW_MAX_CQ_ENTRIES)
			: ring->rings_map_sz;
	off_t size = IORING_OFF_SQES + sqe_len;

	/* Room for buffer rings at IORING_OFF_PBUF_RING too, if allowed. */
	ring->pbuf_file = fsize_allows(PBUF_FILE_END);
	if (ring->pbuf_file)
		size = PBUF_FILE_END;
	if (!fsize_allows(size) || ftruncate(fd, size) < 0)
		return -ENOMEM;
	ring->rings_map = map_region(fd, IORING_OFF_SQ_RING,
				     ring->rings_map_cap, ring->rings_map_sz);
	ring->sqe_map = map_region(fd, IORING_OFF_SQES, ring->sqe_map_sz,
				   ring->sqe_map_sz);
	if (!ring->rings_map || !ring->sqe_map) {
		nw_ringmem_destroy(ring);
		return -ENOMEM;
	}
	return 0;
}

/*
 * The kernel's rings size for these parameters (rings_size: a 64-byte
 * header, the CQEs, the SQ array cache-aligned after them), the memory a
 * NO_MMAP program provides, page-aligned.
 */
static size_t kernel_rings_size(const struct nw_ring *ring)
{
	size_t off = 64 + ((size_t)ring->cq_entries << ring->cqe_shift);

	if (!(ring->flags & IORING_SETUP_NO_SQARRAY))
		off = ((off + 63) & ~(size_t)63) + (size_t)ring->sq_entries * 4;
	return page_align(off);
}

/*
 * io_create_region on program memory: the kernel's checks in its order,
 * then its pin (FOLL_WRITE): every page there and writable, tried
 * fault-safely by reading it and writing it back.
 */
static int user_region(uint64_t addr, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char buf[4096];

	if (!addr)
		return -EFAULT;
	if ((addr | size) & (page - 1))
		return -EINVAL;
	if (addr + size < addr)
		return -EOVERFLOW;
	for (size_t off = 0; off < size; off += sizeof(buf)) {
		void *at = (void *)(uintptr_t)(addr + off);

		if (nw_copy_from_user(buf, at, sizeof(buf)) ||
		    nw_copy_to_user(at, buf, sizeof(buf)))
			return -EFAULT;
	}
	return 0;
}

/*
 * A second mapping of the program's shared pages at [addr, addr + len),
 * the engine's own (mremap with old size 0 duplicates a shared mapping),
 * checked to alias them; NULL for private memory, which cannot be shared.
 */
static void *pin_region(uint64_t addr, size_t len)
{
	volatile unsigned char *prog = (void *)(uintptr_t)addr, *own;
	unsigned char was;
	void *m = mremap((void *)(uintptr_t)addr, 0, len, MREMAP_MAYMOVE);

	if (m == MAP_FAILED)
		return NULL;
	own = m;
	was = prog[0];
	own[0] = (unsigned char)(was ^ 0x5a);
	if (prog[0] != (unsigned char)(was ^ 0x5a)) {
		munmap(m, len);
		return NULL;
	}
	own[0] = was;
	return m;
}

/*
 * The kernel pins the program's pages, so an SQPOLL poller (or a worker)
 * may touch the rings after the program unmapped them: where the memory
 * is shared, the engine keeps mappings of its own, else it uses the
 * program's addresses.
 */
static void pin_user_memory(struct nw_ring *ring, uint64_t rings, uint64_t sqes)
{
	size_t rl = page_align(kernel_rings_size(ring));
	size_t sl = page_align(ring->sqe_map_sz);
	void *r = pin_region(rings, rl), *q = r ? pin_region(sqes, sl) : NULL;

	if (!q) {
		if (r)
			munmap(r, rl);
		return;
	}
	ring->rings_map = r;
	ring->sqe_map = q;
	ring->mem_pinned = true;
}

/* IORING_SETUP_NO_MMAP: the rings at cq_off.user_addr, SQEs at sq_off's. */
static int use_user_memory(struct nw_ring *ring,
			   const struct io_uring_params *p)
{
	uint64_t rings = NW_OFF_USER_ADDR(p->cq_off);
	uint64_t sqes = NW_OFF_USER_ADDR(p->sq_off);
	int ret;

	/* What the program sized by the kernel's rule holds our layout. */
	NW_BUG_ON(ring->rings_map_sz > kernel_rings_size(ring));
	ret = user_region(rings, kernel_rings_size(ring));
	if (!ret)
		ret = user_region(sqes, page_align(ring->sqe_map_sz));
	if (ret)
		return ret;
	ring->rings_map = (void *)(uintptr_t)rings;
	ring->sqe_map = (void *)(uintptr_t)sqes;
	pin_user_memory(ring, rings, sqes);
	/* Nothing of it is the kernel's to keep: the header starts at 0. */
	memset(ring->rings_map, 0, CQ_OFF_CQES);
	return 0;
}

/*
 * A forked child's own engine for its parent's ring (setup.c's
 * nw_ring_adopt) uses the engine's mappings the child inherited: the
 * same shared pages, at the same addresses.
 */
void nw_ringmem_adopt(struct nw_ring *ring, const struct nw_ring *old)
{
	ring->rings_map = old->rings_map;
	ring->sqe_map = old->sqe_map;
	ring->rings_map_sz = old->rings_map_sz;
	ring->sqe_map_sz = old->sqe_map_sz;
	ring->rings_map_cap = old->rings_map_cap;
	ring->mem_settled = old->mem_settled;
	ring->settle_flagged = old->settle_flagged;
	ring->pbuf_file = old->pbuf_file;
	ring->pbuf_win = old->pbuf_win;
	ring->sq_head = old->sq_head;
	ring->sq_tail = old->sq_tail;
	ring->sq_flags = old->sq_flags;
	ring->sq_dropped = old->sq_dropped;
	ring->sq_array = old->sq_array;
	ring->cq_head = old->cq_head;
	ring->cq_tail = old->cq_tail;
	ring->cq_overflow = old->cq_overflow;
	ring->cq_flags = old->cq_flags;
	ring->cqes = old->cqes;
	ring->sqes = old->sqes;
}

static void init_pointers(struct nw_ring *ring)
{
	char *r = ring->rings_map;

	ring->sq_head = (unsigned int *)(r + SQ_OFF_HEAD);
	ring->sq_tail = (unsigned int *)(r + SQ_OFF_TAIL);
	ring->sq_flags = (unsigned int *)(r + SQ_OFF_FLAGS);
	ring->sq_dropped = (unsigned int *)(r + SQ_OFF_DROPPED);
	ring->sq_array = (ring->flags & IORING_SETUP_NO_SQARRAY)
				 ? NULL
				 : (unsigned int *)(r + sq_array_off(ring));
	ring->cq_head = (unsigned int *)(r + CQ_OFF_HEAD);
	ring->cq_tail = (unsigned int *)(r + CQ_OFF_TAIL);
	ring->cq_overflow = (unsigned int *)(r + CQ_OFF_OVERFLOW);
	ring->cq_flags = (unsigned int *)(r + CQ_OFF_FLAGS);
	ring->cqes = r + CQ_OFF_CQES;
	ring->sqes = ring->sqe_map;
	*(unsigned int *)(r + SQ_OFF_MASK) = ring->sq_mask;
	*(unsigned int *)(r + SQ_OFF_ENTRIES) = ring->sq_entries;
	*(unsigned int *)(r + CQ_OFF_MASK) = ring->cq_mask;
	*(unsigned int *)(r + CQ_OFF_ENTRIES) = ring->cq_entries;
}

int nw_ringmem_create(struct nw_ring *ring, struct io_uring_params *p)
{
	int fd, ret = 0;

	ring->mem_user = p->flags & IORING_SETUP_NO_MMAP;
	ring->rings_map_sz = rings_size(ring);
	ring->sqe_map_sz = (size_t)ring->sq_entries << ring->sqe_shift;
	/* The kernel checks the memory before it makes the file. */
	if (ring->mem_user) {
		ret = use_user_memory(ring, p);
		if (ret)
			return ret;
	}
	fill_offsets(ring, p);
	fd = memfd_open(ring);
	if (fd >= 0 && !ring->mem_user)
		ret = map_own(ring, fd);
	if (fd < 0 || ret) {
		if (fd >= 0)
			close(fd);
		return fd < 0 ? fd : ret;
	}
	init_pointers(ring);
	/* No mirror and no mapping to settle on program memory. */
	ring->mem_settled = ring->mem_user;
	/* The mirror: the header as it is now, sizes filled, all else 0. */
	if (!ring->mem_user && pwrite(fd, ring->rings_map, CQ_OFF_CQES,
				      IORING_OFF_CQ_RING) != CQ_OFF_CQES) {
		nw_ringmem_destroy(ring);
		close(fd);
		return -ENOMEM;
	}
	return fd;
}

/* A program's mapping of the mirror, from /proc/self/maps. */
struct mirror_map {
	unsigned long start, end;
	unsigned long long off;
	int prot;
};

struct mirror_scan {
	struct nw_ring *ring;
	struct mirror_map maps[NW_MIRROR_MAPS];
	unsigned int nr;
};

static bool find_mirror(const char *line, void *arg)
{
	struct mirror_scan *s = arg;
	struct mirror_map *m = &s->maps[s->nr];
	char perms[5];

	/* The name first: most lines are not the ring's, sscanf is slow. */
	if (!nw_names_ring(line, s->ring) ||
	    sscanf(line, "%lx-%lx %4s %llx", &m->start, &m->end, perms,
		   &m->off) != 4)
		return false;
	if (m->off < IORING_OFF_CQ_RING || m->off >= IORING_OFF_SQES)
		return false;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) |
		  (perms[1] == 'w' ? PROT_WRITE : 0);
	return ++s->nr == NW_MIRROR_MAPS;
}

/*
 * What the program may have written into the mirror before it settled:
 * only IORING_CQ_EVENTFD_DISABLED means something without CQEs.
 */
static void keep_cq_flags(struct nw_ring *ring, const struct mirror_map *m,
			  size_t rel)
{
	unsigned int *flags;

	if (!(m->prot & PROT_READ) || CQ_OFF_FLAGS < rel ||
	    CQ_OFF_FLAGS + 4 > rel + (m->end - m->start))
		return;
	flags = (unsigned int *)(m->start + (CQ_OFF_FLAGS - rel));
	if (__atomic_load_n(flags, __ATOMIC_RELAXED) &
	    IORING_CQ_EVENTFD_DISABLED)
		__atomic_fetch_or(ring->cq_flags, IORING_CQ_EVENTFD_DISABLED,
				  __ATOMIC_RELAXED);
}

/*
 * Put the rings region's pages where the program mapped the mirror, in
 * one step (the pages swap under the program's feet atomically): a second
 * mapping of the engine's own (mremap with old size 0 duplicates a shared
 * mapping), else a fresh one of fd.
 */
static void alias_mirror(struct nw_ring *ring, const struct mirror_map *m,
			 int fd)
{
	size_t rel = m->off - IORING_OFF_CQ_RING, len = m->end - m->start;
	void *dst = (void *)m->start, *r = MAP_FAILED;

	keep_cq_flags(ring, m, rel);
	if (rel < page_align(ring->rings_map_sz))
		r = mremap((char *)ring->rings_map + rel, 0, len,
			   MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (r != MAP_FAILED) {
		if (m->prot != (PROT_READ | PROT_WRITE))
			mprotect(dst, len, m->prot);
		return;
	}
	if (fd >= 0)
		r = mmap(dst, len, m->prot, MAP_SHARED | MAP_FIXED, fd,
			 (off_t)rel);
	if (r == MAP_FAILED)
		fprintf(stderr,
			"nowait: ring %u: the CQ ring mapped at %p cannot "
			"alias the rings (%s); map IORING_OFF_SQ_RING only "
			"(IORING_FEAT_SINGLE_MMAP)\n",
			ring->id, dst, strerror(errno));
}

/*
 * Resize left CQEs pending, and the program maps its CQ ring apart again
 * (the params' features are 0 after a resize): until it enters, its CQ
 * mapping is the mirror and shows none. IORING_SQ_TASKRUN in the SQ
 * flags, which it reads through the rings themselves, makes liburing's
 * peek enter (cq_ring_needs_flush), and that enter settles the mapping.
 */
static void settle_flag(struct nw_ring *ring)
{
	if (!nw_cq_ready(ring))
		return;
	ring->settle_flagged = true;
	__atomic_fetch_or(ring->sq_flags, IORING_SQ_TASKRUN, __ATOMIC_RELEASE);
}

/* Settled: the flag goes, unless TASKRUN_FLAG task work still wants it. */
static void settle_unflag(struct nw_ring *ring)
{
	ring->settle_flagged = false;
	__atomic_fetch_and(ring->sq_flags, ~IORING_SQ_TASKRUN,
			   __ATOMIC_SEQ_CST);
	if ((ring->flags & IORING_SETUP_TASKRUN_FLAG) &&
	    __atomic_load_n(&ring->tw_head, __ATOMIC_SEQ_CST))
		__atomic_fetch_or(ring->sq_flags, IORING_SQ_TASKRUN,
				  __ATOMIC_RELEASE);
}

void nw_ringmem_settle_slow(struct nw_ring *ring, int fd)
{
	struct mirror_scan s = {.ring = ring};

	pthread_mutex_lock(&settle_lock);
	if (!ring->mem_settled) {
		/* Collect first: the maps change under a reader. */
		nw_ring_maps_scan(find_mirror, &s);
		for (unsigned int i = 0; i < s.nr; i++)
			alias_mirror(ring, &s.maps[i], fd);
		__atomic_store_n(&ring->mem_settled, true, __ATOMIC_RELEASE);
		if (ring->settle_flagged)
			settle_unflag(ring);
	}
	pthread_mutex_unlock(&settle_lock);
}

/*
 * The mirror after a resize: the new sizes at IORING_OFF_CQ_RING, written
 * through a passing view of the file from 0 (mremap of a shared mapping
 * with old size 0 duplicates it; no fd is needed).
 */
static void mirror_rewrite(struct nw_ring *ring)
{
	size_t len = IORING_OFF_CQ_RING + page_align(CQ_OFF_CQES);
	char *m = mremap(ring->rings_map, 0, len, MREMAP_MAYMOVE), *h;

	if (m == MAP_FAILED)
		return; /* a CQ ring mapped apart reads old sizes */
	h = m + IORING_OFF_CQ_RING;
	memset(h, 0, CQ_OFF_CQES);
	*(unsigned int *)(h + SQ_OFF_MASK) = ring->sq_mask;
	*(unsigned int *)(h + SQ_OFF_ENTRIES) = ring->sq_entries;
	*(unsigned int *)(h + CQ_OFF_MASK) = ring->cq_mask;
	*(unsigned int *)(h + CQ_OFF_ENTRIES) = ring->cq_entries;
	munmap(m, len);
}

/* The pending entries, by ring position, out of the old rings (save). */
struct resize_copy {
	unsigned int sq_head, sq_tail, cq_head, cq_tail;
	char *sq_buf, *cq_buf;
};

static int resize_save(struct nw_ring *ring, const struct io_uring_params *p,
		       struct resize_copy *c)
{
	size_t sqe = (size_t)1 << ring->sqe_shift;

	c->sq_head = load_acquire(ring->sq_head);
	c->sq_tail = READ_ONCE(*ring->sq_tail);
	c->cq_head = READ_ONCE(*ring->cq_head);
	c->cq_tail = load_acquire(ring->cq_tail);
	if (c->sq_tail - c->sq_head > p->sq_entries ||
	    c->cq_tail - c->cq_head > p->cq_entries)
		return -EOVERFLOW;
	c->sq_buf = malloc((c->sq_tail - c->sq_head) * sqe + 1);
	c->cq_buf = malloc(
		((size_t)(c->cq_tail - c->cq_head) << ring->cqe_shift) + 1);
	if (!c->sq_buf || !c->cq_buf) {
		free(c->sq_buf);
		free(c->cq_buf);
		return -ENOMEM;
	}
	for (unsigned int i = c->sq_head; i != c->sq_tail; i++)
		memcpy(c->sq_buf + (i - c->sq_head) * sqe,
		       (char *)ring->sqe_map + (i & ring->sq_mask) * sqe, sqe);
	nw_cq_copy(ring, c->cq_head, c->cq_tail, c->cq_buf, false);
	return 0;
}

/* Lay the saved entries out in the new rings; the SQ array as identity. */
static void resize_restore(struct nw_ring *ring, struct resize_copy *c)
{
	size_t sqe = (size_t)1 << ring->sqe_shift;

	for (unsigned int i = c->sq_head; i != c->sq_tail; i++)
		memcpy((char *)ring->sqe_map + (i & ring->sq_mask) * sqe,
		       c->sq_buf + (i - c->sq_head) * sqe, sqe);
	nw_cq_copy(ring, c->cq_head, c->cq_tail, c->cq_buf, true);
	if (ring->sq_array)
		for (unsigned int i = 0; i < ring->sq_entries; i++)
			ring->sq_array[i] = i;
	free(c->sq_buf);
	free(c->cq_buf);
}

int nw_ringmem_resize(struct nw_ring *ring, struct io_uring_params *p)
{
	size_t sqes_sz = (size_t)p->sq_entries << ring->sqe_shift;
	struct resize_copy c;
	void *sqes;
	int ret;

	if (!resizable(ring))
		return -EINVAL;
	fill_offsets(ring, p);
	ret = resize_save(ring, p, &c);
	if (ret)
		return ret;
	/* Within the file sized for the largest: the same pages, moved. */
	sqes = mremap(ring->sqe_map, ring->sqe_map_sz, sqes_sz, MREMAP_MAYMOVE);
	if (sqes == MAP_FAILED) {
		free(c.sq_buf);
		free(c.cq_buf);
		return -ENOMEM;
	}
	ring->sqe_map = sqes;
	ring->sqe_map_sz = sqes_sz;
	ring->sq_entries = p->sq_entries;
	ring->sq_mask = p->sq_entries - 1;
	ring->cq_entries = p->cq_entries;
	ring->cq_mask = p->cq_entries - 1;
	ring->rings_map_sz = rings_size(ring);
	madvise(ring->rings_map, page_align(ring->rings_map_sz),
		MADV_POPULATE_WRITE);
	init_pointers(ring);
	resize_restore(ring, &c);
	mirror_rewrite(ring);
	/* A CQ ring the program maps apart again is settled anew. */
	__atomic_store_n(&ring->mem_settled, false, __ATOMIC_RELEASE);
	settle_flag(ring);
	return 0;
}
