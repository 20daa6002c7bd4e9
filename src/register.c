/* SPDX-License-Identifier: MIT */
/*
 * io_uring_register(2): a small table of register opcodes, each with its
 * handler. Opcodes without a handler get -EINVAL, as on a kernel that
 * predates them. Runs on the calling thread, under the ring's reg_lock.
 * Semantics: kernel io_uring/register.c, eventfd.c, and the probe.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "complete.h"
#include "fdhigh.h"
#include "opdef.h"
#include "reactor.h"
#include "ringmem.h"
#include "rsrc.h"
#include "cancel.h"
#include "poll.h"
#include "sqpoll.h"
#include "creds.h"
#include "kbuf.h"
#include "regwq.h"
#include "tctx.h"
#include "iowq.h"

#define NW_PROBE_MAX_OPS 256

struct nw_regdef {
	const char *name;
	int (*handler)(struct nw_ring *ring, void *arg, unsigned int nr_args);
};

/* IORING_REGISTER_PROBE: answered from the opcode table. */
static int reg_probe(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	struct {
		struct io_uring_probe hdr;
		struct io_uring_probe_op ops[NW_PROBE_MAX_OPS];
	} probe;
	size_t size;

	if (!arg || nr_args > NW_PROBE_MAX_OPS)
		return -EINVAL;
	if (nr_args > NW_OP_LAST)
		nr_args = NW_OP_LAST;
	size = sizeof(probe.hdr) + nr_args * sizeof(probe.ops[0]);
	if (nw_copy_from_user(&probe, arg, size))
		return -EFAULT;
	for (size_t i = 0; i < size; i++)
		if (((unsigned char *)&probe)[i])
			return -EINVAL;
	probe.hdr.last_op = NW_OP_LAST - 1;
	probe.hdr.ops_len = nr_args;
	for (unsigned int i = 0; i < nr_args; i++) {
		probe.ops[i].op = i;
		if (nw_op_supported(i))
			probe.ops[i].flags = IO_URING_OP_SUPPORTED;
	}
	return nw_copy_to_user(arg, &probe, size) ? -EFAULT : 0;
}

/* True if fd is an eventfd (the kernel's eventfd_ctx_fdget check). */
static bool is_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return strcmp(target, "anon_inode:[eventfd]") == 0;
}

static int eventfd_register(struct nw_ring *ring, void *arg,
			    unsigned int nr_args, bool async)
{
	int fd, own;

	if (nr_args != 1)
		return -EINVAL;
	if (ring->evfd >= 0)
		return -EBUSY;
	if (nw_copy_from_user(&fd, arg, sizeof(fd)))
		return -EFAULT;
	/* The ring keeps its own reference, as the kernel does. */
	own = nw_fd_dup_high(fd);
	if (own < 0)
		return -EBADF;
	if (!is_eventfd(own)) {
		close(own);
		return -EINVAL;
	}
	nw_submit_lock(ring);
	ring->evfd_async = async;
	ring->evfd_last_tail = ring->cached_cq_tail;
	WRITE_ONCE(ring->evfd_user, fd);
	WRITE_ONCE(ring->evfd, own);
	nw_submit_unlock(ring);
	/* DEFER_TASKRUN: readiness of what is parked must now signal it. */
	if (ring->lockless_cq) {
		nw_poll_watch_lazy(ring);
		nw_reactor_ensure(ring);
	}
	return 0;
}

static int reg_eventfd(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	return eventfd_register(ring, arg, nr_args, false);
}

static int reg_eventfd_async(struct nw_ring *ring, void *arg,
			     unsigned int nr_args)
{
	return eventfd_register(ring, arg, nr_args, true);
}

static int reg_unregister_eventfd(struct nw_ring *ring, void *arg,
				  unsigned int nr_args)
{
	int fd;

	if (arg || nr_args)
		return -EINVAL;
	nw_submit_lock(ring);
	fd = ring->evfd;
	WRITE_ONCE(ring->evfd, -1);
	WRITE_ONCE(ring->evfd_user, -1);
	nw_submit_unlock(ring);
	if (fd < 0)
		return -ENXIO;
	close(fd);
	return 0;
}

