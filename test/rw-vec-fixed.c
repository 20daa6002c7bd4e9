/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_READV_FIXED and WRITEV_FIXED (6.15) against the kernel: an
 * iovec array whose every entry lies in registered buffer buf_index,
 * written to and read back from a file at offsets, and a read parked on
 * an empty pipe; the errors: an iovec past the buffer's end or before it,
 * an empty or missing buffer slot, no buffers at all (-EFAULT), too many
 * iovecs (-EINVAL), IOSQE_BUFFER_SELECT (-EOPNOTSUPP); and the buffer's
 * tag only after the parked read that uses it.
 * Semantics: io_uring/rw.c io_prep_readv_fixed, rsrc.c io_import_reg_vec.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>
#include "helpers.h"

static char buf[8192] __attribute__((aligned(4096)));
static char path[64];

static struct io_uring_sqe *prep_vfixed(struct t_ring *r, int op, int fd,
					const struct iovec *iov,
					unsigned int nr, uint64_t off,
					unsigned int idx, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = (uint8_t)op;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)iov;
	sqe->len = nr;
	sqe->off = off;
	sqe->buf_index = (uint16_t)idx;
	sqe->user_data = ud;
	return sqe;
}

static void reg_bufs(struct t_ring *r, const uint64_t *tags)
{
	struct iovec iov[2] = {{buf, sizeof(buf)}, {NULL, 0}};
	struct io_uring_rsrc_register rr;

	memset(&rr, 0, sizeof(rr));
	rr.nr = 2;
	rr.data = (uintptr_t)iov;
	rr.tags = (uintptr_t)tags;
	T_ASSERT_EQ(
		t_register(r->fd, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)),
		0);
}

static void file_io(void)
{
	static const uint64_t tags[2] = {0, 0};
	struct iovec w[2] = {{buf + 10, 100}, {buf + 5000, 3000}};
	struct iovec rd[2] = {{buf + 200, 2000}, {buf + 4096, 1100}};
	struct iovec bad[2] = {{buf, 10}, {buf + 8000, 200}};
	struct iovec before, big[IOV_MAX + 1];
	static char ref[sizeof(buf)];
	struct t_ring r;
	int fd;

	before.iov_base = (void *)((uintptr_t)buf - 1);
	before.iov_len = 10;
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_vfixed(&r, NW_OP_WRITEV_FIXED, fd, w, 2, 0, 0, 1);
	T_ASSERT_EQ(t_run(&r, 1), -EFAULT); /* no buffers yet */
	reg_bufs(&r, tags);
	for (unsigned int i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 7);
	prep_vfixed(&r, NW_OP_WRITEV_FIXED, fd, w, 2, 4, 0, 2);
	T_ASSERT_EQ(t_run(&r, 2), 3100);
	memcpy(ref, buf, sizeof(buf));
	memset(buf + 200, 0, 2000);
	memset(buf + 4096, 0, 1100);
	prep_vfixed(&r, NW_OP_READV_FIXED, fd, rd, 2, 4, 0, 3);
	T_ASSERT_EQ(t_run(&r, 3), 3100);
	/* file bytes 0..99 are buf+10.., 100..3099 are buf+5000.. */
	T_ASSERT_EQ(memcmp(buf + 200, ref + 10, 100), 0);
	T_ASSERT_EQ(memcmp(buf + 300, ref + 5000, 1900), 0);
	T_ASSERT_EQ(memcmp(buf + 4096, ref + 6900, 1100), 0);
	/* errors */
	prep_vfixed(&r, NW_OP_READV_FIXED, fd, bad, 2, 0, 0, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EFAULT);
	prep_vfixed(&r, NW_OP_WRITEV_FIXED, fd, &before, 1, 0, 0, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EFAULT);
	prep_vfixed(&r, NW_OP_READV_FIXED, fd, rd, 2, 0, 1, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EFAULT); /* empty slot */
	prep_vfixed(&r, NW_OP_READV_FIXED, fd, rd, 2, 0, 2, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EFAULT); /* past the table */
	for (unsigned int i = 0; i <= IOV_MAX; i++)
		big[i] = (struct iovec){buf, 1};
	prep_vfixed(&r, NW_OP_READV_FIXED, fd, big, IOV_MAX + 1, 0, 0, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EINVAL);
	prep_vfixed(&r, NW_OP_READV_FIXED, fd, rd, 2, 0, 0, 4)->flags =
		IOSQE_BUFFER_SELECT;
	T_ASSERT_EQ(t_run(&r, 4), -EOPNOTSUPP);
	prep_vfixed(&r, NW_OP_READV_FIXED, 1000, rd, 2, 0, 0, 4);
	T_ASSERT_EQ(t_run(&r, 4), -EBADF);
	t_ring_exit(&r);
	close(fd);
	unlink(path);
}

/* A parked READV_FIXED keeps its buffer: the tag comes after its CQE. */
static void pipe_parked(void)
{
	static const uint64_t tags[2] = {90, 0};
	struct iovec rd[2] = {{buf, 2}, {buf + 4096, 2}};
	struct iovec empty = {NULL, 0};
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	reg_bufs(&r, tags);
	prep_vfixed(&r, NW_OP_READV_FIXED, p[0], rd, 2, (uint64_t)-1, 0, 1);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_BUFFERS_UPDATE, 0, 1,
				   &empty, NULL),
		    1);
	t_expect_no_cqe(&r, 30);
	T_ASSERT_EQ(write(p[1], "abcd", 4), 4);
	t_expect_cqe(&r, 1, 4);
	t_expect_cqe(&r, 90, 0);
	T_ASSERT_EQ(memcmp(buf, "ab", 2), 0);
	T_ASSERT_EQ(memcmp(buf + 4096, "cd", 2), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	snprintf(path, sizeof(path), "/var/tmp/nw-rwvfixed-%d", (int)getpid());
	file_io();
	pipe_parked();
	return T_EXIT_PASS;
}
