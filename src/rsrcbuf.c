/* SPDX-License-Identifier: MIT */
/*
 * Registered buffers (READ_FIXED, WRITE_FIXED, READV_FIXED, WRITEV_FIXED,
 * IORING_NOP_FIXED_BUFFER): REGISTER_BUFFERS, BUFFERS2, BUFFERS_UPDATE,
 * UNREGISTER_BUFFERS, CLONE_BUFFERS. Semantics: kernel io_uring/rsrc.c
 * (6.18).
 *
 * Each buffer slot holds a node (rsrc-int.h) with the slot's tag and its
 * pages' RLIMIT_MEMLOCK count; a request using the buffer takes a
 * reference (nw_rsrc_buffer_get, rsrc.c), so an update or unregister that
 * replaces the buffer under it posts the old tag when it is freed, as the
 * kernel's io_put_rsrc_node does. The memory checks are pin.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "rsrc.h"
#include "rsrc-int.h"
#include "pin.h"
#include "tctx.h"

#define NW_MAX_REG_BUFFERS (1U << 14)
#define NW_MAX_BUF_LEN	   (1ULL << 30)

/* io_sqe_buffer_register's checks: a NULL base is an empty slot. */
static int buffer_validate(const struct iovec *iov)
{
	if (!iov->iov_base)
		return iov->iov_len ? -EFAULT : 0;
	if (!iov->iov_len || iov->iov_len > NW_MAX_BUF_LEN)
		return -EFAULT;
	if ((uintptr_t)iov->iov_base + ((iov->iov_len + 4095) & ~4095ULL) <
	    (uintptr_t)iov->iov_base)
		return -EOVERFLOW;
	return 0;
}

/*
 * Read slot i's iovec and tag from the program, and check them in the
 * kernel's order (io_sqe_buffer_register): the range, the pin (pin.c),
 * the RLIMIT_MEMLOCK count, then a tag on an empty slot.
 */
static int buffer_read(struct nw_ring *ring, struct nw_pin_ctx *pin,
		       const struct iovec *uiov, const uint64_t *utags,
		       unsigned int i, struct nw_buf_slot *b)
{
	unsigned long acct = 0;
	uint64_t base, tag = 0;
	int ret;

	memset(b, 0, sizeof(*b));
	if (uiov && nw_copy_from_user(&b->iov, uiov + i, sizeof(b->iov)))
		return -EFAULT;
	if (utags && nw_copy_from_user(&tag, utags + i, sizeof(tag)))
		return -EFAULT;
	ret = buffer_validate(&b->iov);
	if (ret)
		return ret;
	if (!b->iov.iov_base)
		return tag ? -EINVAL : 0;
	base = (uintptr_t)b->iov.iov_base;
	ret = nw_pin_check(pin, base, b->iov.iov_len);
	if (!ret)
		ret = nw_pin_account(pin, ring, base, b->iov.iov_len, &acct);
	if (ret)
		return ret;
	b->node = nw_rsrc_node_new(-1, tag);
	if (!b->node) {
		nw_pin_unaccount(acct);
		return -ENOMEM;
	}
	b->node->acct = acct;
	return 0;
}

/*
 * Drop the table's reference (on the submit side): the tag is posted now,
 * or when the last request using the buffer is freed.
 */
static void buffer_drop(struct nw_ring *ring, struct nw_buf_slot *b)
{
	if (b->node)
		nw_rsrc_node_release(ring, b->node, NULL, true);
	memset(b, 0, sizeof(*b));
}

