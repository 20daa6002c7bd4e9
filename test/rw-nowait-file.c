/* SPDX-License-Identifier: MIT */
/*
 * RWF_NOWAIT on regular files, where io_uring answers before any transfer
 * and the system call (which returns 0 for no bytes before it looks at its
 * flags) would not:
 * - a buffered write issued nonblocking to a filesystem without
 *   FOP_BUFFER_WASYNC (ext4) is -EAGAIN, final with RWF_NOWAIT, for any
 *   length and offset (io_write's ret_eagain, before rw_verify_area);
 *   pwritev2 says -EOPNOTSUPP there, and 0 for no bytes;
 * - IOSQE_ASYNC sends it to io-wq, which issues a file it cannot poll
 *   blocking, IOCB_NOWAIT cleared: the write is made;
 * - O_DIRECT writes and all reads take the system call's answer;
 * - a filesystem without FMODE_NOWAIT (tmpfs, procfs) refuses the flag in
 *   io_rw_init_file (-EOPNOTSUPP), a length of 0 included.
 * The kernel's part is asserted on ext4 only (other filesystems skip it).
 */
#include <fcntl.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include "helpers.h"

static struct io_uring_sqe *queue_rw(struct t_ring *r, int op, int fd,
				     const void *addr, unsigned int len,
				     uint64_t off, int rw_flags,
				     unsigned int sqe_flags)
{
	struct io_uring_sqe *sqe = t_queue_rw(r, op, fd, addr, len, off, 1);

	sqe->rw_flags = rw_flags;
	sqe->flags = (uint8_t)sqe_flags;
	return sqe;
}

/* One request: its res. */
static int rw_one(struct t_ring *r, int op, int fd, const void *addr,
		  unsigned int len, uint64_t off, int rw_flags,
		  unsigned int sqe_flags)
{
	queue_rw(r, op, fd, addr, len, off, rw_flags, sqe_flags);
	return t_run(r, 1);
}

/* A file of 8 'a's in dir, unlinked; -1 when dir cannot hold one. */
static int temp_file_in(const char *dir, unsigned long *fs_type)
{
	char path[128];
	struct statfs sf;
	int fd;

	snprintf(path, sizeof(path), "%s/nowait-rwf.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	T_ASSERT_EQ(unlink(path), 0);
	T_ASSERT_EQ(write(fd, "aaaaaaaa", 8), 8);
	T_ASSERT_EQ(fstatfs(fd, &sf), 0);
	*fs_type = (unsigned long)sf.f_type;
	return fd;
}

/* ext4, buffered: every write RWF_NOWAIT issues inline is -EAGAIN. */
static void test_buffered_write(struct t_ring *r, int fd)
{
	struct iovec none = {NULL, 0}, five = {(void *)"bbbbb", 5};
	char buf[16];

	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITE, fd, "b", 0, 0, RWF_NOWAIT, 0),
		    -EAGAIN);
	T_ASSERT_EQ(
		rw_one(r, IORING_OP_WRITE, fd, "bbbbb", 5, 0, RWF_NOWAIT, 0),
		-EAGAIN);
	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITEV, fd, &none, 0, 0, RWF_NOWAIT, 0),
		    -EAGAIN);
	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITEV, fd, &none, 1, 0, RWF_NOWAIT, 0),
		    -EAGAIN);
	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITEV, fd, &five, 1, 0, RWF_NOWAIT, 0),
		    -EAGAIN);
	/* The file position, and an offset rw_verify_area would refuse. */
	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITE, fd, "b", 0, (uint64_t)-1,
			   RWF_NOWAIT, 0),
		    -EAGAIN);
	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITE, fd, "b", 1, (uint64_t)-2,
			   RWF_NOWAIT, 0),
		    -EAGAIN);
	/* Nothing was written. */
	T_ASSERT_EQ(pread(fd, buf, sizeof(buf), 0), 8);
	T_ASSERT_EQ(memcmp(buf, "aaaaaaaa", 8), 0);
	/* Final: a link behind it is cancelled. */
	queue_rw(r, IORING_OP_WRITE, fd, "b", 0, 0, RWF_NOWAIT, IOSQE_IO_LINK);
	t_prep_nop(t_get_sqe(r), 2);
	T_ASSERT_EQ(t_submit_and_wait(r, 2), 2);
	T_ASSERT_EQ(t_expect_cqe(r, 1, -EAGAIN), 0);
	T_ASSERT_EQ(t_expect_cqe(r, 2, -ECANCELED), 0);
	/* Without RWF_NOWAIT (an O_NONBLOCK file too) it is made. */
	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITE, fd, "c", 0, 0, 0, 0), 0);
	T_ASSERT_EQ(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITE, fd, "c", 1, 0, 0, 0), 1);
	T_ASSERT_EQ(fcntl(fd, F_SETFL, 0), 0);
	/* IOSQE_ASYNC: io-wq's blocking issue, IOCB_NOWAIT cleared. */
	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITE, fd, "d", 0, 0, RWF_NOWAIT,
			   IOSQE_ASYNC),
		    0);
	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITE, fd, "ddd", 3, 1, RWF_NOWAIT,
			   IOSQE_ASYNC),
		    3);
	T_ASSERT_EQ(pread(fd, buf, sizeof(buf), 0), 8);
	T_ASSERT_EQ(memcmp(buf, "cdddaaaa", 8), 0);
}

