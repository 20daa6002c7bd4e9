/* SPDX-License-Identifier: MIT */
/*
 * Provided buffers: groups of buffers the program hands to the ring, from
 * which READ, READV, RECV, RECVMSG and SEND with IOSQE_BUFFER_SELECT pick
 * one at issue time and report it in the CQE (IORING_CQE_F_BUFFER | bid <<
 * 16); a bundle (IORING_RECVSEND_BUNDLE) takes several ring entries at
 * once as one record (nw_kbuf_select_vec), the unused ones given back.
 * A group is either "legacy" (PROVIDE_BUFFERS / REMOVE_BUFFERS: a list,
 * taken from the front, given back to the front) or a buffer ring
 * (IORING_REGISTER_PBUF_RING: struct io_uring_buf_ring in program memory;
 * the program publishes entries with a store-release of the tail, the
 * engine load-acquires the tail and keeps its own head).
 * Semantics: kernel io_uring/kbuf.c (6.1, results as 6.18 gives them),
 * man pages io_uring_prep_provide_buffers(3), io_uring_register_buf_ring(3).
 * With IOU_PBUF_RING_MMAP the ring is the engine's, in the ring memfd's
 * pages at the offset the program maps (mmap_region).
 *
 * Threads: selection runs wherever an op is issued (the submitter, the
 * reactor, a worker), so all state is under the ring's kbuf lock, a leaf
 * lock (nothing else is taken while it is held). The kernel instead keeps a
 * ring entry uncommitted under its uring_lock for the whole attempt; the
 * engine never holds a lock across the system call, so it takes the entry
 * (head++) at selection and gives it back on recycle: head-- when nothing
 * was taken since, else onto the group's list, which selection prefers. The
 * program cannot tell (the head is private), bar the order of bids when
 * two attempts race.
 *
 * An incremental ring (IOU_PBUF_RING_INC) is never taken from at
 * selection: the head entry is read, and at completion what the op moved
 * is committed to the program's entries (addr and len advanced, the head
 * moved past each entry used up), F_BUF_MORE reporting room left. Two
 * attempts racing on one such ring read into the same part, as two
 * io-wq attempts can in the kernel.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "kbuf.h"

#define NW_KBUF_CHUNK	    128
#define NW_MAX_BIDS	    65536 /* buffers one PROVIDE may add (bids) */
#define NW_MAX_GROUP_BUFS   65535 /* a group never holds more (USHRT_MAX) */
#define NW_KBUF_MAX_RW	    ((uint32_t)(INT_MAX & ~4095))
#define NW_KBUF_USER_MAX    0x7fffffffefffULL /* access_ok: USER_PTR_MAX */
#define NW_PBUF_MAX_ENTRIES 32768
#define NW_PBUF_RING_INC    2U	/* IOU_PBUF_RING_INC */
#define NW_PEEK_MAX_IMPORT  256 /* the most a bundle's max_len asks for */

struct nw_kbuf_group {
	struct nw_list bufs;  /* legacy buffers, or ring entries given back */
	unsigned int nr_bufs; /* legacy buffers on bufs */
	struct io_uring_buf_ring *br; /* NULL: a legacy group */
	uint16_t head;		      /* ring: next entry to take */
	uint16_t mask;
	uint16_t bgid;
	bool inc;	   /* IOU_PBUF_RING_INC: entries consumed in parts */
	uint32_t min_left; /* inc: a rest below this is used up */
	uint32_t map_len;  /* IOU_PBUF_RING_MMAP: the engine's region's size */
};

struct nw_kbuf_chunk {
	struct nw_kbuf_chunk *next;
	struct nw_kbuf bufs[NW_KBUF_CHUNK];
};

/* The ring's provided-buffer state (ring->kbuf), made on first use. */
struct nw_kbuf_ctx {
	pthread_mutex_t lock;
	struct nw_kbuf_group **groups; /* by bgid, grown on demand */
	unsigned int nr_groups;
	struct nw_list cache;	      /* free struct nw_kbuf */
	struct nw_kbuf_chunk *chunks; /* where they live, freed at teardown */
};

/* PROVIDE_BUFFERS and REMOVE_BUFFERS. */
struct nw_pbuf {
	uint64_t addr;
	uint32_t len;
	uint32_t nbufs;
	uint16_t bgid;
	uint16_t bid;
};
_Static_assert(sizeof(struct nw_pbuf) <= NW_REQ_CMD_SIZE, "nw_pbuf too big");

