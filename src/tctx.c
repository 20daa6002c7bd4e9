/* SPDX-License-Identifier: MIT */
/*
 * The calling thread's io_uring state, as the kernel keeps it per task in
 * current->io_uring (io_uring/tctx.c): whether the thread has used
 * io_uring at all, and its registered rings, NW_RINGFD_REG_MAX slots that
 * IORING_ENTER_REGISTERED_RING and IORING_REGISTER_USE_REGISTERED_RING
 * index instead of an fd. A task is a thread, so the table is
 * thread-local:
 * - a new thread starts without one (the kernel's copy_process clears
 *   p->io_uring), and so does a forked child: its copy of the forking
 *   thread's table is emptied and the copies of the slots' fds that it
 *   inherited are closed (pthread_atfork; a raw clone skips that);
 * - a thread that exits drops its slots (do_exit's io_uring_unreg_ringfd),
 *   through a thread-specific key's destructor;
 * - exec closes the slots' fds (FD_CLOEXEC), as it drops the kernel's.
 * A slot holds the ring and a copy of its own of the ring's fd, the file
 * reference the kernel's slot holds: the program may close its fd and the
 * ring stays (nw_ring_referenced sees the copy) until the slot goes.
 * Slots are read by their own thread only, without a lock; they are
 * written under tctx_lock so that a fork sees every table whole.
 */
#include <errno.h>
#include <unistd.h>
#include "tctx.h"
#include "fdhigh.h"

struct nw_tctx {
	struct nw_ring *rings[NW_RINGFD_REG_MAX]; /* NULL: a free slot */
	int fds[NW_RINGFD_REG_MAX];		  /* our copy of the ring fd */
	struct nw_tctx *next, **pprev;		  /* on tctx_list if listed */
	bool listed;
};

NW_TCTX_TLS bool nw_tctx_live;
static NW_TCTX_TLS struct nw_tctx tctx;

static pthread_mutex_t tctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nw_tctx *tctx_list; /* tables with slots, for fork */
static pthread_key_t tctx_key;	  /* its destructor: thread exit */
static pthread_once_t tctx_once = PTHREAD_ONCE_INIT;

/* Close and free every slot of t (under tctx_lock). */
static void slots_drop(struct nw_tctx *t)
{
	for (unsigned int i = 0; i < NW_RINGFD_REG_MAX; i++) {
		if (t->rings[i]) {
			close(t->fds[i]);
			t->rings[i] = NULL;
		}
	}
}

/* A thread exits: its table goes (the kernel's io_uring_unreg_ringfd). */
static void tctx_exit(void *arg)
{
	struct nw_tctx *t = arg;

	pthread_mutex_lock(&tctx_lock);
	slots_drop(t);
	if (t->listed) {
		*t->pprev = t->next;
		if (t->next)
			t->next->pprev = t->pprev;
		t->listed = false;
	}
	pthread_mutex_unlock(&tctx_lock);
}

static void tctx_prepare(void)
{
	pthread_mutex_lock(&tctx_lock);
}

static void tctx_parent(void)
{
	pthread_mutex_unlock(&tctx_lock);
}

/* The child is a new task: no io_uring state, no registered rings. */
static void tctx_child(void)
{
	struct nw_tctx *t, *next;

	for (t = tctx_list; t; t = next) {
		next = t->next;
		slots_drop(t);
		t->listed = false;
	}
	tctx_list = NULL;
	nw_tctx_live = false;
	pthread_setspecific(tctx_key, NULL);
	pthread_mutex_unlock(&tctx_lock);
}

static void tctx_init(void)
{
	NW_BUG_ON(pthread_key_create(&tctx_key, tctx_exit) != 0);
	pthread_atfork(tctx_prepare, tctx_parent, tctx_child);
}

void nw_tctx_add(void)
{
	pthread_once(&tctx_once, tctx_init);
	nw_tctx_live = true;
}

int nw_tctx_ring(unsigned int index, struct nw_ring **ringp)
{
	struct nw_ring *ring;

	if (unlikely(!nw_tctx_live || index >= NW_RINGFD_REG_MAX))
		return -EINVAL;
	ring = tctx.rings[index];
	if (unlikely(!ring))
		return -EBADF;
	*ringp = ring;
	return 0;
}