/* Reads and O_DIRECT writes: the file's own answer. */
static void test_others(struct t_ring *r, int fd)
{
	static char blk[4096] __attribute__((aligned(4096)));
	struct iovec none = {NULL, 0};
	char buf[16];

	T_ASSERT_EQ(rw_one(r, IORING_OP_READ, fd, buf, 0, 0, RWF_NOWAIT, 0), 0);
	T_ASSERT_EQ(rw_one(r, IORING_OP_READV, fd, &none, 1, 0, RWF_NOWAIT, 0),
		    0);
	T_ASSERT_EQ(rw_one(r, IORING_OP_READ, fd, buf, 5, 0, RWF_NOWAIT, 0), 5);
	T_ASSERT_EQ(rw_one(r, IORING_OP_READ, fd, buf, 5, 0, RWF_NOWAIT,
			   IOSQE_ASYNC),
		    5);
	if (fcntl(fd, F_SETFL, O_DIRECT))
		return;
	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITE, fd, blk, 0, 0, RWF_NOWAIT, 0),
		    0);
	T_ASSERT_EQ(rw_one(r, IORING_OP_WRITEV, fd, &none, 1, 0, RWF_NOWAIT, 0),
		    0);
	T_ASSERT_EQ(fcntl(fd, F_SETFL, 0), 0);
}

static void test_ext4(void)
{
	unsigned long type;
	struct t_ring r;
	int fd = temp_file_in("/tmp", &type);

	T_ASSERT_GE(fd, 0);
	if (type != EXT4_SUPER_MAGIC) {
		fprintf(stderr, "/tmp is not ext4 (%#lx): skipped\n", type);
		close(fd);
		return;
	}
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	test_buffered_write(&r, fd);
	test_others(&r, fd);
	t_ring_exit(&r);
	close(fd);
}

/* No FMODE_NOWAIT: -EOPNOTSUPP whatever the length, IOSQE_ASYNC too. */
static void expect_no_nowait(struct t_ring *r, int fd, bool write)
{
	struct iovec none = {NULL, 0};
	char buf[8] = "eeeeeee";
	int op = write ? IORING_OP_WRITE : IORING_OP_READ;
	int opv = write ? IORING_OP_WRITEV : IORING_OP_READV;

	T_ASSERT_EQ(rw_one(r, op, fd, buf, 0, 0, RWF_NOWAIT, 0), -EOPNOTSUPP);
	T_ASSERT_EQ(rw_one(r, op, fd, buf, 1, 0, RWF_NOWAIT, 0), -EOPNOTSUPP);
	T_ASSERT_EQ(rw_one(r, opv, fd, &none, 1, 0, RWF_NOWAIT, 0),
		    -EOPNOTSUPP);
	T_ASSERT_EQ(rw_one(r, op, fd, buf, 0, 0, RWF_NOWAIT, IOSQE_ASYNC),
		    -EOPNOTSUPP);
	T_ASSERT_EQ(rw_one(r, op, fd, buf, 0, 0, 0, 0), 0);
}

static void test_no_fmode_nowait(void)
{
	unsigned long type;
	struct t_ring r;
	int fd = temp_file_in("/dev/shm", &type);

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	if (fd >= 0 && type == TMPFS_MAGIC) {
		expect_no_nowait(&r, fd, true);
		expect_no_nowait(&r, fd, false);
	}
	if (fd >= 0)
		close(fd);
	fd = open("/proc/self/status", O_RDONLY);
	T_ASSERT_GE(fd, 0);
	expect_no_nowait(&r, fd, false);
	close(fd);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_ext4();
	test_no_fmode_nowait();
	return T_EXIT_PASS;
}