static struct nw_kbuf_ctx *ctx_get(struct nw_ring *ring, bool create)
{
	struct nw_kbuf_ctx *ctx, *old = NULL;

	ctx = __atomic_load_n(&ring->kbuf, __ATOMIC_ACQUIRE);
	if (ctx || !create)
		return ctx;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	pthread_mutex_init(&ctx->lock, NULL);
	nw_list_init(&ctx->cache);
	if (__atomic_compare_exchange_n(&ring->kbuf, &old, ctx, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return ctx;
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	return old; /* another thread made it first */
}

/* A free buffer record. Called with ctx->lock held. */
static struct nw_kbuf *kbuf_alloc(struct nw_kbuf_ctx *ctx)
{
	struct nw_list *n;

	if (nw_list_empty(&ctx->cache)) {
		struct nw_kbuf_chunk *c = malloc(sizeof(*c));

		if (!c)
			return NULL;
		c->next = ctx->chunks;
		ctx->chunks = c;
		for (int i = 0; i < NW_KBUF_CHUNK; i++)
			nw_list_add_tail(&c->bufs[i].node, &ctx->cache);
	}
	n = ctx->cache.next;
	nw_list_del(n);
	return nw_list_entry(n, struct nw_kbuf, node);
}

/* Called with ctx->lock held. */
static void kbuf_free(struct nw_kbuf_ctx *ctx, struct nw_kbuf *b)
{
	nw_list_add_tail(&b->node, &ctx->cache);
}

/* Put b at the front of list h (the kernel's list_add). */
static void list_add_front(struct nw_list *n, struct nw_list *h)
{
	nw_list_add_tail(n, h->next);
}

static struct nw_kbuf_group *group_get(struct nw_kbuf_ctx *ctx,
				       unsigned int bgid)
{
	return bgid < ctx->nr_groups ? ctx->groups[bgid] : NULL;
}

/* A new, empty legacy group. Called with ctx->lock held. */
static struct nw_kbuf_group *group_create(struct nw_kbuf_ctx *ctx,
					  uint16_t bgid)
{
	struct nw_kbuf_group *g;

	if (bgid >= ctx->nr_groups) {
		unsigned int nr = ctx->nr_groups ? ctx->nr_groups : 64;
		struct nw_kbuf_group **tab;

		while (nr <= bgid)
			nr *= 2;
		tab = realloc(ctx->groups, nr * sizeof(*tab));
		if (!tab)
			return NULL;
		for (unsigned int i = ctx->nr_groups; i < nr; i++)
			tab[i] = NULL;
		ctx->groups = tab;
		ctx->nr_groups = nr;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	nw_list_init(&g->bufs);
	g->bgid = bgid;
	ctx->groups[bgid] = g;
	return g;
}

/* Drop the first nr buffers of g's list; returns how many. Lock held. */
static unsigned int group_drop(struct nw_kbuf_ctx *ctx, struct nw_kbuf_group *g,
			       unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr && !nw_list_empty(&g->bufs); i++) {
		struct nw_list *n = g->bufs.next;

		nw_list_del(n);
		kbuf_free(ctx, nw_list_entry(n, struct nw_kbuf, node));
	}
	g->nr_bufs = g->nr_bufs > i ? g->nr_bufs - i : 0;
	return i;
}

static void group_free(struct nw_kbuf_ctx *ctx, struct nw_kbuf_group *g)
{
	/* A region past what the program can map is the engine's alone. */
	if (g->map_len && g->bgid >= NW_PBUF_MAP_BGIDS)
		free(g->br);
	group_drop(ctx, g, UINT_MAX);
	ctx->groups[g->bgid] = NULL;
	free(g);
}

/* ---- IORING_OP_PROVIDE_BUFFERS / IORING_OP_REMOVE_BUFFERS ---- */

int nw_provide_buffers_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_pbuf *p = nw_req_cmd(req, struct nw_pbuf);
	int64_t nbufs = READ_ONCE(sqe->fd);
	uint64_t size, off;

	if (READ_ONCE(sqe->rw_flags) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	if (nbufs <= 0 || nbufs > NW_MAX_BIDS)
		return -E2BIG;
	p->nbufs = (uint32_t)nbufs;
	p->addr = READ_ONCE(sqe->addr);
	p->len = READ_ONCE(sqe->len);
	if (!p->len)
		return -EINVAL;
	size = (uint64_t)p->len * p->nbufs;
	if (p->addr + size < p->addr)
		return -EOVERFLOW;
	if (p->addr + size > NW_KBUF_USER_MAX)
		return -EFAULT;
	p->bgid = READ_ONCE(sqe->buf_group);
	off = READ_ONCE(sqe->off);
	if (off > USHRT_MAX)
		return -E2BIG;
	if (off + p->nbufs > NW_MAX_BIDS)
		return -EINVAL;
	p->bid = (uint16_t)off;
	return 0;
}

/* io_add_buffers: append to g, up to the group's limit. Lock held. */
static int add_buffers(struct nw_kbuf_ctx *ctx, struct nw_kbuf_group *g,
		       const struct nw_pbuf *p)
{
	uint64_t addr = p->addr;
	unsigned int i;
	int ret = -ENOMEM;

	for (i = 0; i < p->nbufs; i++) {
		struct nw_kbuf *b;

		if (g->nr_bufs == NW_MAX_GROUP_BUFS) {
			ret = -EOVERFLOW;
			break;
		}
		b = kbuf_alloc(ctx);
		if (!b)
			break;
		b->addr = addr;
		b->len = p->len < NW_KBUF_MAX_RW ? p->len : NW_KBUF_MAX_RW;
		b->bid = (uint16_t)(p->bid + i);
		b->bgid = p->bgid;
		b->ring = false;
		b->inc = false;
		b->nr = 1;
		nw_list_add_tail(&b->node, &g->bufs);
		g->nr_bufs++;
		addr += p->len;
	}
	return i ? 0 : ret;
}

int nw_provide_buffers_issue(struct nw_req *req, unsigned int issue_flags)
{
	const struct nw_pbuf *p = nw_req_cmd(req, struct nw_pbuf);
	struct nw_kbuf_ctx *ctx = ctx_get(req->ring, true);
	struct nw_kbuf_group *g;
	int ret;

	if (!ctx)
		return -ENOMEM;
	pthread_mutex_lock(&ctx->lock);
	g = group_get(ctx, p->bgid);
	if (!g)
		g = group_create(ctx, p->bgid);
	if (!g)
		ret = -ENOMEM;
	else if (g->br)
		ret = -EINVAL; /* a buffer ring takes no provided buffers */
	else
		ret = add_buffers(ctx, g, p);
	pthread_mutex_unlock(&ctx->lock);
	if (ret < 0)
		return ret;
	req->res = 0;
	return NW_COMPLETE;
}

int nw_remove_buffers_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_pbuf *p = nw_req_cmd(req, struct nw_pbuf);
	int64_t nbufs = READ_ONCE(sqe->fd);

	if (READ_ONCE(sqe->rw_flags) || READ_ONCE(sqe->addr) ||
	    READ_ONCE(sqe->len) || READ_ONCE(sqe->off) ||
	    READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	if (nbufs <= 0 || nbufs > NW_MAX_BIDS)
		return -EINVAL;
	p->nbufs = (uint32_t)nbufs;
	p->bgid = READ_ONCE(sqe->buf_group);
	return 0;
}

int nw_remove_buffers_issue(struct nw_req *req, unsigned int issue_flags)
{
	const struct nw_pbuf *p = nw_req_cmd(req, struct nw_pbuf);
	struct nw_kbuf_ctx *ctx = ctx_get(req->ring, false);
	struct nw_kbuf_group *g;
	int ret = -ENOENT;

	if (!ctx)
		return ret;
	pthread_mutex_lock(&ctx->lock);
	g = group_get(ctx, p->bgid);
	if (g)
		ret = g->br ? -EINVAL : (int)group_drop(ctx, g, p->nbufs);
	pthread_mutex_unlock(&ctx->lock);
	if (ret < 0)
		return ret;
	req->res = ret;
	return NW_COMPLETE;
}

/* ---- IORING_REGISTER_PBUF_RING / IORING_UNREGISTER_PBUF_RING ---- */

/* The kernel pins the ring's pages: all of it must be there. */
static int ring_mem_check(uint64_t addr, size_t size)
{
	void *tmp = malloc(size);
	int ret;

	if (!tmp)
		return -ENOMEM;
	ret = nw_copy_from_user(tmp, (void *)(uintptr_t)addr, size);
	free(tmp);
	return ret ? -EFAULT : 0;
}

/* reg->pad is the flags word (io_uring_buf_reg.flags): flags_ok known. */
static int buf_reg_copy(struct io_uring_buf_reg *reg, void *arg,
			unsigned int nr_args, unsigned int flags_ok)
{
	if (!arg || nr_args != 1)
		return -EINVAL;
	if (nw_copy_from_user(reg, arg, sizeof(*reg)))
		return -EFAULT;
	if ((reg->pad & ~flags_ok) || (reg->resv[0] >> 32) || reg->resv[1] ||
	    reg->resv[2])
		return -EINVAL;
	/* resv[0]'s low word is min_left (6.19's io_uring_buf_reg). */
	if (!flags_ok && reg->resv[0])
		return -EINVAL;
	return 0;
}

/*
 * IOU_PBUF_RING_MMAP: the engine's region for the group, which the program
 * maps at IORING_OFF_PBUF_RING | bgid << IORING_OFF_PBUF_SHIFT: the ring
 * memfd's pages at that offset (ring->pbuf_win, ringmem.c), zeroed. Two
 * groups whose regions would share pages there cannot both be had (the
 * kernel's are apart): -ENOMEM. A bgid the offset cannot name (the kernel
 * maps none) gets memory of its own. Called with ctx->lock held.
 */
static void *mmap_region(struct nw_ring *ring, struct nw_kbuf_ctx *ctx,
			 uint16_t bgid, uint32_t len)
{
	uint64_t lo = (uint64_t)bgid << IORING_OFF_PBUF_SHIFT, hi = lo + len;
	char *r;

	if (bgid >= NW_PBUF_MAP_BGIDS) {
		r = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), len);
		if (r)
			memset(r, 0, len);
		return r;
	}
	if (!ring->pbuf_win)
		return NULL;
	for (unsigned int i = 0; i < ctx->nr_groups && i < NW_PBUF_MAP_BGIDS;
	     i++) {
		const struct nw_kbuf_group *o = ctx->groups[i];
		uint64_t olo = (uint64_t)i << IORING_OFF_PBUF_SHIFT;

		if (o && o->map_len && i != bgid && olo < hi &&
		    lo < olo + o->map_len)
			return NULL;
	}
	r = (char *)ring->pbuf_win + lo;
	/* Fresh pages, as the kernel's are (a hole in the memfd). */
	if (madvise(r, len, MADV_REMOVE))
		memset(r, 0, len);
	return r;
}

