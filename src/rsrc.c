/* SPDX-License-Identifier: MIT */
/*
 * Registered files (IOSQE_FIXED_FILE, direct descriptors) and registered
 * buffers (READ_FIXED, WRITE_FIXED), with their tags; IORING_OP_FILES_UPDATE.
 * Semantics: kernel io_uring/rsrc.c, filetable.c, register.c (6.18).
 *
 * A file slot holds a node: the engine's own fd for the file and the slot's
 * tag. A request using the slot takes a reference on the node (the kernel's
 * req->file_node; SPLICE_F_FD_IN_FIXED, MSG_RING and cancel by fixed fd
 * take one too), so a slot replaced or closed while a request still uses
 * it keeps its file open until that request is freed; the last reference
 * closes the fd and posts the tag's CQE (user_data = tag, res 0), as the
 * kernel's io_free_rsrc_node does. A buffer slot has a node too (rsrcbuf.c
 * has the buffer tables): a READ_FIXED or WRITE_FIXED holds it from prep
 * to its free, so a buffer replaced under it posts its tag after it.
 *
 * The kernel posts a tag at once, so the tag of a slot that an operation
 * empties (CLOSE of a slot, FILES_UPDATE, an open/accept/socket into an
 * occupied slot) comes before that operation's CQE. Here the operation
 * may run on a worker or the reactor, which post nothing: the node goes
 * on the request (req->tag_nodes) and its tag is posted by the submit
 * side right before the request's CQE (complete.c).
 *
 * Where the fds live: a direct descriptor has no number in the kernel, but
 * here it is an fd of the process, which fdhigh.c moves out of the
 * program's way as it does every fd of the engine.
 *
 * Locking: rsrc->lock guards the tables and is taken from any thread (ops
 * install and remove files from workers and the reactor too). Nodes are
 * put after it is dropped. Tags are posted directly by the submit side
 * (register calls, request free) and as task work from other threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include "rsrc.h"
#include "rsrc-int.h"
#include "complete.h"
#include "fdhigh.h"
#include "pin.h"
#include "fdcache.h"

#define NW_MAX_FIXED_FILES (1U << 20)

/* Nodes taken out of a table, put once its lock is dropped. */
struct nw_put_list {
	struct nw_rsrc_node **nodes;
	unsigned int nr, cap;
	struct nw_rsrc_node *one; /* the common single-node case */
};

/* ---- tags ---- */

static void post_tag(struct nw_ring *ring, uint64_t tag, bool submit_side)
{
	struct nw_req aux;

	if (!submit_side) {
		nw_post_aux_async(ring, tag, 0, 0, true);
		return;
	}
	memset(&aux, 0, sizeof(aux));
	aux.user_data = tag;
	nw_cq_add(ring, &aux, 0);
}

/* Keep a closed node's tag for req's completion, in the order closed. */
static void tag_defer(struct nw_req *req, struct nw_rsrc_node *node)
{
	struct nw_rsrc_node **pos = &req->tag_nodes;

	while (*pos)
		pos = &(*pos)->next;
	node->next = NULL;
	*pos = node;
}

/*
 * Drop a reference; the last one closes the file and posts the tag: with
 * req, just before req's CQE; else now on the submit side, or as task
 * work from elsewhere.
 */
static void node_put(struct nw_ring *ring, struct nw_rsrc_node *node,
		     struct nw_req *req, bool submit_side)
{
	if (__atomic_sub_fetch(&node->refs, 1, __ATOMIC_ACQ_REL))
		return;
	if (node->fd >= 0) {
		nw_fd_forget(ring, node->fd); /* its kind, its watch */
		close(node->fd);
	}
	nw_pin_unaccount(node->acct);
	if (node->tag && req) {
		tag_defer(req, node);
		return;
	}
	if (node->tag)
		post_tag(ring, node->tag, submit_side);
	free(node);
}

void nw_rsrc_post_tags(struct nw_req *req)
{
	struct nw_rsrc_node *node = req->tag_nodes, *next;

	req->tag_nodes = NULL;
	for (; node; node = next) {
		next = node->next;
		post_tag(req->ring, node->tag, true);
		free(node);
	}
}

