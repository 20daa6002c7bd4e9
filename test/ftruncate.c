/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_FTRUNCATE (6.9) against the kernel: grow and shrink a file,
 * on a plain fd and a fixed slot; the errors: reserved fields (-EINVAL at
 * prep), a negative length, a read-only fd, a pipe, a bad fd. An error of
 * the truncate itself only sets the result (a linked request still runs),
 * as the kernel's io_ftruncate does not fail the link.
 * Semantics: io_uring/truncate.c.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "helpers.h"

static char path[64];

static struct io_uring_sqe *prep_ftrunc(struct t_ring *r, int fd, uint64_t len,
					uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = NW_OP_FTRUNCATE;
	sqe->fd = fd;
	sqe->off = len;
	sqe->user_data = ud;
	return sqe;
}

static long long size_of(int fd)
{
	struct stat st;

	T_ASSERT_EQ(fstat(fd, &st), 0);
	return (long long)st.st_size;
}

int main(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int fd, ro, p[2];

	t_require_engine();
	t_watchdog(30);
	snprintf(path, sizeof(path), "/var/tmp/nw-ftrunc-%d", (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	T_ASSERT_GE(fd, 0);
	ro = open(path, O_RDONLY);
	T_ASSERT_GE(ro, 0);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_ftrunc(&r, fd, 12345, 1);
	T_ASSERT_EQ(t_run(&r, 1), 0);
	T_ASSERT_EQ(size_of(fd), 12345);
	prep_ftrunc(&r, fd, 7, 2);
	T_ASSERT_EQ(t_run(&r, 2), 0);
	T_ASSERT_EQ(size_of(fd), 7);
	/* prep's checks */
	prep_ftrunc(&r, fd, 1, 3)->len = 1;
	T_ASSERT_EQ(t_run(&r, 3), -EINVAL);
	prep_ftrunc(&r, fd, 1, 3)->addr = 1;
	T_ASSERT_EQ(t_run(&r, 3), -EINVAL);
	prep_ftrunc(&r, fd, 1, 3)->rw_flags = 1;
	T_ASSERT_EQ(t_run(&r, 3), -EINVAL);
	prep_ftrunc(&r, fd, 1, 3)->addr3 = 1;
	T_ASSERT_EQ(t_run(&r, 3), -EINVAL);
	/* the truncate's own errors */
	prep_ftrunc(&r, fd, (uint64_t)-1, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EINVAL);
	prep_ftrunc(&r, ro, 1, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EINVAL);
	prep_ftrunc(&r, p[0], 1, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EINVAL);
	prep_ftrunc(&r, 1000, 1, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EBADF);
	T_ASSERT_EQ(size_of(fd), 7);
	/* A failed truncate does not break its link. */
	sqe = prep_ftrunc(&r, ro, 1, 5);
	sqe->flags = IOSQE_IO_LINK;
	prep_ftrunc(&r, fd, 3, 6);
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 5, -EINVAL);
	t_expect_cqe(&r, 6, 0);
	T_ASSERT_EQ(size_of(fd), 3);
	/* A fixed slot. */
	T_ASSERT_EQ(t_reg_files2(&r, 1, &fd, NULL, 0), 0);
	prep_ftrunc(&r, 0, 4096, 7)->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_run(&r, 7), 0);
	T_ASSERT_EQ(size_of(fd), 4096);
	prep_ftrunc(&r, 1, 4096, 8)->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_run(&r, 8), -EBADF);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
	close(ro);
	close(fd);
	unlink(path);
	return T_EXIT_PASS;
}
