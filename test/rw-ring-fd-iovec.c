/* SPDX-License-Identifier: MIT */
/*
 * Found by test/fuzz/diff-fuzz. (1) Ops that use a ring's own fd as a
 * plain file: the kernel's ring file is an anon inode with poll and mmap
 * only, so WRITE is -EINVAL, FALLOCATE -ENODEV, FTRUNCATE and FSYNC
 * -EINVAL, FSETXATTR -EPERM; and the rings are untouched (a write there
 * must not land in the SQ ring). (2) READV's iovec array at prep
 * (__import_iovec, before the file is looked up): read in order, a
 * negative length met before a fault is -EINVAL, a fault first -EFAULT,
 * a range past user space -EFAULT. (3) io_rw_init_file's RWF_NOWAIT on a
 * file without FMODE_NOWAIT (a directory, an epoll fd) is -EOPNOTSUPP,
 * for a length of 0 too; other flags on a directory leave its -EISDIR.
 */
#include <fcntl.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include "compat.h"
#include "helpers.h"

static int op_on(struct t_ring *r, int op, int fd, uint64_t addr,
		 unsigned int len, uint64_t off, int rw_flags)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	t_prep_rw(sqe, op, fd, (void *)(uintptr_t)addr, len, off, 5);
	sqe->rw_flags = rw_flags;
	return t_run(r, 5);
}

static void ring_fd_checks(struct t_ring *r)
{
	static const char name[] = "user.nw", val[] = "1";
	char junk[64];
	struct io_uring_sqe *sqe;

	memset(junk, 0x5a, sizeof(junk));
	T_ASSERT_EQ(op_on(r, IORING_OP_WRITE, r->fd, (uintptr_t)junk, 64, 0, 0),
		    -EINVAL);
	/* FALLOCATE: offset in off, length in addr, mode in len. */
	T_ASSERT_EQ(op_on(r, IORING_OP_FALLOCATE, r->fd, 4096, 0, 0, 0),
		    -ENODEV);
	T_ASSERT_EQ(op_on(r, IORING_OP_FALLOCATE, r->fd, 4096, 0x10, 0, 0),
		    -ENODEV);
	T_ASSERT_EQ(op_on(r, IORING_OP_FSYNC, r->fd, 0, 0, 0, 0), -EINVAL);
	sqe = t_get_sqe(r);
	t_prep_rw(sqe, NW_OP_FTRUNCATE, r->fd, NULL, 0, 0, 6);
	T_ASSERT_EQ(t_run(r, 6), -EINVAL);
	sqe = t_get_sqe(r);
	t_prep_rw(sqe, IORING_OP_FSETXATTR, r->fd, name, sizeof(val) - 1, 0, 7);
	sqe->addr2 = (uint64_t)(uintptr_t)val;
	T_ASSERT_EQ(t_run(r, 7), -EPERM);
	/* The ring still works: nothing was written into it. */
	sqe = t_get_sqe(r);
	t_prep_nop(sqe, 8);
	T_ASSERT_EQ(t_run(r, 8), 0);
}

static void iovec_checks(struct t_ring *r, char *page, int p[2])
{
	/* The last two slots of a page, the next page unmapped. */
	struct iovec *iov = (struct iovec *)(page + 4096) - 2;
	char buf[8];

	iov[0].iov_base = buf;
	iov[0].iov_len = (size_t)-1; /* negative as ssize_t */
	iov[1].iov_base = buf;
	iov[1].iov_len = 8;
	/* Negative first, then a fault: -EINVAL, even before a bad fd. */
	T_ASSERT_EQ(op_on(r, IORING_OP_READV, p[0], (uintptr_t)iov, 3, 0, 0),
		    -EINVAL);
	T_ASSERT_EQ(op_on(r, IORING_OP_READV, 1000, (uintptr_t)iov, 3, 0, 0),
		    -EINVAL);
	/* A fault first: -EFAULT, before the bad fd too. */
	iov[0].iov_len = 8;
	T_ASSERT_EQ(op_on(r, IORING_OP_READV, 1000, (uintptr_t)iov, 3, 0, 0),
		    -EFAULT);
	/* One iovec: its length negative -EINVAL, its range bad -EFAULT. */
	iov[1].iov_len = (size_t)-2;
	T_ASSERT_EQ(
		op_on(r, IORING_OP_READV, 1000, (uintptr_t)&iov[1], 1, 0, 0),
		-EINVAL);
	iov[1].iov_base = (void *)0xffff800000000000ULL;
	iov[1].iov_len = 8;
	T_ASSERT_EQ(
		op_on(r, IORING_OP_WRITEV, 1000, (uintptr_t)&iov[1], 1, 0, 0),
		-EFAULT);
	/* Two, the second's range past user space: -EFAULT. */
	iov[0].iov_base = buf;
	T_ASSERT_EQ(op_on(r, IORING_OP_READV, p[0], (uintptr_t)iov, 2, 0, 0),
		    -EFAULT);
	/* READ's buffer is checked at prep too. */
	T_ASSERT_EQ(
		op_on(r, IORING_OP_READ, 1000, 0xffff800000000000ULL, 8, 0, 0),
		-EFAULT);
}

static void nowait_checks(struct t_ring *r)
{
	int dir = open(".", O_RDONLY | O_DIRECTORY), ep = epoll_create1(0);
	static char buf[16];
	static struct iovec iov = {buf, sizeof(buf)};

	T_ASSERT_GE(dir, 0);
	T_ASSERT_GE(ep, 0);
	T_ASSERT_EQ(
		op_on(r, IORING_OP_READ, dir, (uintptr_t)buf, 0, 0, RWF_NOWAIT),
		-EOPNOTSUPP);
	T_ASSERT_EQ(
		op_on(r, IORING_OP_READ, ep, (uintptr_t)buf, 1, 0, RWF_NOWAIT),
		-EOPNOTSUPP);
	/* RWF_APPEND on a read of a directory changes nothing there. */
	T_ASSERT_EQ(op_on(r, IORING_OP_READV, dir, (uintptr_t)&iov, 1, 0,
			  RWF_APPEND),
		    -EISDIR);
	close(dir);
	close(ep);
}

int main(void)
{
	struct t_ring r;
	char *page;
	int p[2];

	t_require_engine();
	t_watchdog(30);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(page != MAP_FAILED);
	T_ASSERT_EQ(mprotect(page + 4096, 4096, PROT_NONE), 0);
	ring_fd_checks(&r);
	iovec_checks(&r, page, p);
	nowait_checks(&r);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