static void put_list_add(struct nw_put_list *pl, struct nw_rsrc_node *node)
{
	struct nw_rsrc_node **n;

	if (!pl->one && !pl->nr) {
		pl->one = node;
		return;
	}
	if (pl->nr == pl->cap) {
		pl->cap = pl->cap ? pl->cap * 2 : 16;
		n = realloc(pl->nodes, pl->cap * sizeof(*n));
		if (!n) {
			/* Keep the order; lose only the memory. */
			pl->cap = pl->nr;
			__atomic_sub_fetch(&node->refs, 1, __ATOMIC_ACQ_REL);
			return;
		}
		pl->nodes = n;
	}
	pl->nodes[pl->nr++] = node;
}

static void put_list_run(struct nw_ring *ring, struct nw_put_list *pl,
			 struct nw_req *req, bool submit_side)
{
	if (pl->one)
		node_put(ring, pl->one, req, submit_side);
	for (unsigned int i = 0; i < pl->nr; i++)
		node_put(ring, pl->nodes[i], req, submit_side);
	free(pl->nodes);
	memset(pl, 0, sizeof(*pl));
}

/*
 * Take the submit side for a register call that posts CQEs. What other
 * threads finished before the call is posted first (it would be by now
 * on the kernel, whose task work runs on the way back to user space),
 * except on DEFER_TASKRUN rings, where it waits for GETEVENTS there too.
 */
static void reg_post_begin(struct nw_ring *ring)
{
	nw_submit_lock(ring);
	if (!ring->lockless_cq)
		nw_run_tw(ring);
}

static void reg_post_end(struct nw_ring *ring)
{
	nw_cq_flush_batch(ring);
	nw_submit_unlock(ring);
	if (!ring->lockless_cq)
		nw_run_tw_trylock(ring);
}

/* Put from a register call: post the tags at once, as the kernel does. */
static void put_list_run_locked(struct nw_ring *ring, struct nw_put_list *pl)
{
	if (!pl->one && !pl->nr)
		return;
	reg_post_begin(ring);
	put_list_run(ring, pl, NULL, true);
	reg_post_end(ring);
}

/* ---- the tables ---- */

static struct nw_rsrc *rsrc_of(struct nw_ring *ring)
{
	return __atomic_load_n(&ring->rsrc, __ATOMIC_ACQUIRE);
}

/* The ring's tables, made on first use. Called under reg_lock. */
static struct nw_rsrc *rsrc_make(struct nw_ring *ring)
{
	struct nw_rsrc *r = rsrc_of(ring);

	if (r)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	__atomic_store_n(&ring->rsrc, r, __ATOMIC_RELEASE);
	return r;
}

static struct nw_rsrc_node *node_new(int fd, uint64_t tag)
{
	struct nw_rsrc_node *node = malloc(sizeof(*node));

	if (!node)
		return NULL;
	node->refs = 1;
	node->fd = fd;
	node->tag = tag;
	node->acct = 0;
	return node;
}

/* A node for the program's fd: -EBADF for a bad fd or a ring's. */
static int node_from_user_fd(int fd, uint64_t tag, struct nw_rsrc_node **out)
{
	struct nw_ring *other;
	int own;

	if (fd < 0 || nw_ring_lookup(fd, &other) != -EOPNOTSUPP)
		return -EBADF;
	own = nw_fd_dup_high(fd);
	if (own < 0)
		return own == -EMFILE ? -EMFILE : -EBADF;
	*out = node_new(own, tag);
	if (!*out) {
		close(own);
		return -ENOMEM;
	}
	return 0;
}

/* io_file_bitmap_set / _clear keep the allocation hint, as the kernel. */
static void slot_set(struct nw_rsrc *r, unsigned int i, struct nw_rsrc_node *n)
{
	r->files[i] = n;
	r->alloc_hint = i + 1;
}

static struct nw_rsrc_node *slot_clear(struct nw_rsrc *r, unsigned int i)
{
	struct nw_rsrc_node *old = r->files[i];

	if (old) {
		r->files[i] = NULL;
		r->alloc_hint = i;
	}
	return old;
}

/* io_file_bitmap_get: a free slot from the hint, wrapping once. */
static int slot_alloc(struct nw_rsrc *r)
{
	unsigned int nr = r->alloc_end;

	if (!r->nr_files)
		return -ENFILE;
	/*
	 * A slot set or cleared outside the range moved the hint out of it:
	 * start from the range's beginning (the kernel's fix, 6.18).
	 */
	if (r->alloc_hint < r->alloc_start || r->alloc_hint >= nr)
		r->alloc_hint = r->alloc_start;
	for (;;) {
		for (unsigned int i = r->alloc_hint; i < nr; i++)
			if (!r->files[i])
				return (int)i;
		if (r->alloc_hint == r->alloc_start)
			break;
		nr = r->alloc_hint;
		r->alloc_hint = r->alloc_start;
	}
	return -ENFILE;
}

