/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_EPOLL_WAIT (6.15) against the kernel: events already ready
 * complete at once (at most maxevents of them); with none ready the
 * request waits, without a CQE, until one comes; an epoll set in a fixed
 * slot; ASYNC_CANCEL of a waiting one. Errors: reserved fields, a
 * non-epoll fd (-EINVAL), a bad fd, an unwritable events array with
 * events ready (-EFAULT); an error fails the link.
 * Semantics: io_uring/epoll.c io_epoll_wait_prep/io_epoll_wait.
 */
#include <sys/epoll.h>
#include <unistd.h>
#include "helpers.h"

static struct epoll_event evs[8];

static struct io_uring_sqe *prep_epwait(struct t_ring *r, int epfd,
					void *events, unsigned int max,
					uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = NW_OP_EPOLL_WAIT;
	sqe->fd = epfd;
	sqe->addr = (uintptr_t)events;
	sqe->len = max;
	sqe->user_data = ud;
	return sqe;
}

static void watch(int ep, int fd, uint64_t data)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = data};

	T_ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
}

static void ready_and_wait(void)
{
	struct t_ring r;
	int ep, a[2], b[2];
	char c;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(a), 0);
	T_ASSERT_EQ(pipe(b), 0);
	ep = epoll_create1(0);
	T_ASSERT_GE(ep, 0);
	watch(ep, a[0], 100);
	watch(ep, b[0], 200);
	/* Nothing ready: it waits. */
	memset(evs, 0, sizeof(evs));
	prep_epwait(&r, ep, evs, 8, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 50);
	T_ASSERT_EQ(write(b[1], "x", 1), 1);
	t_expect_cqe(&r, 1, 1);
	T_ASSERT_EQ(evs[0].data.u64, 200);
	T_ASSERT_EQ(evs[0].events, EPOLLIN);
	/* Two ready, room for one; then both. */
	T_ASSERT_EQ(write(a[1], "y", 1), 1);
	prep_epwait(&r, ep, evs, 1, 2);
	T_ASSERT_EQ(t_run(&r, 2), 1);
	prep_epwait(&r, ep, evs, 8, 3);
	T_ASSERT_EQ(t_run(&r, 3), 2);
	T_ASSERT_EQ(evs[0].data.u64 + evs[1].data.u64, 300);
	/* Errors. */
	prep_epwait(&r, ep, evs, 8, 4)->off = 1;
	T_ASSERT_EQ(t_run(&r, 4), -EINVAL);
	prep_epwait(&r, ep, evs, 8, 4)->rw_flags = 1;
	T_ASSERT_EQ(t_run(&r, 4), -EINVAL);
	prep_epwait(&r, a[0], evs, 8, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EINVAL);
	prep_epwait(&r, 1000, evs, 8, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EBADF);
	prep_epwait(&r, ep, (void *)8, 8, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EFAULT);
	/* A failure breaks the link. */
	prep_epwait(&r, a[0], evs, 8, 5)->flags = IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&r), 6);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 5, -EINVAL);
	t_expect_cqe(&r, 6, -ECANCELED);
	T_ASSERT_EQ(read(a[0], &c, 1), 1);
	T_ASSERT_EQ(read(b[0], &c, 1), 1);
	close(ep);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	t_ring_exit(&r);
}

static void fixed_and_cancel(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int ep, p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	ep = epoll_create1(0);
	T_ASSERT_GE(ep, 0);
	watch(ep, p[0], 7);
	T_ASSERT_EQ(t_reg_files2(&r, 1, &ep, NULL, 0), 0);
	prep_epwait(&r, 0, evs, 8, 10)->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	T_ASSERT_EQ(write(p[1], "z", 1), 1);
	t_expect_cqe(&r, 10, 1);
	T_ASSERT_EQ(evs[0].data.u64, 7);
	/* A waiting one cancelled: -ECANCELED, the cancel 0. */
	T_ASSERT_EQ(read(p[0], evs, 1), 1);
	prep_epwait(&r, ep, evs, 8, 11);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->fd = -1;
	sqe->addr = 11;
	sqe->user_data = 12;
	T_ASSERT_EQ(t_submit(&r), 1);
	{
		struct io_uring_cqe cqe;
		int seen = 0;

		for (int i = 0; i < 2; i++) {
			T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
			if (cqe.user_data == 11) {
				T_ASSERT_EQ(cqe.res, -ECANCELED);
				seen |= 1;
			} else {
				T_ASSERT_EQ(cqe.user_data, 12);
				T_ASSERT_EQ(cqe.res, 0);
				seen |= 2;
			}
		}
		T_ASSERT_EQ(seen, 3);
	}
	close(ep);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	ready_and_wait();
	fixed_and_cancel();
	return T_EXIT_PASS;
}
