/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_NOP: posts a completion and does nothing else. The template for
 * every op family file: a private struct over the request's cmd area, a
 * prep that rejects what the kernel rejects, an issue that sets the result.
 * Semantics: kernel io_uring/nop.c (6.18): nop_flags may inject a result,
 * name a file that must exist, and fill the extra words of a CQE32.
 */
#include <errno.h>
#include <fcntl.h>
#include "nop.h"
#include "complete.h"
#include "rsrc.h"

struct nw_nop {
	unsigned int flags;
	int result;
	int fd;
	unsigned int buf_index;
	uint64_t extra1, extra2;
};
_Static_assert(sizeof(struct nw_nop) <= NW_REQ_CMD_SIZE, "nw_nop too big");

#define NOP_FLAGS                                                             \
	(IORING_NOP_INJECT_RESULT | IORING_NOP_FILE | IORING_NOP_FIXED_FILE | \
	 IORING_NOP_FIXED_BUFFER | IORING_NOP_TW | IORING_NOP_CQE32)

int nw_nop_prep(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_nop *nop = nw_req_cmd(req, struct nw_nop);
	unsigned int flags = READ_ONCE(sqe->rw_flags);

	nop->flags = flags;
	if (likely(!flags))
		return 0;
	if (flags & ~NOP_FLAGS)
		return -EINVAL;
	nop->result = (flags & IORING_NOP_INJECT_RESULT)
			      ? (int)READ_ONCE(sqe->len)
			      : 0;
	nop->fd = (flags & IORING_NOP_FILE) ? READ_ONCE(sqe->fd) : -1;
	nop->buf_index = READ_ONCE(sqe->buf_index);
	if (flags & IORING_NOP_CQE32) {
		if (!(req->ring->flags &
		      (IORING_SETUP_CQE32 | IORING_SETUP_CQE_MIXED)))
			return -EINVAL;
		nop->extra1 = READ_ONCE(sqe->off);
		nop->extra2 = READ_ONCE(sqe->addr);
	}
	return 0;
}

/*
 * IORING_NOP_FILE: the file must exist, looked up in the fixed table with
 * IORING_NOP_FIXED_FILE or IOSQE_FIXED_FILE, as in the kernel.
 */
static int nop_file(struct nw_req *req, const struct nw_nop *nop)
{
	struct nw_rsrc_node *node;
	int fd;

	if (!(nop->flags & IORING_NOP_FIXED_FILE) &&
	    !(req->sqe_flags & IOSQE_FIXED_FILE))
		return fcntl(nop->fd, F_GETFD) < 0 ? -EBADF : 0;
	if (nop->fd < 0)
		return -EBADF;
	node = nw_rsrc_node_get(req->ring, (unsigned int)nop->fd, &fd);
	if (!node)
		return -EBADF;
	/* req may live on the stack (submit_fast): no tag deferred to it. */
	nw_rsrc_node_put(req->ring, node, NULL);
	return 0;
}

/* The uncommon NOP: a file to check, a buffer to check, a result to inject. */
static __attribute__((noinline, cold)) int nop_issue_flags(struct nw_req *req,
							   struct nw_nop *nop)
{
	int ret = 0;

	if (nop->flags & IORING_NOP_FILE)
		ret = nop_file(req, nop);
	/* IORING_NOP_FIXED_BUFFER: sqe->buf_index must name a buffer. */
	if (!ret && (nop->flags & IORING_NOP_FIXED_BUFFER) &&
	    !nw_rsrc_buffer_exists(req->ring, nop->buf_index))
		ret = -EFAULT;
	if (!ret)
		ret = nop->result;
	if (ret < 0)
		nw_req_set_fail(req, ret);
	req->res = ret;
	if (nop->flags & IORING_NOP_CQE32) {
		req->big[0] = nop->extra1;
		req->big[1] = nop->extra2;
		if (req->ring->cqe_mixed)
			req->cflags |= IORING_CQE_F_32;
	}
	return NW_COMPLETE;
}

int nw_nop_issue(struct nw_req *req, unsigned int issue_flags)
{
	struct nw_nop *nop = nw_req_cmd(req, struct nw_nop);

	if (unlikely(nop->flags))
		return nop_issue_flags(req, nop);
	req->res = 0;
	return NW_COMPLETE;
}