/*
 * Empty the file table, under r->lock: the array goes to r->retired,
 * its nodes to be put by files_retired_put once the lock is dropped.
 * The ring points at them through it until they are put: if only this
 * thread's stack did (a put list), LeakSanitizer, whose check can skip a
 * thread ("not found in registry"), would report them leaked meanwhile
 * (reg-fuzz, issue 14: the reactor thread's ring exit, which takes the
 * submit side and runs task work before the puts). Returns the slots.
 */
static unsigned int files_retire(struct nw_rsrc *r)
{
	unsigned int nr = r->nr_files;

	free(r->retired); /* a register call under reg_lock: none left */
	r->retired = r->files;
	r->files = NULL;
	r->nr_files = 0;
	r->alloc_start = r->alloc_end = r->alloc_hint = 0;
	return nr;
}

/*
 * Put the retired table's nodes, last slot first (as the kernel), from
 * a register call (reg_lock held: nobody else retires meanwhile); then
 * the array goes.
 */
static void files_retired_put(struct nw_ring *ring, struct nw_rsrc *r,
			      unsigned int nr)
{
	struct nw_rsrc_node **old = r->retired;
	bool any = false;

	for (unsigned int i = 0; i < nr && !any; i++)
		any = old[i] != NULL;
	if (any) {
		reg_post_begin(ring);
		for (unsigned int i = nr; i-- > 0;)
			if (old[i])
				node_put(ring, old[i], NULL, true);
		reg_post_end(ring);
	}
	pthread_mutex_lock(&r->lock);
	r->retired = NULL;
	pthread_mutex_unlock(&r->lock);
	free(old);
}

static void files_clear_tags(struct nw_rsrc *r)
{
	for (unsigned int i = 0; i < r->nr_files; i++)
		if (r->files[i])
			r->files[i]->tag = 0;
}

/* io_sqe_files_register. fds and tags may be NULL. Under reg_lock. */
static int files_register(struct nw_ring *ring, const int *ufds,
			  const uint64_t *utags, unsigned int nr)
{
	struct nw_rsrc *r;
	struct rlimit rl;
	int ret = 0;

	r = rsrc_make(ring);
	if (!r)
		return -ENOMEM;
	if (r->nr_files)
		return -EBUSY;
	if (!nr)
		return -EINVAL;
	if (nr > NW_MAX_FIXED_FILES ||
	    (!getrlimit(RLIMIT_NOFILE, &rl) && nr > rl.rlim_cur))
		return -EMFILE;
	pthread_mutex_lock(&r->lock);
	r->files = calloc(nr, sizeof(*r->files));
	if (!r->files) {
		pthread_mutex_unlock(&r->lock);
		return -ENOMEM;
	}
	r->nr_files = nr;
	for (unsigned int i = 0; i < nr && !ret; i++) {
		uint64_t tag = 0;
		int fd = -1;

		if ((utags &&
		     nw_copy_from_user(&tag, utags + i, sizeof(tag))) ||
		    (ufds && nw_copy_from_user(&fd, ufds + i, sizeof(fd)))) {
			ret = -EFAULT;
			break;
		}
		if (!ufds || fd == -1) {
			ret = tag ? -EINVAL : 0;
			continue;
		}
		ret = node_from_user_fd(fd, tag, &r->files[i]);
	}
	if (ret) {
		files_clear_tags(r);
		nr = files_retire(r);
	} else {
		r->alloc_start = r->alloc_hint = 0;
		r->alloc_end = nr;
	}
	pthread_mutex_unlock(&r->lock);
	if (ret)
		files_retired_put(ring, r, nr);
	return ret;
}

int nw_rsrc_register_files(struct nw_ring *ring, void *arg,
			   unsigned int nr_args)
{
	if (!arg)
		return -EFAULT;
	return files_register(ring, arg, NULL, nr_args);
}

