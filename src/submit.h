/* SPDX-License-Identifier: MIT */
/*
 * Submission (submit.c): the SQ ring to requests, issued through the
 * opcode table. Called from the entry floor only (syscall.c, sqpoll.c):
 * lower files reach submit.c's functions through req->tw_func alone.
 */
#ifndef NW_SUBMIT_H
#define NW_SUBMIT_H

#include "internal.h"

/*
 * io_submit_sqes: submit up to nr SQEs. Returns the number consumed,
 * counting a request that failed init but not an invalid index; -EAGAIN
 * when no request could be allocated.
 */
int nw_submit_sqes(struct nw_ring *ring, unsigned int nr);

#endif
