/* SPDX-License-Identifier: MIT */
/*
 * An fd number that named a ring, then another file, then a ring again:
 * requests on it reach what it names each time. As a regular file its
 * WRITE lands in the file and FALLOCATE succeeds (nowait looks the
 * number up once, then no more: it no longer names a ring); as a ring's
 * fd again, FALLOCATE fails -ENODEV and a WRITE does not reach the ring
 * memory, as on the kernel's ring file (an anon inode).
 * Semantics: io_uring/io_uring.c (the ring file has poll and mmap only),
 * fs/open.c vfs_fallocate (-ENODEV for a file neither regular nor block).
 */
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include "helpers.h"

#define ROUNDS 8

static void ring_init(struct t_ring *r)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	T_ASSERT_EQ(t_ring_init(r, 8, &p), 0);
}

static int run_fallocate(struct t_ring *r, int fd, uint64_t len)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_FALLOCATE;
	sqe->fd = fd;
	sqe->addr = len; /* the length */
	sqe->len = 0;	 /* the mode */
	sqe->user_data = 2;
	return t_run(r, 2);
}

static int run_write(struct t_ring *r, int fd, const char *s, uint64_t off)
{
	t_prep_rw(t_get_sqe(r), IORING_OP_WRITE, fd, s, (unsigned int)strlen(s),
		  off, 1);
	return t_run(r, 1);
}

int main(void)
{
	char path[64], buf[16] = "";
	struct t_ring a, b, c;
	struct stat st;
	int num, file;

	t_require_engine();
	t_watchdog(30);
	ring_init(&b); /* the ring the requests go through */
	ring_init(&a);
	num = a.fd;
	t_ring_exit(&a); /* the number is free, and names no ring */

	snprintf(path, sizeof(path), "/tmp/nw-ringfd-reuse.%d", (int)getpid());
	file = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	T_ASSERT_GE(file, 0);
	unlink(path);
	if (file != num) {
		T_ASSERT_EQ(dup2(file, num), num);
		close(file);
	}
	/* A regular file now: each request reaches it, not the first only. */
	for (int i = 0; i < ROUNDS; i++) {
		T_ASSERT_EQ(run_write(&b, num, "ab", 2 * (uint64_t)i), 2);
		T_ASSERT_EQ(run_fallocate(&b, num, 64 + (uint64_t)i), 0);
	}
	T_ASSERT_EQ(fstat(num, &st), 0);
	T_ASSERT_EQ(st.st_size, 64 + ROUNDS - 1);
	T_ASSERT_EQ(pread(num, buf, 4, 0), 4);
	T_ASSERT_EQ(memcmp(buf, "abab", 4), 0);
	T_ASSERT_EQ(close(num), 0);

	/* A ring's fd again (the lowest free number): as the ring file. */
	ring_init(&c);
	T_ASSERT_EQ(c.fd, num);
	for (int i = 0; i < ROUNDS; i++)
		T_ASSERT_EQ(run_fallocate(&b, num, 4096), -ENODEV);
	t_ring_exit(&c);
	t_ring_exit(&b);
	return T_EXIT_PASS;
}