int nw_rsrc_unregister_files(struct nw_ring *ring, void *arg,
			     unsigned int nr_args)
{
	struct nw_rsrc *r = rsrc_of(ring);
	unsigned int nr;

	if (arg || nr_args)
		return -EINVAL;
	if (!r)
		return -ENXIO;
	pthread_mutex_lock(&r->lock);
	if (!r->nr_files) {
		pthread_mutex_unlock(&r->lock);
		return -ENXIO;
	}
	nr = files_retire(r);
	pthread_mutex_unlock(&r->lock);
	files_retired_put(ring, r, nr);
	return 0;
}

/*
 * This ring's reference goes without a tag: a node a clone shares lives
 * on in the other ring's table, whose last put posts its tag there.
 */
static void node_drop_quiet(struct nw_ring *ring, struct nw_rsrc_node *node)
{
	if (__atomic_sub_fetch(&node->refs, 1, __ATOMIC_ACQ_REL))
		return;
	if (node->fd >= 0) {
		nw_fd_forget(ring, node->fd);
		close(node->fd);
	}
	nw_pin_unaccount(node->acct);
	free(node);
}

/*
 * Ring release (io_ring_ctx_free): every table goes, and each node this
 * ring alone held, with no tag posted (nobody reads the CQ any more); no
 * request of the ring holds one.
 * Under reg_lock.
 */
