/* SPDX-License-Identifier: MIT */
/*
 * Registered buffers (READ_FIXED, WRITE_FIXED, READV_FIXED, WRITEV_FIXED,
 * IORING_NOP_FIXED_BUFFER): REGISTER_BUFFERS, BUFFERS2, BUFFERS_UPDATE,
 * UNREGISTER_BUFFERS. Semantics: kernel io_uring/rsrc.c (6.18).
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
