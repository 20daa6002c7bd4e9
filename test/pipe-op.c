/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_PIPE (6.16) and IORING_OP_FIXED_FD_INSTALL (6.8) against the
 * kernel: a pipe's two fds written back, with O_CLOEXEC and O_NONBLOCK;
 * into fixed slots (file_index and the next, or two allocated ones) whose
 * indexes are written back; then installed as normal fds, close-on-exec
 * unless IORING_FIXED_FD_NO_CLOEXEC. Errors: unknown pipe flags, fd/off
 * set, an unwritable fds array (-EFAULT, nothing left open), O_CLOEXEC
 * with a slot, no table, slots out of range (the first slot undone);
 * install without IOSQE_FIXED_FILE (-EBADF), unknown flags, an empty
 * slot.
 * Semantics: io_uring/openclose.c io_pipe*, io_install_fixed_fd*.
 */
#include <fcntl.h>
#include <unistd.h>
#include "helpers.h"

static struct io_uring_sqe *prep_pipe(struct t_ring *r, int *fds,
				      unsigned int flags, uint32_t file_index,
				      uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = NW_OP_PIPE;
	sqe->addr = (uintptr_t)fds;
	sqe->rw_flags = (int)flags;
	sqe->file_index = file_index;
	sqe->user_data = ud;
	return sqe;
}

static struct io_uring_sqe *prep_install(struct t_ring *r, int slot,
					 unsigned int flags, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = NW_OP_FIXED_FD_INSTALL;
	sqe->fd = slot;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->rw_flags = (int)flags;
	sqe->user_data = ud;
	return sqe;
}

/* fds[1] writes into fds[0]. */
static void check_pipe(int rfd, int wfd)
{
	char buf[4];

	T_ASSERT_EQ(write(wfd, "pipe", 4), 4);
	T_ASSERT_EQ(read(rfd, buf, 4), 4);
	T_ASSERT_EQ(memcmp(buf, "pipe", 4), 0);
}

/* The lowest free fd number now. */
static int lowest_free(void)
{
	int fd = dup(0);

	T_ASSERT_GE(fd, 0);
	close(fd);
	return fd;
}

static void plain(void)
{
	struct t_ring r;
	int fds[2] = {-1, -1}, low;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_pipe(&r, fds, 0, 0, 1);
	T_ASSERT_EQ(t_run(&r, 1), 0);
	T_ASSERT_GE(fds[0], 0);
	T_ASSERT_GE(fds[1], 0);
	T_ASSERT_EQ(fcntl(fds[0], F_GETFD), 0);
	T_ASSERT_EQ(fcntl(fds[0], F_GETFL) & O_NONBLOCK, 0);
	check_pipe(fds[0], fds[1]);
	close(fds[0]);
	close(fds[1]);
	prep_pipe(&r, fds, O_CLOEXEC | O_NONBLOCK, 0, 2);
	T_ASSERT_EQ(t_run(&r, 2), 0);
	T_ASSERT_EQ(fcntl(fds[1], F_GETFD), FD_CLOEXEC);
	T_ASSERT_NE(fcntl(fds[0], F_GETFL) & O_NONBLOCK, 0);
	T_ASSERT_EQ(read(fds[0], &low, 1), -1);
	T_ASSERT_EQ(errno, EAGAIN);
	close(fds[0]);
	close(fds[1]);
	/* prep's checks */
	prep_pipe(&r, fds, O_APPEND, 0, 3);
	T_ASSERT_EQ(t_run(&r, 3), -EINVAL);
	prep_pipe(&r, fds, 0, 0, 3)->fd = 1;
	T_ASSERT_EQ(t_run(&r, 3), -EINVAL);
	prep_pipe(&r, fds, 0, 0, 3)->off = 1;
	T_ASSERT_EQ(t_run(&r, 3), -EINVAL);
	/* -EFAULT leaves no fd behind. */
	low = lowest_free();
	prep_pipe(&r, (int *)8, 0, 0, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EFAULT);
	T_ASSERT_EQ(lowest_free(), low);
	/* Slots without a table. */
	prep_pipe(&r, fds, 0, 1, 5);
	T_ASSERT_EQ(t_run(&r, 5), -ENXIO);
	prep_pipe(&r, fds, 0, IORING_FILE_INDEX_ALLOC, 5);
	T_ASSERT_EQ(t_run(&r, 5), -ENFILE);
	t_ring_exit(&r);
}

static void fixed(void)
{
	struct t_ring r;
	int fds[2], rfd, wfd, low;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(
		t_reg_files2(&r, 4, NULL, NULL, IORING_RSRC_REGISTER_SPARSE),
		0);
	/* Slots 1 and 2 (file_index 2). */
	fds[0] = fds[1] = -1;
	prep_pipe(&r, fds, 0, 2, 10);
	T_ASSERT_EQ(t_run(&r, 10), 0);
	T_ASSERT_EQ(fds[0], 1);
	T_ASSERT_EQ(fds[1], 2);
	/* Installed: close-on-exec by default, not with NO_CLOEXEC. */
	prep_install(&r, 1, 0, 11);
	rfd = t_run(&r, 11);
	T_ASSERT_GE(rfd, 0);
	T_ASSERT_EQ(fcntl(rfd, F_GETFD), FD_CLOEXEC);
	low = lowest_free();
	prep_install(&r, 2, IORING_FIXED_FD_NO_CLOEXEC, 12);
	wfd = t_run(&r, 12);
	T_ASSERT_EQ(wfd, low);
	T_ASSERT_EQ(fcntl(wfd, F_GETFD), 0);
	check_pipe(rfd, wfd);
	close(rfd);
	close(wfd);
	/* install's checks */
	prep_install(&r, 1, 0, 13)->flags = 0;
	T_ASSERT_EQ(t_run(&r, 13), -EBADF);
	prep_install(&r, 1, 2, 13);
	T_ASSERT_EQ(t_run(&r, 13), -EINVAL);
	prep_install(&r, 1, 0, 13)->off = 1;
	T_ASSERT_EQ(t_run(&r, 13), -EINVAL);
	prep_install(&r, 0, 0, 13);
	T_ASSERT_EQ(t_run(&r, 13), -EBADF);
	/* Allocated slots: the free ones, 0 and 3. */
	prep_pipe(&r, fds, 0, IORING_FILE_INDEX_ALLOC, 14);
	T_ASSERT_EQ(t_run(&r, 14), 0);
	T_ASSERT_EQ(fds[0], 3);
	T_ASSERT_EQ(fds[1], 0);
	/* The table is full now. */
	prep_pipe(&r, fds, 0, IORING_FILE_INDEX_ALLOC, 15);
	T_ASSERT_EQ(t_run(&r, 15), -ENFILE);
	/* O_CLOEXEC with a slot; a write end past the table undoes the read. */
	prep_pipe(&r, fds, O_CLOEXEC, 1, 16);
	T_ASSERT_EQ(t_run(&r, 16), -EINVAL);
	prep_pipe(&r, fds, 0, 4, 17);
	T_ASSERT_EQ(t_run(&r, 17), -EINVAL);
	prep_install(&r, 3, 0, 18);
	T_ASSERT_EQ(t_run(&r, 18), -EBADF);
	prep_pipe(&r, fds, 0, 5, 19);
	T_ASSERT_EQ(t_run(&r, 19), -EINVAL);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	plain();
	fixed();
	return T_EXIT_PASS;
}