void nw_rsrc_destroy(struct nw_ring *ring)
{
	struct nw_rsrc *r = rsrc_of(ring);

	if (!r)
		return;
	for (unsigned int i = 0; i < r->nr_files; i++)
		if (r->files[i])
			node_drop_quiet(ring, r->files[i]);
	for (unsigned int i = 0; i < r->nr_bufs; i++)
		if (r->bufs[i].node)
			node_drop_quiet(ring, r->bufs[i].node);
	__atomic_store_n(&ring->rsrc, NULL, __ATOMIC_RELEASE);
	free(r->retired);
	free(r->files);
	free(r->bufs);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/*
 * __io_sqe_files_update: the old file of a slot goes before the new fd
 * is looked at (a bad fd leaves the slot empty). Returns the number of
 * slots done, or the first error when none was.
 */
static int files_update(struct nw_ring *ring, uint32_t offset, const int *ufds,
			const uint64_t *utags, unsigned int nr,
			struct nw_put_list *pl)
{
	struct nw_rsrc *r = rsrc_of(ring);
	unsigned int done;
	int err = 0;

	if (!r)
		return -ENXIO;
	pthread_mutex_lock(&r->lock);
	if (!r->nr_files) {
		pthread_mutex_unlock(&r->lock);
		return -ENXIO;
	}
	if (offset + nr > r->nr_files) {
		pthread_mutex_unlock(&r->lock);
		return -EINVAL;
	}
	for (done = 0; done < nr; done++) {
		struct nw_rsrc_node *old;
		uint64_t tag = 0;
		int fd;

		if ((utags &&
		     nw_copy_from_user(&tag, utags + done, sizeof(tag))) ||
		    nw_copy_from_user(&fd, ufds + done, sizeof(fd))) {
			err = -EFAULT;
			break;
		}
		if ((fd == IORING_REGISTER_FILES_SKIP || fd == -1) && tag) {
			err = -EINVAL;
			break;
		}
		if (fd == IORING_REGISTER_FILES_SKIP)
			continue;
		old = slot_clear(r, offset + done);
		if (old)
			put_list_add(pl, old);
		if (fd == -1)
			continue;
		err = node_from_user_fd(fd, tag, &r->files[offset + done]);
		if (err)
			break;
		slot_set(r, offset + done, r->files[offset + done]);
	}
	pthread_mutex_unlock(&r->lock);
	return done ? (int)done : err;
}

/* __io_register_rsrc_update for files, from a register call. */
static int reg_files_update(struct nw_ring *ring,
			    const struct io_uring_rsrc_update2 *up,
			    unsigned int nr)
{
	struct nw_put_list pl = {0};
	int ret;

	if (up->offset + nr < up->offset)
		return -EOVERFLOW;
	ret = files_update(ring, up->offset, (const int *)(uintptr_t)up->data,
			   (const uint64_t *)(uintptr_t)up->tags, nr, &pl);
	put_list_run_locked(ring, &pl);
	return ret;
}

/* IORING_REGISTER_FILES_UPDATE: returns the number of slots updated. */
int nw_rsrc_update_files(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	struct io_uring_rsrc_update2 up;

	if (!nr_args)
		return -EINVAL;
	memset(&up, 0, sizeof(up));
	if (nw_copy_from_user(&up, arg, sizeof(struct io_uring_rsrc_update)))
		return -EFAULT;
	if (up.resv || up.resv2)
		return -EINVAL;
	return reg_files_update(ring, &up, nr_args);
}

/* IORING_REGISTER_FILE_ALLOC_RANGE. */
int nw_rsrc_file_alloc_range(struct nw_ring *ring, void *arg,
			     unsigned int nr_args)
{
	struct io_uring_file_index_range range;
	struct nw_rsrc *r;
	uint32_t end;

	if (!arg || nr_args)
		return -EINVAL;
	if (nw_copy_from_user(&range, arg, sizeof(range)))
		return -EFAULT;
	if (__builtin_add_overflow(range.off, range.len, &end))
		return -EOVERFLOW;
	r = rsrc_make(ring);
	if (!r)
		return -ENOMEM;
	pthread_mutex_lock(&r->lock);
	if (range.resv || end > r->nr_files) {
		pthread_mutex_unlock(&r->lock);
		return -EINVAL;
	}
	r->alloc_start = r->alloc_hint = range.off;
	r->alloc_end = end;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

/* ---- direct descriptors ---- */

int nw_rsrc_install(struct nw_ring *ring, int fd, uint32_t file_slot,
		    struct nw_req *req)
{
	struct nw_rsrc *r = rsrc_of(ring);
	struct nw_rsrc_node *node, *old = NULL;
	bool alloc = file_slot == IORING_FILE_INDEX_ALLOC;
	int ret, own;

	own = nw_fd_dup_high(fd);
	close(fd);
	if (own < 0)
		return own;
	node = node_new(own, 0);
	if (!node) {
		close(own);
		return -ENOMEM;
	}
	if (!r) {
		ret = alloc ? -ENFILE : -ENXIO;
		goto err;
	}
	pthread_mutex_lock(&r->lock);
	if (alloc) {
		ret = slot_alloc(r);
	} else if (!r->nr_files) {
		ret = -ENXIO;
	} else {
		ret = file_slot - 1 < r->nr_files ? (int)(file_slot - 1)
						  : -EINVAL;
	}
	if (ret >= 0) {
		old = slot_clear(r, (unsigned int)ret);
		slot_set(r, (unsigned int)ret, node);
	}
	pthread_mutex_unlock(&r->lock);
	if (ret < 0)
		goto err;
	if (old)
		node_put(ring, old, req, false);
	return alloc ? ret : 0;
err:
	close(own);
	free(node);
	return ret;
}

int nw_rsrc_remove(struct nw_ring *ring, unsigned int idx, struct nw_req *req)
{
	struct nw_rsrc *r = rsrc_of(ring);
	struct nw_rsrc_node *old = NULL;
	int ret = 0;

	if (!r)
		return -ENXIO;
	pthread_mutex_lock(&r->lock);
	if (!r->nr_files)
		ret = -ENXIO;
	else if (idx >= r->nr_files)
		ret = -EINVAL;
	else if (!(old = slot_clear(r, idx)))
		ret = -EBADF;
	pthread_mutex_unlock(&r->lock);
	if (old)
		node_put(ring, old, req, false);
	return ret;
}

int nw_rsrc_file_get(struct nw_req *req, unsigned int idx)
{
	struct nw_rsrc *r = rsrc_of(req->ring);
	struct nw_rsrc_node *node = NULL;

	if (!r)
		return -EBADF;
	pthread_mutex_lock(&r->lock);
	if (idx < r->nr_files)
		node = r->files[idx];
	if (node)
		__atomic_add_fetch(&node->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->lock);
	if (!node)
		return -EBADF;
	req->file_node = node;
	return node->fd;
}

struct nw_rsrc_node *nw_rsrc_node_get(struct nw_ring *ring, unsigned int idx,
				      int *fd)
{
	struct nw_rsrc *r = rsrc_of(ring);
	struct nw_rsrc_node *node = NULL;

	if (!r)
		return NULL;
	pthread_mutex_lock(&r->lock);
	if (idx < r->nr_files)
		node = r->files[idx];
	if (node) {
		__atomic_add_fetch(&node->refs, 1, __ATOMIC_RELAXED);
		*fd = node->fd;
	}
	pthread_mutex_unlock(&r->lock);
	return node;
}

void nw_rsrc_node_put(struct nw_ring *ring, struct nw_rsrc_node *node,
		      struct nw_req *req)
{
	node_put(ring, node, req, false);
}

struct nw_rsrc_node *nw_rsrc_node_wrap(int fd)
{
	struct nw_rsrc_node *node = calloc(1, sizeof(*node));

	if (node)
		node->fd = fd;
	return node;
}

void nw_rsrc_node_hold(struct nw_req *req, struct nw_rsrc_node *node)
{
	__atomic_add_fetch(&node->refs, 1, __ATOMIC_RELAXED);
	req->file_node = node;
	req->flags |= NW_REQ_F_FIXED_DONE;
	req->fd = node->fd;
}

void nw_rsrc_file_put(struct nw_req *req)
{
	req->flags &= ~NW_REQ_F_FIXED_DONE;
	if (!req->file_node)
		return;
	node_put(req->ring, req->file_node, NULL, true);
	req->file_node = NULL;
}

/* ---- IORING_OP_FILES_UPDATE ---- */

struct nw_files_update {
	uint64_t arg;
	uint32_t offset;
	uint32_t nr;
};
_Static_assert(sizeof(struct nw_files_update) <= NW_REQ_CMD_SIZE, "size");

int nw_files_update_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_files_update *up = nw_req_cmd(req, struct nw_files_update);

	if (req->sqe_flags & (IOSQE_FIXED_FILE | IOSQE_BUFFER_SELECT))
		return -EINVAL;
	if (READ_ONCE(sqe->rw_flags) || READ_ONCE(sqe->splice_fd_in))
		return -EINVAL;
	up->offset = (uint32_t)READ_ONCE(sqe->off);
	up->nr = READ_ONCE(sqe->len);
	if (!up->nr)
		return -EINVAL;
	up->arg = READ_ONCE(sqe->addr);
	return 0;
}

/*
 * io_files_update_with_index_alloc: each fd goes into a free slot and
 * the slot's index is written back over it in the program's array.
 */
static int files_update_alloc(struct nw_req *req, struct nw_files_update *up)
{
	struct nw_rsrc *r = rsrc_of(req->ring);
	int *fds = (int *)(uintptr_t)up->arg;
	struct nw_ring *other;
	unsigned int done;
	int ret = 0, fd, own;

	if (!r || !__atomic_load_n(&r->nr_files, __ATOMIC_RELAXED))
		return -ENXIO;
	for (done = 0; done < up->nr; done++) {
		if (nw_copy_from_user(&fd, fds + done, sizeof(fd))) {
			ret = -EFAULT;
			break;
		}
		own = -1;
		if (fd >= 0 && nw_ring_lookup(fd, &other) == -EOPNOTSUPP)
			own = nw_fd_dup_high(fd);
		if (own < 0) {
			ret = -EBADF;
			break;
		}
		ret = nw_rsrc_install(req->ring, own, IORING_FILE_INDEX_ALLOC,
				      req);
		if (ret < 0)
			break;
		if (nw_copy_to_user(fds + done, &ret, sizeof(ret))) {
			nw_rsrc_remove(req->ring, (unsigned int)ret, req);
			ret = -EFAULT;
			break;
		}
	}
	return done ? (int)done : ret;
}

int nw_files_update_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_files_update *up = nw_req_cmd(req, struct nw_files_update);
	struct nw_put_list pl = {0};
	int ret;

	(void)issue_flags;
	if (up->offset == IORING_FILE_INDEX_ALLOC) {
		ret = files_update_alloc(req, up);
	} else if (up->offset + up->nr < up->offset) {
		ret = -EOVERFLOW;
	} else {
		ret = files_update(req->ring, up->offset,
				   (const int *)(uintptr_t)up->arg, NULL,
				   up->nr, &pl);
		put_list_run(req->ring, &pl, req, false);
	}
	if (ret < 0)
		return ret;
	req->res = ret;
	return NW_COMPLETE;
}