/* Set the bits one restriction entry asks for; -EINVAL for a bad one. */
static int restrict_one(struct nw_ring *ring,
			const struct io_uring_restriction *res)
{
	switch (res->opcode) {
	case IORING_RESTRICTION_REGISTER_OP:
		if (res->register_op >= NW_REGISTER_LAST)
			return -EINVAL;
		ring->restrict_reg_ops |= 1ULL << res->register_op;
		return 0;
	case IORING_RESTRICTION_SQE_OP:
		if (res->sqe_op >= NW_KERNEL_OP_LAST)
			return -EINVAL;
		ring->restrict_sqe_ops[res->sqe_op / 64] |=
			1ULL << (res->sqe_op % 64);
		return 0;
	case IORING_RESTRICTION_SQE_FLAGS_ALLOWED:
		ring->restrict_flags_allowed = res->sqe_flags;
		return 0;
	case IORING_RESTRICTION_SQE_FLAGS_REQUIRED:
		ring->restrict_flags_required = res->sqe_flags;
		return 0;
	}
	return -EINVAL;
}

static void restrict_reset(struct nw_ring *ring)
{
	ring->restrict_reg_ops = 0;
	memset(ring->restrict_sqe_ops, 0, sizeof(ring->restrict_sqe_ops));
	ring->restrict_flags_allowed = ring->restrict_flags_required = 0;
}

#define NW_MAX_RESTRICTIONS \
	(IORING_RESTRICTION_LAST + NW_REGISTER_LAST + NW_KERNEL_OP_LAST)

/*
 * IORING_REGISTER_RESTRICTIONS: only while R_DISABLED, and once. All the
 * entries are copied before any is looked at (a fault is -EFAULT); a bad
 * one undoes the others.
 */
static int reg_restrictions(struct nw_ring *ring, void *arg,
			    unsigned int nr_args)
{
	struct io_uring_restriction res[NW_MAX_RESTRICTIONS];
	int ret = 0;

	if (!ring->disabled)
		return -EBADFD;
	if (ring->restrict_registered)
		return -EBUSY;
	if (!arg || nr_args > NW_MAX_RESTRICTIONS)
		return -EINVAL;
	if (nw_copy_from_user(res, arg, nr_args * sizeof(res[0])))
		return -EFAULT;
	for (unsigned int i = 0; i < nr_args && !ret; i++)
		ret = restrict_one(ring, &res[i]);
	if (ret)
		restrict_reset(ring);
	else
		ring->restrict_registered = true;
	return ret;
}

/* IORING_REGISTER_ENABLE_RINGS: start an R_DISABLED ring. */
static int reg_enable_rings(struct nw_ring *ring, void *arg,
			    unsigned int nr_args)
{
	if (arg || nr_args)
		return -EINVAL;
	if (!ring->disabled)
		return -EBADFD;
	if (ring->single_issuer && !ring->submitter_tid)
		ring->submitter_tid = nw_gettid();
	/* Before the ring is enabled: its first SQE sees it. */
	if (ring->restrict_registered)
		WRITE_ONCE(ring->restricted, true);
	/* Release: a submitter that sees it enabled sees the above. */
	__atomic_store_n(&ring->disabled, false, __ATOMIC_RELEASE);
	nw_sqpoll_wake(ring); /* a sleeping SQPOLL poller looks again */
	return 0;
}

/*
 * IORING_REGISTER_RESIZE_RINGS (io_register_resize_rings), DEFER_TASKRUN
 * rings only: a struct io_uring_params with the new sizes (CQSIZE and
 * CLAMP the only flags, the ring's own layout flags inherited), sized as
 * setup sizes, written back with the new offsets before the entries move.
 */
#define NW_RESIZE_FLAGS (IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP)
#define NW_RESIZE_COPY                                                        \
	(IORING_SETUP_NO_SQARRAY | IORING_SETUP_SQE128 | IORING_SETUP_CQE32 | \
	 IORING_SETUP_NO_MMAP)

