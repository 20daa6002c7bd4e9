/* SPDX-License-Identifier: MIT */
/*
 * Spin-before-sleep policy for waits in enter (spin.c): how long a waiter
 * should busy-wait before it sleeps, learnt per ring.
 */
#ifndef NW_SPIN_H
#define NW_SPIN_H

#include <stdbool.h>

struct nw_spin {
	bool adaptive;
	long long fixed_ns; /* NOWAIT_SPIN_US=N: spin at most this long */
	/* Adaptive state, relaxed atomics: several waiters may update it. */
	long long avg_wait_ns; /* EWMA of how long satisfied waits took */
	int hit_rate;	      /* EWMA of spins that ended in success, 0..1024 */
	unsigned int backoff; /* waits left without spinning */
	unsigned long spins, spin_hits; /* waits that spun; of them, hits */
};

/* Read NOWAIT_SPIN_US ("adaptive" by default, or microseconds). */
void nw_spin_init(struct nw_spin *s);
/* Nanoseconds to spin before this wait sleeps (0: sleep at once). */
long long nw_spin_budget(struct nw_spin *s);
/*
 * Learn from a finished wait: how long it took (satisfied waits only),
 * whether it spun, and whether the spin alone satisfied it.
 */
void nw_spin_learn(struct nw_spin *s, long long waited_ns, bool satisfied,
		   bool spun, bool spin_hit);

#endif