/* ---- requests holding a buffer ---- */

/* validate_fixed_range: [addr, addr+len) inside the buffer at b. */
static bool buf_range_ok(const struct nw_buf_slot *b, uint64_t addr,
			 uint64_t len)
{
	uint64_t base = (uintptr_t)b->iov.iov_base, blen = b->iov.iov_len;

	return addr >= base && addr + len >= addr && addr + len <= base + blen;
}

int nw_rsrc_buffer_get_vec(struct nw_req *req, unsigned int idx,
			   const struct iovec *iov, unsigned int nr)
{
	struct nw_rsrc *r = rsrc_of(req->ring);
	struct nw_rsrc_node *node = NULL;

	if (!r)
		return -EFAULT;
	pthread_mutex_lock(&r->lock);
	if (idx < r->nr_bufs && r->bufs[idx].node) {
		node = r->bufs[idx].node;
		for (unsigned int i = 0; i < nr && node; i++)
			if (!buf_range_ok(&r->bufs[idx],
					  (uintptr_t)iov[i].iov_base,
					  iov[i].iov_len))
				node = NULL;
	}
	if (node)
		__atomic_add_fetch(&node->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->lock);
	if (!node)
		return -EFAULT;
	req->buf_node = node;
	req->flags |= NW_REQ_F_BUF_NODE;
	return 0;
}