/* The first free slot in [start, end) gets ring and a copy of fd. */
static int slot_take(struct nw_ring *ring, int fd, unsigned int start,
		     unsigned int end)
{
	unsigned int i;
	int own;

	for (i = start; i < end && tctx.rings[i]; i++)
		;
	if (i == end)
		return -EBUSY;
	pthread_mutex_lock(&tctx_lock);
	own = nw_fd_dup_high(fd);
	if (own >= 0) {
		tctx.fds[i] = own;
		tctx.rings[i] = ring;
		if (!tctx.listed) {
			tctx.next = tctx_list;
			if (tctx_list)
				tctx_list->pprev = &tctx.next;
			tctx.pprev = &tctx_list;
			tctx_list = &tctx;
			tctx.listed = true;
			pthread_setspecific(tctx_key, &tctx);
		}
	}
	pthread_mutex_unlock(&tctx_lock);
	return own < 0 ? own : (int)i;
}

static void slot_drop(unsigned int i)
{
	pthread_mutex_lock(&tctx_lock);
	if (tctx.rings[i]) {
		close(tctx.fds[i]);
		tctx.rings[i] = NULL;
	}
	pthread_mutex_unlock(&tctx_lock);
}

int nw_tctx_install(struct nw_ring *ring, int fd)
{
	nw_tctx_add();
	return slot_take(ring, fd, 0, NW_RINGFD_REG_MAX);
}

/*
 * Entry i of a user array of io_uring_rsrc_update, by address arithmetic
 * on an integer: the array may be NULL or wild (-EFAULT from the copy),
 * where indexing a pointer would be undefined (UBSan, found by fuzzing).
 */
static struct io_uring_rsrc_update *uentry(void *arg, unsigned int i)
{
	return (void *)((uintptr_t)arg +
			i * sizeof(struct io_uring_rsrc_update));
}

/* One entry of RING_FDS: the slot's index, or -errno. */
static int register_one(struct io_uring_rsrc_update *uptr)
{
	struct io_uring_rsrc_update reg;
	unsigned int start = 0, end = NW_RINGFD_REG_MAX;
	struct nw_ring *target;
	int ret, fd;

	if (nw_copy_from_user(&reg, uptr, sizeof(reg)))
		return -EFAULT;
	if (reg.resv)
		return -EINVAL;
	if (reg.offset != -1U) {
		if (reg.offset >= NW_RINGFD_REG_MAX)
			return -EINVAL;
		start = reg.offset;
		end = start + 1;
	}
	/* The kernel's fget takes the low 32 bits of data as the fd. */
	fd = (int)reg.data;
	ret = nw_ring_lookup(fd, &target);
	if (ret)
		return ret;
	ret = slot_take(target, fd, start, end);
	if (ret < 0)
		return ret;
	reg.offset = (unsigned int)ret;
	if (nw_copy_to_user(uptr, &reg, sizeof(reg))) {
		slot_drop(reg.offset);
		return -EFAULT;
	}
	return ret;
}

/*
 * IORING_REGISTER_RING_FDS (io_ringfd_register): an array of
 * io_uring_rsrc_update, data = a ring fd (any ring, not only this one),
 * offset = the slot or -1U for the first free one, written back. Returns
 * how many were registered, or the first entry's error.
 */
int nw_ringfd_register(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	unsigned int i;
	int ret = 0;

	if (!nr_args || nr_args > NW_RINGFD_REG_MAX)
		return -EINVAL;
	nw_tctx_add();
	for (i = 0; i < nr_args; i++) {
		ret = register_one(uentry(arg, i));
		if (ret < 0)
			break;
	}
	return i ? (int)i : ret;
}

/*
 * IORING_UNREGISTER_RING_FDS (io_ringfd_unregister): the slots named by
 * offset (data and resv zero); an empty one is no error. Returns how many
 * were processed, or the first entry's error; 0 on a thread that never
 * used io_uring.
 */
int nw_ringfd_unregister(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	struct io_uring_rsrc_update reg;
	unsigned int i;
	int ret = 0;

	if (!nr_args || nr_args > NW_RINGFD_REG_MAX)
		return -EINVAL;
	if (!nw_tctx_live)
		return 0;
	for (i = 0; i < nr_args; i++) {
		if (nw_copy_from_user(&reg, uentry(arg, i), sizeof(reg))) {
			ret = -EFAULT;
			break;
		}
		if (reg.resv || reg.data || reg.offset >= NW_RINGFD_REG_MAX) {
			ret = -EINVAL;
			break;
		}
		slot_drop(reg.offset);
	}
	return i ? (int)i : ret;
}