/* io_sqe_buffers_register. Under reg_lock. */
static int buffers_register(struct nw_ring *ring, const struct iovec *uiov,
			    const uint64_t *utags, unsigned int nr)
{
	struct nw_buf_slot *bufs;
	struct nw_pin_ctx pin;
	struct nw_rsrc *r;
	unsigned int i;
	int ret = 0;

	r = nw_rsrc_make(ring);
	if (!r)
		return -ENOMEM;
	if (r->nr_bufs)
		return -EBUSY;
	if (!nr || nr > NW_MAX_REG_BUFFERS)
		return -EINVAL;
	bufs = calloc(nr, sizeof(*bufs));
	if (!bufs)
		return -ENOMEM;
	nw_pin_begin(&pin);
	for (i = 0; i < nr && !ret; i++)
		ret = buffer_read(ring, &pin, uiov, utags, i, &bufs[i]);
	nw_pin_end(&pin);
	if (ret) {
		/* No tags are posted for a failed register. */
		while (i--)
			if (bufs[i].node) {
				nw_pin_unaccount(bufs[i].node->acct);
				free(bufs[i].node);
			}
		free(bufs);
		return ret;
	}
	pthread_mutex_lock(&r->lock);
	r->bufs = bufs;
	r->nr_bufs = nr;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

int nw_rsrc_register_buffers(struct nw_ring *ring, void *arg,
			     unsigned int nr_args)
{
	if (!arg)
		return -EFAULT;
	return buffers_register(ring, arg, NULL, nr_args);
}

int nw_rsrc_unregister_buffers(struct nw_ring *ring, void *arg,
			       unsigned int nr_args)
{
	struct nw_rsrc *r = nw_rsrc_of(ring);
	struct nw_buf_slot *bufs;
	unsigned int nr;

	if (arg || nr_args)
		return -EINVAL;
	if (!r || !r->nr_bufs)
		return -ENXIO;
	pthread_mutex_lock(&r->lock);
	bufs = r->bufs;
	nr = r->nr_bufs;
	r->bufs = NULL;
	r->nr_bufs = 0;
	pthread_mutex_unlock(&r->lock);
	nw_rsrc_reg_post_begin(ring);
	while (nr--)
		buffer_drop(ring, &bufs[nr]);
	nw_rsrc_reg_post_end(ring);
	free(bufs);
	return 0;
}

/* __io_sqe_buffers_update: the new buffer is checked before the old goes. */
static int buffers_update(struct nw_ring *ring,
			  const struct io_uring_rsrc_update2 *up,
			  unsigned int nr)
{
	const struct iovec *uiov = (const struct iovec *)(uintptr_t)up->data;
	const uint64_t *utags = (const uint64_t *)(uintptr_t)up->tags;
	struct nw_rsrc *r = nw_rsrc_of(ring);
	struct nw_pin_ctx pin;
	unsigned int done;
	int err = 0;

	if (!r || !r->nr_bufs)
		return -ENXIO;
	if (up->offset + nr > r->nr_bufs)
		return -EINVAL;
	nw_pin_begin(&pin);
	for (done = 0; done < nr; done++) {
		struct nw_buf_slot b, old;

		err = buffer_read(ring, &pin, uiov, utags, done, &b);
		if (err)
			break;
		/* Swapped under the lock, the old node put after it. */
		pthread_mutex_lock(&r->lock);
		old = r->bufs[up->offset + done];
		r->bufs[up->offset + done] = b;
		pthread_mutex_unlock(&r->lock);
		nw_rsrc_reg_post_begin(ring);
		buffer_drop(ring, &old);
		nw_rsrc_reg_post_end(ring);
	}
	nw_pin_end(&pin);
	return done ? (int)done : err;
}

int nw_rsrc_register_buffers2(struct nw_ring *ring, void *arg,
			      unsigned int nr_args)
{
	struct io_uring_rsrc_register rr;
	int ret = nw_rsrc_reg_parse(arg, nr_args, &rr);

	if (ret)
		return ret;
	return buffers_register(ring, (const struct iovec *)(uintptr_t)rr.data,
				(const uint64_t *)(uintptr_t)rr.tags, rr.nr);
}

int nw_rsrc_update_buffers(struct nw_ring *ring, void *arg,
			   unsigned int nr_args)
{
	struct io_uring_rsrc_update2 up;
	int ret = nw_rsrc_update_parse(arg, nr_args, &up);

	return ret ? ret : buffers_update(ring, &up, up.nr);
}

/* ---- IORING_REGISTER_CLONE_BUFFERS (io_register_clone_buffers) ---- */

/* The source ring: a ring fd, or a registered ring index (SRC_REGISTERED). */
static int clone_src(const struct nw_clone_buffers *cb, struct nw_ring **src)
{
	if (cb->flags & NW_REGISTER_SRC_REGISTERED)
		return nw_tctx_ring(cb->src_fd, src);
	return nw_ring_lookup((int)cb->src_fd, src);
}

/*
 * The source's slots [src_off, src_off + nr) as they are now, under its
 * table lock (a leaf: the source's reg_lock is not taken, so two rings
 * cloning from each other cannot deadlock). An empty slot's base is NULL.
 */
static int clone_snapshot(struct nw_ring *src, struct nw_clone_buffers *cb,
			  struct iovec **out)
{
	struct nw_rsrc *sr = nw_rsrc_of(src);
	struct iovec *iov = NULL;
	unsigned int nsrc;
	int ret = 0;

	if (sr)
		pthread_mutex_lock(&sr->lock);
	nsrc = sr ? sr->nr_bufs : 0;
	if (!cb->nr)
		cb->nr = nsrc;
	if (!nsrc)
		ret = -ENXIO;
	else if (cb->nr > nsrc || cb->nr > NW_MAX_REG_BUFFERS)
		ret = -EINVAL;
	else if (cb->nr + cb->src_off < cb->nr || cb->nr + cb->src_off > nsrc)
		ret = -EOVERFLOW;
	else if (cb->nr + cb->dst_off < cb->nr)
		ret = -EOVERFLOW;
	else if (cb->nr + cb->dst_off > NW_MAX_REG_BUFFERS)
		ret = -EINVAL;
	else if (!(iov = calloc(cb->nr, sizeof(*iov))))
		ret = -ENOMEM;
	for (unsigned int i = 0; !ret && i < cb->nr; i++)
		if (sr->bufs[cb->src_off + i].node)
			iov[i] = sr->bufs[cb->src_off + i].iov;
	if (sr)
		pthread_mutex_unlock(&sr->lock);
	*out = iov;
	return ret;
}

/*
 * The destination's new table: the clones, tagless, at [dst_off, dst_off +
 * nr), its own other slots kept (the same nodes, tags and all). The pages stay
 * counted once, by the source's nodes (the kernel does not count them
 * again either). Under reg_lock.
 */
static int clone_build(struct nw_rsrc *r, const struct nw_clone_buffers *cb,
		       const struct iovec *iov, struct nw_buf_slot **out,
		       unsigned int *nr_out)
{
	unsigned int nr = cb->nr + cb->dst_off;
	struct nw_buf_slot *bufs;

	if (nr < r->nr_bufs)
		nr = r->nr_bufs;
	bufs = calloc(nr, sizeof(*bufs));
	if (!bufs)
		return -ENOMEM;
	for (unsigned int i = 0; i < cb->nr; i++) {
		struct nw_buf_slot *b = &bufs[cb->dst_off + i];

		if (!iov[i].iov_base)
			continue;
		b->node = nw_rsrc_node_new(-1, 0);
		if (!b->node) {
			while (i--)
				free(bufs[cb->dst_off + i].node);
			free(bufs);
			return -ENOMEM;
		}
		b->iov = iov[i];
	}
	for (unsigned int i = 0; i < r->nr_bufs; i++) {
		if (i >= cb->dst_off && i - cb->dst_off < cb->nr)
			continue;
		bufs[i] = r->bufs[i];
		if (bufs[i].node)
			__atomic_add_fetch(&bufs[i].node->refs, 1,
					   __ATOMIC_RELAXED);
	}
	*out = bufs;
	*nr_out = nr;
	return 0;
}

int nw_rsrc_clone_buffers(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	const unsigned int flags_ok =
		NW_REGISTER_SRC_REGISTERED | NW_REGISTER_DST_REPLACE;
	struct nw_buf_slot *bufs = NULL, *old;
	struct nw_clone_buffers cb;
	struct iovec *iov = NULL;
	unsigned int nr = 0, nr_old;
	struct nw_ring *src;
	struct nw_rsrc *r;
	int ret;

	if (!arg || nr_args != 1)
		return -EINVAL;
	if (nw_copy_from_user(&cb, arg, sizeof(cb)))
		return -EFAULT;
	if (cb.flags & ~flags_ok)
		return -EINVAL;
	r = nw_rsrc_of(ring);
	if (!(cb.flags & NW_REGISTER_DST_REPLACE) && r && r->nr_bufs)
		return -EBUSY;
	if (cb.pad[0] || cb.pad[1] || cb.pad[2])
		return -EINVAL;
	ret = clone_src(&cb, &src);
	if (ret)
		return ret;
	/* A SINGLE_ISSUER source is the register caller's to use only. */
	if (src->single_issuer && src->submitter_tid &&
	    src->submitter_tid != nw_gettid())
		return -EEXIST;
	if (!cb.nr && (cb.dst_off || cb.src_off))
		return -EINVAL;
	r = nw_rsrc_make(ring);
	if (!r)
		return -ENOMEM;
	ret = clone_snapshot(src, &cb, &iov);
	if (!ret)
		ret = clone_build(r, &cb, iov, &bufs, &nr);
	free(iov);
	if (ret)
		return ret;
	pthread_mutex_lock(&r->lock);
	old = r->bufs;
	nr_old = r->nr_bufs;
	r->bufs = bufs;
	r->nr_bufs = nr;
	pthread_mutex_unlock(&r->lock);
	/* The old table's references go: tags of what no table keeps post. */
	nw_rsrc_reg_post_begin(ring);
	while (nr_old--)
		buffer_drop(ring, &old[nr_old]);
	nw_rsrc_reg_post_end(ring);
	free(old);
	return 0;
}