int nw_rsrc_buffer_get(struct nw_req *req, unsigned int idx, uint64_t addr,
		       uint64_t len)
{
	struct iovec iov = {(void *)(uintptr_t)addr, (size_t)len};

	if (addr + len < addr || len > SIZE_MAX)
		return -EFAULT;
	return nw_rsrc_buffer_get_vec(req, idx, &iov, 1);
}

bool nw_rsrc_buffer_exists(struct nw_ring *ring, unsigned int idx)
{
	struct nw_rsrc *r = rsrc_of(ring);
	bool ret;

	if (!r)
		return false;
	pthread_mutex_lock(&r->lock);
	ret = idx < r->nr_bufs && r->bufs[idx].node;
	pthread_mutex_unlock(&r->lock);
	return ret;
}

void nw_rsrc_buf_put(struct nw_req *req)
{
	req->flags &= ~NW_REQ_F_BUF_NODE;
	if (!req->buf_node)
		return;
	node_put(req->ring, req->buf_node, NULL, true);
	req->buf_node = NULL;
}

/* ---- the 2 forms: struct io_uring_rsrc_register / _update2 ---- */

int nw_rsrc_reg_parse(void *arg, unsigned int size,
		      struct io_uring_rsrc_register *rr)
{
	if (size != sizeof(*rr))
		return -EINVAL;
	memset(rr, 0, sizeof(*rr));
	if (nw_copy_from_user(rr, arg, size))
		return -EFAULT;
	if (!rr->nr || rr->resv2)
		return -EINVAL;
	if (rr->flags & ~IORING_RSRC_REGISTER_SPARSE)
		return -EINVAL;
	if ((rr->flags & IORING_RSRC_REGISTER_SPARSE) && rr->data)
		return -EINVAL;
	return 0;
}

int nw_rsrc_update_parse(void *arg, unsigned int size,
			 struct io_uring_rsrc_update2 *up)
{
	if (size != sizeof(*up))
		return -EINVAL;
	if (nw_copy_from_user(up, arg, sizeof(*up)))
		return -EFAULT;
	if (!up->nr || up->resv || up->resv2)
		return -EINVAL;
	if (up->offset + up->nr < up->offset)
		return -EOVERFLOW;
	return 0;
}

int nw_rsrc_register_files2(struct nw_ring *ring, void *arg,
			    unsigned int nr_args)
{
	struct io_uring_rsrc_register rr;
	int ret = nw_rsrc_reg_parse(arg, nr_args, &rr);

	if (ret)
		return ret;
	return files_register(ring, (const int *)(uintptr_t)rr.data,
			      (const uint64_t *)(uintptr_t)rr.tags, rr.nr);
}

int nw_rsrc_update_files2(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	struct io_uring_rsrc_update2 up;
	int ret = nw_rsrc_update_parse(arg, nr_args, &up);

	return ret ? ret : reg_files_update(ring, &up, up.nr);
}

/* ---- for rsrcbuf.c ---- */

struct nw_rsrc *nw_rsrc_of(struct nw_ring *ring)
{
	return rsrc_of(ring);
}

struct nw_rsrc *nw_rsrc_make(struct nw_ring *ring)
{
	return rsrc_make(ring);
}

struct nw_rsrc_node *nw_rsrc_node_new(int fd, uint64_t tag)
{
	return node_new(fd, tag);
}

void nw_rsrc_node_release(struct nw_ring *ring, struct nw_rsrc_node *node,
			  struct nw_req *req, bool submit_side)
{
	node_put(ring, node, req, submit_side);
}

void nw_rsrc_reg_post_begin(struct nw_ring *ring)
{
	reg_post_begin(ring);
}

void nw_rsrc_reg_post_end(struct nw_ring *ring)
{
	reg_post_end(ring);
}
