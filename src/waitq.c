/* SPDX-License-Identifier: MIT */
/*
 * The wait queue: threads in GETEVENTS are listed on the ring under
 * wake_lock, each sleeping on its own eventfd, so a post wakes every
 * waiter and no wake-up is eaten by another waiter. A waiter announces
 * itself (ring->waiters, seq_cst) before it re-checks the tail; a poster
 * publishes the tail, then looks at ring->waiters (complete.c).
 */
#include <sys/eventfd.h>
#include "internal.h"
#include "fdhigh.h"
#include "waitq.h"

static __thread int thread_wake_fd = -1;
static __thread struct nw_waiter *thread_waiter; /* this thread's, if any */

void nw_wake_waiters(struct nw_ring *ring)
{
	pthread_mutex_lock(&ring->wake_lock);
	for (struct nw_waiter *w = ring->waiter_list; w; w = w->next)
		if (w != thread_waiter) /* a waiter that posts is awake */
			eventfd_write(w->fd, 1);
	pthread_mutex_unlock(&ring->wake_lock);
}

void nw_waiter_add(struct nw_ring *ring, struct nw_waiter *w)
{
	pthread_mutex_lock(&ring->wake_lock);
	w->next = ring->waiter_list;
	if (w->next)
		w->next->pprev = &w->next;
	w->pprev = &ring->waiter_list;
	ring->waiter_list = w;
	pthread_mutex_unlock(&ring->wake_lock);
	thread_waiter = w;
	/* Announce before re-checking the tail; cq_wake pairs with this. */
	__atomic_add_fetch(&ring->waiters, 1, __ATOMIC_SEQ_CST);
}

void nw_waiter_del(struct nw_ring *ring, struct nw_waiter *w)
{
	__atomic_sub_fetch(&ring->waiters, 1, __ATOMIC_SEQ_CST);
	thread_waiter = NULL;
	pthread_mutex_lock(&ring->wake_lock);
	*w->pprev = w->next;
	if (w->next)
		w->next->pprev = w->pprev;
	pthread_mutex_unlock(&ring->wake_lock);
}

int nw_waiter_thread_fd(void)
{
	if (thread_wake_fd < 0)
		thread_wake_fd =
			nw_fd_hide(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	return thread_wake_fd;
}
