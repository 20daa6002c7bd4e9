/* SPDX-License-Identifier: MIT */
/* Memory a registered buffer may cover, and its RLIMIT_MEMLOCK (pin.c). */
#ifndef NW_PIN_H
#define NW_PIN_H

#include "internal.h"

/* One register call's look at the address space (a /proc/self/maps fd). */
struct nw_pin_ctx {
	int maps_fd;		   /* -1: not opened yet, -2: unusable */
	uint64_t ok_start, ok_end; /* the last range found fine */
	int acct_mode; /* 0: not asked yet, 1: not counted, 2: counted */
};

void nw_pin_begin(struct nw_pin_ctx *ctx);
void nw_pin_end(struct nw_pin_ctx *ctx);
/*
 * Would pin_user_pages(FOLL_WRITE | FOLL_LONGTERM) take [addr, addr+len)?
 * 0, or -EFAULT (a hole, a page not writable, a shared writable mapping
 * of a file that needs dirty tracking).
 */
int nw_pin_check(struct nw_pin_ctx *ctx, uint64_t addr, uint64_t len);
/*
 * Count the pages of [addr, addr+len) against RLIMIT_MEMLOCK for ring,
 * as io_account_mem does without CAP_IPC_LOCK: *acct gets what to give
 * back (0 when nothing was counted). 0 or -ENOMEM.
 */
int nw_pin_account(struct nw_pin_ctx *ctx, struct nw_ring *ring, uint64_t addr,
		   uint64_t len, unsigned long *acct);
/* Give back pages counted by nw_pin_account. */
void nw_pin_unaccount(unsigned long acct);

#endif
