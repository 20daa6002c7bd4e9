/* SPDX-License-Identifier: MIT */
/*
 * The ring's wait queue (waitq.c): the threads sleeping in
 * io_uring_enter(GETEVENTS), each on an eventfd of its own, and the wake-up
 * that a CQ post sends them. Who waits and how long is wait.c's business.
 */
#ifndef NW_WAITQ_H
#define NW_WAITQ_H

struct nw_ring;

struct nw_waiter {
	int fd; /* written once per wake-up */
	struct nw_waiter *next, **pprev;
};

/*
 * Put w (this thread's) on the ring's queue, then announce it in
 * ring->waiters (seq_cst), before the caller re-checks the CQ tail.
 */
void nw_waiter_add(struct nw_ring *ring, struct nw_waiter *w);
void nw_waiter_del(struct nw_ring *ring, struct nw_waiter *w);
/* This thread's own wake eventfd (made once, high): fd or -1 (errno). */
int nw_waiter_thread_fd(void);
/* Wake every waiter of the ring but the caller (after a CQ tail publish). */
void nw_wake_waiters(struct nw_ring *ring);

#endif