/* The group's ring memory: the program's (pinned) or the engine's. */
static int ring_mem_get(struct nw_ring *ring, struct nw_kbuf_ctx *ctx,
			const struct io_uring_buf_reg *reg, void **br,
			uint32_t *map_len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = (size_t)reg->ring_entries * sizeof(struct io_uring_buf);

	*map_len = 0;
	if (reg->pad & NW_PBUF_RING_MMAP) {
		/* NO_MMAP without the preload's mmap: no pages to share. */
		if (ring->mem_user && !ring->pbuf_win)
			return -EINVAL;
		*map_len = (uint32_t)((size + page - 1) & ~(page - 1));
		*br = mmap_region(ring, ctx, reg->bgid, *map_len);
		return *br ? 0 : -ENOMEM;
	}
	if (!reg->ring_addr)
		return -EFAULT;
	if (reg->ring_addr & (uint64_t)(page - 1))
		return -EINVAL;
	*br = (void *)(uintptr_t)reg->ring_addr;
	return ring_mem_check(reg->ring_addr, size);
}

int nw_kbuf_register_ring(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	struct io_uring_buf_reg reg;
	struct nw_kbuf_group *g;
	struct nw_kbuf_ctx *ctx;
	uint32_t map_len = 0;
	void *br = NULL;
	int ret = buf_reg_copy(&reg, arg, nr_args,
			       NW_PBUF_RING_INC | NW_PBUF_RING_MMAP);

	if (ret)
		return ret;
	if (!reg.ring_entries || (reg.ring_entries & (reg.ring_entries - 1)))
		return -EINVAL;
	if (reg.ring_entries > NW_PBUF_MAX_ENTRIES)
		return -EINVAL; /* head/tail are 16 bits: full == empty */
	ctx = ctx_get(ring, true);
	if (!ctx)
		return -ENOMEM;
	pthread_mutex_lock(&ctx->lock);
	g = group_get(ctx, reg.bgid);
	if (g && (g->br || !nw_list_empty(&g->bufs)))
		ret = -EEXIST;
	else
		ret = ring_mem_get(ring, ctx, &reg, &br, &map_len);
	if (!ret && !g && !(g = group_create(ctx, reg.bgid)))
		ret = -ENOMEM;
	if (!ret) {
		g->br = br;
		g->map_len = map_len;
		g->mask = (uint16_t)(reg.ring_entries - 1);
		g->head = 0;
		g->inc = reg.pad & NW_PBUF_RING_INC;
		g->min_left = (uint32_t)reg.resv[0];
	} else if (map_len && reg.bgid >= NW_PBUF_MAP_BGIDS) {
		free(br);
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

int nw_kbuf_unregister_ring(struct nw_ring *ring, void *arg,
			    unsigned int nr_args)
{
	struct io_uring_buf_reg reg;
	struct nw_kbuf_group *g;
	struct nw_kbuf_ctx *ctx;
	int ret = buf_reg_copy(&reg, arg, nr_args, 0);

	if (ret)
		return ret;
	ctx = ctx_get(ring, false);
	if (!ctx)
		return -ENOENT;
	pthread_mutex_lock(&ctx->lock);
	g = group_get(ctx, reg.bgid);
	if (!g)
		ret = -ENOENT;
	else if (!g->br)
		ret = -EINVAL;
	else
		group_free(ctx, g);
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/*
 * Put the group's region at m (a mapping the caller made, as long as the
 * region at least): a second mapping of the engine's pages (mremap with
 * old size 0 duplicates a shared mapping) in place of m's first pages.
 * Called with ctx->lock held.
 */
static int region_place(struct nw_ring *ring, const struct nw_kbuf_group *g,
			char *m, int prot)
{
	char *src = (char *)ring->pbuf_win +
		    ((size_t)g->bgid << IORING_OFF_PBUF_SHIFT);

	if (mremap(src, 0, g->map_len, MREMAP_MAYMOVE | MREMAP_FIXED, m) ==
	    MAP_FAILED)
		return -ENOMEM;
	if (prot != (PROT_READ | PROT_WRITE) && mprotect(m, g->map_len, prot))
		return -errno;
	return 0;
}

/*
 * The group's region mapped at *res: 0, or -errno as io_uring_mmap has
 * it: an address asked for is -EINVAL and no region to map -ENOMEM (its
 * get_unmapped_area), a mapping shorter than the region -EFAULT (the
 * pages' insertion); one longer reads zeros past it (SIGBUS there).
 */
static int region_map(struct nw_ring *ring, void *addr, size_t len, int prot,
		      uint64_t off, void **res)
{
	uint64_t id = (off & ~(uint64_t)IORING_OFF_MMAP_MASK) >>
		      IORING_OFF_PBUF_SHIFT;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct nw_kbuf_ctx *ctx = ctx_get(ring, false);
	struct nw_kbuf_group *g = NULL;
	void *m;
	int ret = 0;

	if (!len || addr)
		return -EINVAL;
	if (!ctx)
		return -ENOMEM;
	pthread_mutex_lock(&ctx->lock);
	if (id < NW_PBUF_MAP_BGIDS)
		g = group_get(ctx, (uint16_t)id);
	/* io_pbuf_get_region: a ring group whose region is the ring's. */
	if (!g || !g->br || !g->map_len || !ring->pbuf_win)
		ret = -ENOMEM;
	else if (((len + page - 1) & ~(page - 1)) < g->map_len)
		ret = -EFAULT;
	else if ((m = mmap(NULL, len, prot, MAP_SHARED | MAP_ANONYMOUS, -1,
			   0)) == MAP_FAILED)
		ret = -errno;
	else if ((ret = region_place(ring, g, m, prot)))
		munmap(m, len);
	else
		*res = m;
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

int nw_kbuf_mmap(int fd, void *addr, size_t len, int prot, int flags,
		 uint64_t off, void **res)
{
	struct nw_ring *ring;
	int ret;

	if (nw_ring_lookup(fd, &ring) || !ring->mem_user)
		return 0;
	(void)flags; /* always shared, as the kernel's pages are */
	ret = region_map(ring, addr, len, prot, off, res);
	return ret ? ret : 1;
}

/*
 * IORING_REGISTER_PBUF_STATUS: the head of a ring group (io_uring_buf_status:
 * buf_group in, head out, eight reserved words that must be zero).
 */
int nw_kbuf_ring_status(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	struct {
		uint32_t buf_group, head, resv[8];
	} st;
	struct nw_kbuf_group *g;
	struct nw_kbuf_ctx *ctx;
	int ret = 0;

	if (!arg || nr_args != 1)
		return -EINVAL;
	if (nw_copy_from_user(&st, arg, sizeof(st)))
		return -EFAULT;
	for (int i = 0; i < 8; i++)
		if (st.resv[i])
			return -EINVAL;
	ctx = ctx_get(ring, false);
	if (!ctx)
		return -ENOENT;
	pthread_mutex_lock(&ctx->lock);
	g = st.buf_group <= 0xffff ? group_get(ctx, (uint16_t)st.buf_group)
				   : NULL;
	if (!g)
		ret = -ENOENT;
	else if (!g->br)
		ret = -EINVAL;
	else
		st.head = g->head;
	pthread_mutex_unlock(&ctx->lock);
	if (ret)
		return ret;
	return nw_copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

/* ---- IOSQE_BUFFER_SELECT ---- */

void nw_kbuf_prep(struct nw_req *req, const struct io_uring_sqe *sqe,
		  uint32_t len)
{
	req->kbuf = NULL;
	req->buf_len = len;
	req->buf_group = READ_ONCE(sqe->buf_group);
}

static struct io_uring_buf *ring_entry(struct nw_kbuf_group *g, uint16_t pos)
{
	return &g->br->bufs[pos & g->mask];
}

/* A record of the ring entry at pos. Called with ctx->lock held. */
static struct nw_kbuf *ring_record(struct nw_kbuf_ctx *ctx,
				   struct nw_kbuf_group *g, uint16_t pos)
{
	const struct io_uring_buf *e = ring_entry(g, pos);
	struct nw_kbuf *b = kbuf_alloc(ctx);

	if (!b)
		return NULL;
	b->addr = READ_ONCE(e->addr);
	b->len = READ_ONCE(e->len);
	b->bid = READ_ONCE(e->bid);
	b->bgid = g->bgid;
	b->ring = true;
	b->inc = g->inc;
	b->nr = 1;
	b->ring_pos = pos;
	return b;
}

/*
 * Take the entry at the ring's head, if the program published one. An
 * incremental ring's head stays: the entry is consumed at completion by
 * what the op moved (inc_commit), as the kernel commits it.
 */
static struct nw_kbuf *ring_take(struct nw_kbuf_ctx *ctx,
				 struct nw_kbuf_group *g)
{
	uint16_t tail = __atomic_load_n(&g->br->tail, __ATOMIC_ACQUIRE);
	struct nw_kbuf *b;

	if (tail == g->head)
		return NULL;
	b = ring_record(ctx, g, g->head);
	if (b && !g->inc)
		g->head++;
	return b;
}

void *nw_kbuf_select(struct nw_req *req, size_t *len)
{
	struct nw_kbuf_ctx *ctx = ctx_get(req->ring, false);
	struct nw_kbuf_group *g;
	struct nw_kbuf *b = NULL;

	NW_BUG_ON(req->kbuf != NULL);
	if (!ctx)
		return NULL;
	pthread_mutex_lock(&ctx->lock);
	g = group_get(ctx, req->buf_group);
	if (g && !nw_list_empty(&g->bufs)) {
		b = nw_list_entry(g->bufs.next, struct nw_kbuf, node);
		nw_list_del(&b->node);
		if (!b->ring)
			g->nr_bufs--;
	} else if (g && g->br) {
		b = ring_take(ctx, g);
	}
	pthread_mutex_unlock(&ctx->lock);
	if (!b)
		return NULL;
	req->kbuf = b;
	*len = req->buf_len;
	if (!*len || *len > b->len)
		*len = b->len;
	return (void *)(uintptr_t)b->addr;
}

/* Is b still of g's kind (not a group since unregistered and made anew)? */
static bool group_same(const struct nw_kbuf_group *g, const struct nw_kbuf *b)
{
	return g && b->ring == (g->br != NULL) &&
	       (!b->ring || b->inc == g->inc);
}

/*
 * Give back the ring entries [pos, pos + nr) taken from a plain ring: the
 * head goes back when nothing was taken since, else they go onto the
 * group's list in ring order. Called with ctx->lock held.
 */
static void ring_give_back(struct nw_kbuf_ctx *ctx, struct nw_kbuf_group *g,
			   uint16_t pos, uint16_t nr)
{
	if (!nr)
		return;
	if (g->head == (uint16_t)(pos + nr)) {
		g->head = pos;
		return;
	}
	for (uint16_t i = nr; i-- > 0;) {
		struct nw_kbuf *r = ring_record(ctx, g, (uint16_t)(pos + i));

		if (r)
			list_add_front(&r->node, &g->bufs);
	}
}

void nw_kbuf_recycle(struct nw_req *req)
{
	struct nw_kbuf_ctx *ctx = ctx_get(req->ring, false);
	struct nw_kbuf *b = req->kbuf;
	struct nw_kbuf_group *g;

	if (!b)
		return;
	req->kbuf = NULL;
	pthread_mutex_lock(&ctx->lock);
	g = group_get(ctx, b->bgid);
	if (!group_same(g, b) || b->inc) {
		kbuf_free(ctx, b); /* gone, changed kind, or never taken */
	} else if (b->ring &&
		   (b->nr > 1 || g->head == (uint16_t)(b->ring_pos + 1))) {
		ring_give_back(ctx, g, b->ring_pos, b->nr);
		kbuf_free(ctx, b);
	} else {
		list_add_front(&b->node, &g->bufs);
		if (!b->ring)
			g->nr_bufs++;
	}
	pthread_mutex_unlock(&ctx->lock);
}

/*
 * io_kbuf_inc_commit: len bytes consumed from the head entry on, each
 * entry's addr and len advanced in the program's ring, the head moved past
 * each one used up. True when the last one still has room (F_BUF_MORE):
 * always for nothing moved (EOF), and for an entry of length 0, which
 * stops the walk. A rest below the ring's min_left is used up too.
 * Called with ctx->lock held.
 */
static bool inc_commit(struct nw_kbuf_group *g, int len)
{
	if (len <= 0)
		return true;
	for (unsigned int i = 0; i <= NW_PBUF_MAX_ENTRIES; i++) {
		struct io_uring_buf *e = ring_entry(g, g->head);
		uint32_t blen = READ_ONCE(e->len);
		uint32_t n = (uint32_t)len < blen ? (uint32_t)len : blen;

		if (!n || (blen - n && blen - n >= g->min_left)) {
			WRITE_ONCE(e->addr, READ_ONCE(e->addr) + n);
			WRITE_ONCE(e->len, blen - n);
			return true;
		}
		WRITE_ONCE(e->len, 0);
		g->head++;
		len -= (int)n;
		if (!len)
			break;
	}
	return false;
}

/* The CQE flags of b consumed by len bytes over its first used entries. */
static unsigned int kbuf_commit(struct nw_req *req, struct nw_kbuf *b, int len,
				unsigned int used)
{
	struct nw_kbuf_ctx *ctx = ctx_get(req->ring, false);
	unsigned int cflags = IORING_CQE_F_BUFFER |
			      ((unsigned int)b->bid << IORING_CQE_BUFFER_SHIFT);
	struct nw_kbuf_group *g;

	pthread_mutex_lock(&ctx->lock);
	g = group_get(ctx, b->bgid);
	if (b->ring && group_same(g, b)) {
		if (b->inc && inc_commit(g, len))
			cflags |= IORING_CQE_F_BUF_MORE;
		else if (!b->inc && used < b->nr)
			ring_give_back(ctx, g, (uint16_t)(b->ring_pos + used),
				       (uint16_t)(b->nr - used));
	}
	kbuf_free(ctx, b);
	pthread_mutex_unlock(&ctx->lock);
	return cflags;
}

unsigned int nw_kbuf_put(struct nw_req *req)
{
	struct nw_kbuf *b = req->kbuf;

	if (!b)
		return 0;
	req->kbuf = NULL;
	return kbuf_commit(req, b, req->res, 1);
}

unsigned int nw_kbuf_put_vec(struct nw_req *req, int len, unsigned int used)
{
	struct nw_kbuf *b = req->kbuf;

	if (!b)
		return 0;
	req->kbuf = NULL;
	return kbuf_commit(req, b, len, used ? used : 1);
}

void nw_kbuf_retire(struct nw_req *req)
{
	struct nw_kbuf *b = req->kbuf;

	if (!b)
		return;
	req->kbuf = NULL;
	kbuf_commit(req, b, (int)b->len, 1);
}

/*
 * io_ring_buffers_peek: up to max_iov entries from the head, max_len bytes
 * in all, the count also capped by how many of the head entry's size
 * max_len needs. A plain ring's entry past the first that would be cut
 * short is left (a cut first one keeps its ring len: only the iovec is
 * short); an incremental ring's last one is cut. Taken as one record.
 * Called with ctx->lock held; returns the count, 0 for none.
 */
static unsigned int ring_peek(struct nw_kbuf_ctx *ctx, struct nw_kbuf_group *g,
			      struct iovec *iov, unsigned int max_iov,
			      size_t max_len, unsigned int *state,
			      struct nw_kbuf **out)
{
	uint16_t tail = __atomic_load_n(&g->br->tail, __ATOMIC_ACQUIRE);
	unsigned int avail = (uint16_t)(tail - g->head), n = 0;
	size_t left = max_len ? max_len : INT_MAX;
	struct nw_kbuf *b;

	avail = avail < max_iov ? avail : max_iov;
	if (!avail)
		return 0;
	if (max_len) {
		uint32_t flen = READ_ONCE(ring_entry(g, g->head)->len);
		size_t needed;

		if (!flen)
			return 0;
		needed = (max_len + flen - 1) / flen;
		if (needed > NW_PEEK_MAX_IMPORT)
			needed = NW_PEEK_MAX_IMPORT;
		if (needed && avail > needed)
			avail = (unsigned int)needed;
	}
	for (; n < avail && left; n++) {
		const struct io_uring_buf *e =
			ring_entry(g, (uint16_t)(g->head + n));
		size_t len = READ_ONCE(e->len);

		if (len > left) {
			if (!g->inc)
				*state |= NW_KBUF_PARTIAL;
			if (n && !g->inc)
				break; /* not empty: that entry stays */
			len = left;
		}
		iov[n].iov_base = (void *)(uintptr_t)READ_ONCE(e->addr);
		iov[n].iov_len = len;
		left -= len;
	}
	/* REQ_F_BL_EMPTY: every entry there is taken, max_len not reached. */
	if (left && n == (uint16_t)(tail - g->head))
		*state |= NW_KBUF_EMPTY;
	b = ring_record(ctx, g, g->head);
	if (!b)
		return 0;
	b->nr = (uint16_t)n;
	if (!g->inc)
		g->head = (uint16_t)(g->head + n);
	*out = b;
	return n;
}

unsigned int nw_kbuf_select_vec(struct nw_req *req, struct iovec *iov,
				unsigned int max_iov, size_t max_len,
				unsigned int *state)
{
	struct nw_kbuf_ctx *ctx = ctx_get(req->ring, false);
	struct nw_kbuf_group *g;
	struct nw_kbuf *b = NULL;
	unsigned int n = 0;
	bool list = false;
	size_t len;
	void *buf;

	NW_BUG_ON(req->kbuf != NULL);
	*state = NW_KBUF_EMPTY | NW_KBUF_NOGROUP;
	if (!ctx)
		return 0;
	pthread_mutex_lock(&ctx->lock);
	g = group_get(ctx, req->buf_group);
	if (g)
		*state = NW_KBUF_EMPTY;
	if (g && g->br && nw_list_empty(&g->bufs)) {
		*state = 0;
		n = ring_peek(ctx, g, iov, max_iov, max_len, state, &b);
	} else
		list = g != NULL;
	pthread_mutex_unlock(&ctx->lock);
	if (!list) {
		req->kbuf = b;
		return n;
	}
	/* A list (provided buffers, entries given back): one buffer. */
	buf = nw_kbuf_select(req, &len);
	if (!buf)
		return 0;
	iov[0].iov_base = buf;
	iov[0].iov_len = max_len && len > max_len ? max_len : len;
	*state = 0;
	return 1;
}

void nw_kbuf_free_all(struct nw_ring *ring)
{
	struct nw_kbuf_ctx *ctx = ctx_get(ring, false);

	if (!ctx)
		return;
	/*
	 * The groups go (no more reads of the program's buffer rings); the
	 * records stay with the ring, since a request still finishing may
	 * hold one.
	 */
	pthread_mutex_lock(&ctx->lock);
	for (unsigned int i = 0; i < ctx->nr_groups; i++)
		if (ctx->groups[i])
			group_free(ctx, ctx->groups[i]);
	pthread_mutex_unlock(&ctx->lock);
}

void nw_kbuf_destroy(struct nw_ring *ring)
{
	struct nw_kbuf_ctx *ctx = ctx_get(ring, false);
	struct nw_kbuf_chunk *c;

	if (!ctx)
		return;
	nw_kbuf_free_all(ring);
	__atomic_store_n(&ring->kbuf, NULL, __ATOMIC_RELEASE);
	while ((c = ctx->chunks)) {
		ctx->chunks = c->next;
		free(c);
	}
	free(ctx->groups);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}
