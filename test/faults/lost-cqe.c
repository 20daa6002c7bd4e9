/* SPDX-License-Identifier: MIT */
/*
 * Run by make faults (tools/faults.sh) with allocations failing: every
 * accepted request is accounted for the kernel's way. NOPs past a small
 * CQ (the overflow list's entries are allocated) and MSG_RING messages to
 * a second small ring (the target's CQE is allocated off its submit side):
 * each SQE either failed at submit (-ENOMEM, enter's count short), or
 * gave its CQE, or was dropped and counted in cq_overflow, which the next
 * GETEVENTS wait that sleeps reports once with -EBADR (IO_CHECK_CQ_DROPPED); a MSG_RING
 * whose message could not be posted gets -ENOMEM itself. Nothing else.
 * With nothing failing, everything arrives. Semantics: io_uring.c
 * io_cqring_event_overflow, io_cqring_wait; msg_ring.c io_msg_data_remote.
 */
#include <unistd.h>
#include "helpers.h"

#define N 64

/*
 * Reap r's CQEs, flushing its backlog: how many. Then a wait that must
 * sleep (nothing is left): -EBADR once if CQEs were dropped, else -ETIME.
 */
static unsigned int reap_all(struct t_ring *r, bool *badr)
{
	struct io_uring_cqe cqe;
	unsigned int n = 0;
	int ret;

	for (int round = 0; round < 4 * N; round++) {
		while (!t_peek_cqe(r, &cqe))
			n++;
		ret = t_enter(r->fd, 0, 0, IORING_ENTER_GETEVENTS, NULL, 0);
		T_ASSERT_EQ(ret, 0);
		if (!t_cq_ready(r) && !(*r->sq_flags & IORING_SQ_CQ_OVERFLOW))
			break;
	}
	ret = t_wait_cqe_timeout(r, &cqe, 1);
	*badr = ret == -EBADR;
	if (!*badr)
		T_ASSERT_EQ(ret, -ETIME);
	else
		T_ASSERT_EQ(t_wait_cqe_timeout(r, &cqe, 1), -ETIME); /* once */
	return n;
}

/* Submit what is queued: the count accepted (a short count: -ENOMEM). */
static unsigned int submit_some(struct t_ring *r, unsigned int want)
{
	unsigned int done = 0;

	for (int i = 0; i < 4 * N && done < want; i++) {
		int ret = t_enter(r->fd, want - done, 0, 0, NULL, 0);

		if (ret == -ENOMEM || ret == -EAGAIN)
			continue;
		T_ASSERT_GT(ret, 0);
		done += (unsigned int)ret;
	}
	return done;
}

/* N NOPs one at a time into a ring of 8 CQEs, nothing reaped till the end. */
static void nop_overflow(void)
{
	struct t_ring r;
	unsigned int accepted = 0, got;
	bool badr = false;

	if (t_ring_init(&r, 4, NULL))
		return;
	for (unsigned int i = 0; i < N; i++) {
		t_prep_nop(t_get_sqe(&r), i);
		t_ring_flush(&r);
		accepted += submit_some(&r, 1);
	}
	got = reap_all(&r, &badr);
	T_ASSERT_EQ(got + *r.cq_overflow, accepted);
	T_ASSERT_EQ(badr, *r.cq_overflow > 0);
	t_ring_exit(&r);
}

/* N messages from a to a small b: each lands, is counted, or fails. */
static void msg_overflow(void)
{
	struct t_ring a, b;
	unsigned int accepted = 0, failed = 0, ok = 0, got;
	struct io_uring_cqe cqe;
	bool badr = false;

	if (t_ring_init(&a, 8, NULL))
		return;
	if (t_ring_init(&b, 2, NULL)) {
		t_ring_exit(&a);
		return;
	}
	for (unsigned int i = 0; i < N; i++) {
		struct io_uring_sqe *sqe = t_get_sqe(&a);

		sqe->opcode = IORING_OP_MSG_RING;
		sqe->fd = b.fd;
		sqe->addr = IORING_MSG_DATA;
		sqe->off = 1000 + i;
		sqe->user_data = i;
		t_ring_flush(&a);
		if (!submit_some(&a, 1))
			continue;
		accepted++;
		T_ASSERT_EQ(t_wait_cqe(&a, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, i);
		if (cqe.res == -ENOMEM) {
			failed++;
			continue;
		}
		T_ASSERT_EQ(cqe.res, 0);
		ok++;
	}
	T_ASSERT_EQ(ok + failed, accepted);
	got = reap_all(&b, &badr);
	T_ASSERT_EQ(got + *b.cq_overflow, ok);
	T_ASSERT_EQ(badr, *b.cq_overflow > 0);
	t_ring_exit(&a);
	t_ring_exit(&b);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	nop_overflow();
	msg_overflow();
	return T_EXIT_PASS;
}