static int reg_resize_rings(struct nw_ring *ring, void *arg,
			    unsigned int nr_args)
{
	struct io_uring_params p;
	int ret;

	if (!arg || nr_args != 1)
		return -EINVAL;
	if (!(ring->flags & IORING_SETUP_DEFER_TASKRUN))
		return -EINVAL;
	if (nw_copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	if (p.flags & ~NW_RESIZE_FLAGS)
		return -EINVAL;
	p.flags |= ring->flags & NW_RESIZE_COPY;
	ret = nw_setup_size_rings(p.sq_entries, &p);
	if (ret)
		return ret;
	if (ring->flags & IORING_SETUP_NO_MMAP)
		return -EINVAL; /* not done: program memory (ringmem.c) */
	ret = nw_ringmem_resize(ring, &p); /* p.features stays the caller's */
	if (ret == -EINVAL || ret == -ENOMEM)
		return ret;
	/* The kernel writes the params back before it tries the copy. */
	if (nw_copy_to_user(arg, &p, sizeof(p)))
		return -EFAULT;
	return ret;
}

/* IORING_REGISTER_CLOCK: the clock of IORING_ENTER_ABS_TIMER waits. */
static int reg_clock(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	struct nw_clock_register reg;

	if (!arg || nr_args)
		return -EINVAL;
	if (nw_copy_from_user(&reg, arg, sizeof(reg)))
		return -EFAULT;
	if (reg.resv[0] || reg.resv[1] || reg.resv[2])
		return -EINVAL;
	if (reg.clockid != CLOCK_MONOTONIC && reg.clockid != CLOCK_BOOTTIME)
		return -EINVAL;
	WRITE_ONCE(ring->clockid, (int)reg.clockid);
	return 0;
}

/*
 * IORING_REGISTER_PBUF_RING: the window IOU_PBUF_RING_MMAP's rings live in
 * is the ring memory's (ringmem.c), made before kbuf.c looks for it.
 */
static int reg_pbuf_ring(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	nw_ringmem_pbuf_window(ring); /* without it, MMAP gets -ENOMEM */
	return nw_kbuf_register_ring(ring, arg, nr_args);
}

/* clang-format off */
static const struct nw_regdef nw_regdefs[NW_REGISTER_LAST] = {
	[IORING_REGISTER_BUFFERS]	= { "BUFFERS", nw_rsrc_register_buffers },
	[IORING_UNREGISTER_BUFFERS]	= { "UNREGISTER_BUFFERS",
					    nw_rsrc_unregister_buffers },
	[IORING_REGISTER_FILES]		= { "FILES", nw_rsrc_register_files },
	[IORING_UNREGISTER_FILES]	= { "UNREGISTER_FILES",
					    nw_rsrc_unregister_files },
	[IORING_REGISTER_FILES_UPDATE]	= { "FILES_UPDATE",
					    nw_rsrc_update_files },
	[IORING_REGISTER_EVENTFD]	= { "EVENTFD", reg_eventfd },
	[IORING_UNREGISTER_EVENTFD]	= { "UNREGISTER_EVENTFD",
					    reg_unregister_eventfd },
	[IORING_REGISTER_EVENTFD_ASYNC]	= { "EVENTFD_ASYNC", reg_eventfd_async },
	[IORING_REGISTER_PROBE]		= { "PROBE", reg_probe },
	[IORING_REGISTER_PERSONALITY]	= { "PERSONALITY", nw_creds_register },
	[IORING_UNREGISTER_PERSONALITY]	= { "UNREGISTER_PERSONALITY",
					    nw_creds_unregister },
	[IORING_REGISTER_RESTRICTIONS]	= { "RESTRICTIONS", reg_restrictions },
	[IORING_REGISTER_ENABLE_RINGS]	= { "ENABLE_RINGS", reg_enable_rings },
	[IORING_REGISTER_SYNC_CANCEL]	= { "SYNC_CANCEL", nw_sync_cancel },
	[IORING_REGISTER_RING_FDS]	= { "RING_FDS", nw_ringfd_register },
	[IORING_UNREGISTER_RING_FDS]	= { "UNREGISTER_RING_FDS",
					    nw_ringfd_unregister },
	[IORING_REGISTER_PBUF_RING]	= { "PBUF_RING", reg_pbuf_ring },
	[IORING_UNREGISTER_PBUF_RING]	= { "UNREGISTER_PBUF_RING",
					    nw_kbuf_unregister_ring },
	[IORING_REGISTER_FILES2]	= { "FILES2", nw_rsrc_register_files2 },
	[IORING_REGISTER_FILES_UPDATE2]	= { "FILES_UPDATE2",
					    nw_rsrc_update_files2 },
	[IORING_REGISTER_BUFFERS2]	= { "BUFFERS2",
					    nw_rsrc_register_buffers2 },
	[IORING_REGISTER_BUFFERS_UPDATE] = { "BUFFERS_UPDATE",
					     nw_rsrc_update_buffers },
	[IORING_REGISTER_FILE_ALLOC_RANGE] = { "FILE_ALLOC_RANGE",
					       nw_rsrc_file_alloc_range },
	[IORING_REGISTER_PBUF_STATUS]	= { "PBUF_STATUS", nw_kbuf_ring_status },
	[IORING_REGISTER_IOWQ_AFF]	= { "IOWQ_AFF", nw_reg_iowq_aff },
	[IORING_UNREGISTER_IOWQ_AFF]	= { "UNREGISTER_IOWQ_AFF",
					    nw_reg_unregister_iowq_aff },
	[IORING_REGISTER_IOWQ_MAX_WORKERS] = { "IOWQ_MAX_WORKERS",
					       nw_reg_iowq_max_workers },
	[IORING_REGISTER_NAPI]		= { "NAPI", nw_reg_napi },
	[IORING_UNREGISTER_NAPI]	= { "UNREGISTER_NAPI",
					    nw_reg_unregister_napi },
	[NW_REGISTER_RESIZE_RINGS]	= { "RESIZE_RINGS", reg_resize_rings },
	[IORING_REGISTER_CLOCK]		= { "CLOCK", reg_clock },
	[IORING_REGISTER_CLONE_BUFFERS]	= { "CLONE_BUFFERS",
					    nw_rsrc_clone_buffers },
	[IORING_REGISTER_QUERY]		= { "QUERY", nw_reg_query },
};
/* clang-format on */

const char *nw_register_name(unsigned int opcode)
{
	return opcode < NW_REGISTER_LAST ? nw_regdefs[opcode].name : NULL;
}

/* fd -1: the opcodes that need no ring (io_uring_register_blind). */
int nw_register_blind(unsigned int opcode, void *arg, unsigned int nr_args)
{
	if (opcode == IORING_REGISTER_QUERY)
		return nw_reg_query(NULL, arg, nr_args);
	return -EINVAL; /* SEND_MSG_RING is not built */
}

/*
 * Files registered: the program may wait on their other ends for the
 * ring's exit (liburing's ring-leak) with nothing in flight that makes the
 * reactor thread look whether the ring is gone. From now on it looks every
 * NW_EXIT_WATCH_S seconds (reactor.c). Not on DEFER_TASKRUN rings, whose
 * reactor thread runs only while readiness is observed, nor SQPOLL ones.
 */
static void reg_watch_exit(struct nw_ring *ring)
{
	int ret = -1;

	if (ring->lockless_cq || ring->sqd)
		return;
	__atomic_store_n(&ring->exit_watch, true, __ATOMIC_RELEASE);
	/*
	 * Not for a ring claimed for release meanwhile (its fd closed by
	 * another thread after the register): its loop, freed under
	 * poll_lock once torn is set, is not made again, nor its thread.
	 */
	pthread_mutex_lock(&ring->poll_lock);
	if (!__atomic_load_n(&ring->torn, __ATOMIC_ACQUIRE))
		ret = nw_loop_ensure(&ring->loop);
	pthread_mutex_unlock(&ring->poll_lock);
	if (!ret && !__atomic_load_n(&ring->torn, __ATOMIC_ACQUIRE))
		nw_reactor_ensure(ring);
}

int nw_register(struct nw_ring *ring, unsigned int opcode, void *arg,
		unsigned int nr_args)
{
	int ret;

	if (opcode >= NW_REGISTER_LAST)
		return -EINVAL;
	if (ring->single_issuer && ring->submitter_tid &&
	    ring->submitter_tid != nw_gettid())
		return -EEXIST;
	pthread_mutex_lock(&ring->reg_lock);
	/* Let go of and released meanwhile: its fd is gone (setup.c). */
	if (unlikely(ring->released))
		ret = -EBADF;
	/* A restricted ring's check comes before the opcode is known. */
	else if (ring->restricted && !(ring->restrict_reg_ops >> opcode & 1))
		ret = -EACCES;
	else if (!nw_regdefs[opcode].handler)
		ret = -EINVAL; /* not built: as on a kernel without it */
	else
		ret = nw_regdefs[opcode].handler(ring, arg, nr_args);
	pthread_mutex_unlock(&ring->reg_lock);
	if (ret >= 0 && (opcode == IORING_REGISTER_FILES ||
			 opcode == IORING_REGISTER_FILES2))
		reg_watch_exit(ring);
	return ret;
}
