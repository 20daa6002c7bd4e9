/* SPDX-License-Identifier: MIT */
/*
 * FSYNC (and IORING_FSYNC_DATASYNC), SYNC_FILE_RANGE, FALLOCATE, FADVISE,
 * MADVISE: results, the fields prep rejects, bad and O_PATH fds, and the
 * kernel's link rule: FSYNC, SYNC_FILE_RANGE, FALLOCATE and MADVISE only
 * set their result (the next linked request still runs after an error),
 * FADVISE and a failed file lookup (bad fd) cancel the chain.
 * Semantics: io_uring/sync.c, io_uring/advise.c.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "helpers.h"

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

static char tmpdir[64];
static struct t_ring ring;

static struct io_uring_sqe *op_sqe(int op, int fd)
{
	struct io_uring_sqe *sqe = t_get_sqe(&ring);

	T_ASSERT(sqe != NULL);
	sqe->opcode = (uint8_t)op;
	sqe->fd = fd;
	sqe->user_data = 1;
	return sqe;
}

static int run(void)
{
	return t_run(&ring, 1);
}

/* Run sqe linked to a NOP: sqe's res, and the NOP's in *nop. */
static int run_linked(struct io_uring_sqe *sqe, int *nop)
{
	struct io_uring_cqe cqe;
	int res = 0, i;

	sqe->flags |= IOSQE_IO_LINK;
	t_prep_nop(t_get_sqe(&ring), 2);
	T_ASSERT_EQ(t_submit_and_wait(&ring, 2), 2);
	for (i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(&ring, &cqe), 0);
		if (cqe.user_data == 1)
			res = cqe.res;
		else
			*nop = cqe.res;
	}
	return res;
}

static struct io_uring_sqe *prep_fallocate(int fd, int mode, uint64_t off,
					   uint64_t len)
{
	struct io_uring_sqe *sqe = op_sqe(IORING_OP_FALLOCATE, fd);

	sqe->len = (unsigned int)mode;
	sqe->off = off;
	sqe->addr = len;
	return sqe;
}

static struct io_uring_sqe *prep_fadvise(int fd, uint64_t off, unsigned int len,
					 unsigned int advice)
{
	struct io_uring_sqe *sqe = op_sqe(IORING_OP_FADVISE, fd);

	sqe->off = off;
	sqe->len = len;
	sqe->fadvise_advice = advice;
	return sqe;
}

static struct io_uring_sqe *prep_madvise(void *addr, unsigned int len,
					 unsigned int advice)
{
	struct io_uring_sqe *sqe = op_sqe(IORING_OP_MADVISE, 0);

	sqe->addr = (uintptr_t)addr;
	sqe->len = len;
	sqe->fadvise_advice = advice;
	return sqe;
}

static int temp_file(int flags)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/f", tmpdir);
	fd = open(path, flags | O_CREAT, 0600);
	T_ASSERT_GE(fd, 0);
	return fd;
}

static void test_fsync(void)
{
	struct io_uring_sqe *sqe;
	int fd = temp_file(O_RDWR), rfd, pfd, p[2], nop;
	char path[128];

	T_ASSERT_EQ(write(fd, "data", 4), 4);
	op_sqe(IORING_OP_FSYNC, fd);
	T_ASSERT_EQ(run(), 0);
	op_sqe(IORING_OP_FSYNC, fd)->fsync_flags = IORING_FSYNC_DATASYNC;
	T_ASSERT_EQ(run(), 0);
	/* A range (off, len) is accepted; a negative offset is not. */
	sqe = op_sqe(IORING_OP_FSYNC, fd);
	sqe->off = 4096;
	sqe->len = 100;
	T_ASSERT_EQ(run(), 0);
	sqe = op_sqe(IORING_OP_FSYNC, fd);
	sqe->off = 0x7fffffffffffffffULL;
	sqe->len = 0xffffffff;
	T_ASSERT_EQ(run(), 0);
	nop = 99;
	T_ASSERT_EQ(run_linked(op_sqe(IORING_OP_FSYNC, fd), &nop), 0);
	T_ASSERT_EQ(nop, 0);
	nop = 99;
	sqe = op_sqe(IORING_OP_FSYNC, 999); /* prep's check comes first */
	sqe->off = (uint64_t)-1;
	T_ASSERT_EQ(run_linked(sqe, &nop), -EINVAL);
	T_ASSERT_EQ(nop, -ECANCELED);
	op_sqe(IORING_OP_FSYNC, fd)->flags = IOSQE_ASYNC;
	T_ASSERT_EQ(run(), 0);
	/* A read-only fd syncs too. */
	snprintf(path, sizeof(path), "%s/f", tmpdir);
	rfd = open(path, O_RDONLY);
	T_ASSERT_GE(rfd, 0);
	op_sqe(IORING_OP_FSYNC, rfd);
	T_ASSERT_EQ(run(), 0);

	/* Prep: unknown flags and fields that must be zero. */
	op_sqe(IORING_OP_FSYNC, fd)->fsync_flags = 2;
	T_ASSERT_EQ(run(), -EINVAL);
	op_sqe(IORING_OP_FSYNC, fd)->addr = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	op_sqe(IORING_OP_FSYNC, fd)->buf_index = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	op_sqe(IORING_OP_FSYNC, fd)->splice_fd_in = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	op_sqe(IORING_OP_FSYNC, fd)->ioprio = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	op_sqe(IORING_OP_FSYNC, fd)->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(run(), -EBADF);

	/* A pipe has no fsync: -EINVAL, and the link goes on. */
	T_ASSERT_EQ(pipe(p), 0);
	nop = 99;
	T_ASSERT_EQ(run_linked(op_sqe(IORING_OP_FSYNC, p[1]), &nop), -EINVAL);
	T_ASSERT_EQ(nop, 0);
	/* A bad fd is a failed file lookup: the link is cancelled. */
	nop = 99;
	T_ASSERT_EQ(run_linked(op_sqe(IORING_OP_FSYNC, 999), &nop), -EBADF);
	T_ASSERT_EQ(nop, -ECANCELED);
	pfd = open(path, O_PATH);
	T_ASSERT_GE(pfd, 0);
	nop = 99;
	T_ASSERT_EQ(run_linked(op_sqe(IORING_OP_FSYNC, pfd), &nop), -EBADF);
	T_ASSERT_EQ(nop, -ECANCELED);
	close(pfd);
	close(p[0]);
	close(p[1]);
	close(rfd);
	close(fd);
}

static void test_sync_file_range(void)
{
	struct io_uring_sqe *sqe;
	int fd = temp_file(O_RDWR), p[2], nop;

	T_ASSERT_EQ(pwrite(fd, "0123456789", 10, 0), 10);
	sqe = op_sqe(IORING_OP_SYNC_FILE_RANGE, fd);
	sqe->sync_range_flags = SYNC_FILE_RANGE_WAIT_BEFORE |
				SYNC_FILE_RANGE_WRITE |
				SYNC_FILE_RANGE_WAIT_AFTER;
	T_ASSERT_EQ(run(), 0);
	sqe = op_sqe(IORING_OP_SYNC_FILE_RANGE, fd);
	sqe->off = 2;
	sqe->len = 4;
	sqe->sync_range_flags = SYNC_FILE_RANGE_WRITE;
	T_ASSERT_EQ(run(), 0);
	/* The system call's checks: flags, a negative offset. */
	op_sqe(IORING_OP_SYNC_FILE_RANGE, fd)->sync_range_flags = 0x100;
	T_ASSERT_EQ(run(), -EINVAL);
	op_sqe(IORING_OP_SYNC_FILE_RANGE, fd)->off = (uint64_t)-4096;
	T_ASSERT_EQ(run(), -EINVAL);
	/* Prep's. */
	op_sqe(IORING_OP_SYNC_FILE_RANGE, fd)->addr = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	op_sqe(IORING_OP_SYNC_FILE_RANGE, fd)->splice_fd_in = 1;
	T_ASSERT_EQ(run(), -EINVAL);

	T_ASSERT_EQ(pipe(p), 0);
	nop = 99;
	T_ASSERT_EQ(run_linked(op_sqe(IORING_OP_SYNC_FILE_RANGE, p[0]), &nop),
		    -ESPIPE);
	T_ASSERT_EQ(nop, 0);
	nop = 99;
	T_ASSERT_EQ(run_linked(op_sqe(IORING_OP_SYNC_FILE_RANGE, 999), &nop),
		    -EBADF);
	T_ASSERT_EQ(nop, -ECANCELED);
	close(p[0]);
	close(p[1]);
	close(fd);
}

static void test_fallocate(void)
{
	struct stat st;
	char path[128];
	int fd = temp_file(O_RDWR), rfd, p[2], nop;

	T_ASSERT_EQ(ftruncate(fd, 0), 0);
	prep_fallocate(fd, 0, 0, 1 << 20);
	T_ASSERT_EQ(run(), 0);
	T_ASSERT_EQ(fstat(fd, &st), 0);
	T_ASSERT_EQ(st.st_size, 1 << 20);
	prep_fallocate(fd, FALLOC_FL_KEEP_SIZE, 1 << 20, 1 << 20);
	T_ASSERT_EQ(run(), 0);
	T_ASSERT_EQ(fstat(fd, &st), 0);
	T_ASSERT_EQ(st.st_size, 1 << 20);
	T_ASSERT_EQ(pwrite(fd, "xxxx", 4, 8192), 4);
	prep_fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096,
		       8192);
	T_ASSERT_EQ(run(), 0);
	{
		char buf[4];

		T_ASSERT_EQ(pread(fd, buf, 4, 8192), 4);
		T_ASSERT_EQ(memcmp(buf, "\0\0\0\0", 4), 0);
	}
	/* Errors of vfs_fallocate: bad range, unknown mode, PUNCH alone. */
	prep_fallocate(fd, 0, 0, 0);
	T_ASSERT_EQ(run(), -EINVAL);
	prep_fallocate(fd, 0, (uint64_t)-1, 10);
	T_ASSERT_EQ(run(), -EINVAL);
	prep_fallocate(fd, 0x10000, 0, 10);
	T_ASSERT_EQ(run(), -EOPNOTSUPP);
	prep_fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 10);
	T_ASSERT_EQ(run(), -EOPNOTSUPP);
	/* Prep. */
	prep_fallocate(fd, 0, 0, 10)->rw_flags = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_fallocate(fd, 0, 0, 10)->buf_index = 1;
	T_ASSERT_EQ(run(), -EINVAL);

	/* A read-only fd: -EBADF from the op itself, the link goes on. */
	snprintf(path, sizeof(path), "%s/f", tmpdir);
	rfd = open(path, O_RDONLY);
	T_ASSERT_GE(rfd, 0);
	nop = 99;
	T_ASSERT_EQ(run_linked(prep_fallocate(rfd, 0, 0, 10), &nop), -EBADF);
	T_ASSERT_EQ(nop, 0);
	nop = 99;
	T_ASSERT_EQ(run_linked(prep_fallocate(998, 0, 0, 10), &nop), -EBADF);
	T_ASSERT_EQ(nop, -ECANCELED);
	T_ASSERT_EQ(pipe(p), 0);
	nop = 99;
	T_ASSERT_EQ(run_linked(prep_fallocate(p[1], 0, 0, 10), &nop), -ESPIPE);
	T_ASSERT_EQ(nop, 0);
	close(p[0]);
	close(p[1]);
	close(rfd);
	close(fd);
}

static void test_fadvise(void)
{
	static const unsigned int advice[] = {
		POSIX_FADV_NORMAL,   POSIX_FADV_RANDOM,	  POSIX_FADV_SEQUENTIAL,
		POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED, POSIX_FADV_NOREUSE,
	};
	int fd = temp_file(O_RDWR), p[2], nop;
	size_t i;

	T_ASSERT_EQ(ftruncate(fd, 65536), 0);
	for (i = 0; i < sizeof(advice) / sizeof(advice[0]); i++) {
		prep_fadvise(fd, 0, 4096, advice[i]);
		T_ASSERT_EQ(run(), 0);
	}
	prep_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED)->flags = IOSQE_ASYNC;
	T_ASSERT_EQ(run(), 0);
	/* Bad advice fails the link (fadvise sets REQ_F_FAIL). */
	nop = 99;
	T_ASSERT_EQ(run_linked(prep_fadvise(fd, 0, 0, 99), &nop), -EINVAL);
	T_ASSERT_EQ(nop, -ECANCELED);
	T_ASSERT_EQ(pipe(p), 0);
	nop = 99;
	T_ASSERT_EQ(
		run_linked(prep_fadvise(p[0], 0, 0, POSIX_FADV_NORMAL), &nop),
		-ESPIPE);
	T_ASSERT_EQ(nop, -ECANCELED);
	prep_fadvise(999, 0, 0, POSIX_FADV_NORMAL);
	T_ASSERT_EQ(run(), -EBADF);
	/* addr is a 64-bit length that takes precedence over len. */
	prep_fadvise(fd, 0, 1, POSIX_FADV_DONTNEED)->addr = 1ULL << 40;
	T_ASSERT_EQ(run(), 0);
	prep_fadvise(fd, 0, 0, 99)->addr = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_fadvise(fd, 0, 0, POSIX_FADV_NORMAL)->buf_index = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	prep_fadvise(fd, 0, 0, POSIX_FADV_NORMAL)->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(run(), -EBADF);
	close(p[0]);
	close(p[1]);
	close(fd);
}

static void test_madvise(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *map;
	int nop;

	map = mmap(NULL, (size_t)pg * 4, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(map != MAP_FAILED);
	memset(map, 'm', (size_t)pg * 4);
	/* DONTNEED on private anonymous memory: it reads back as zeros. */
	prep_madvise(map + pg, (unsigned int)pg, MADV_DONTNEED);
	T_ASSERT_EQ(run(), 0);
	T_ASSERT_EQ(map[pg], 0);
	T_ASSERT_EQ(map[0], 'm');
	T_ASSERT_EQ(map[2 * pg], 'm');
	prep_madvise(map, (unsigned int)pg * 4, MADV_WILLNEED);
	T_ASSERT_EQ(run(), 0);
	prep_madvise(map, (unsigned int)pg * 4, MADV_NORMAL)->flags =
		IOSQE_ASYNC;
	T_ASSERT_EQ(run(), 0);
	/* Errors only set the result: the link goes on. */
	nop = 99;
	T_ASSERT_EQ(run_linked(prep_madvise(map + 1, (unsigned int)pg,
					    MADV_DONTNEED),
			       &nop),
		    -EINVAL);
	T_ASSERT_EQ(nop, 0);
	nop = 99;
	T_ASSERT_EQ(run_linked(prep_madvise(map, (unsigned int)pg, 999), &nop),
		    -EINVAL);
	T_ASSERT_EQ(nop, 0);
	T_ASSERT_EQ(munmap(map + 3 * pg, (size_t)pg), 0);
	prep_madvise(map + 3 * pg, (unsigned int)pg, MADV_DONTNEED);
	T_ASSERT_EQ(run(), -ENOMEM);
	/* off is a 64-bit length that takes precedence over len. */
	map[0] = 'm';
	prep_madvise(map, 1, MADV_DONTNEED)->off = (uint64_t)pg * 3;
	T_ASSERT_EQ(run(), 0);
	T_ASSERT_EQ(map[0], 0);
	prep_madvise(map, (unsigned int)pg, MADV_DONTNEED)->off =
		(uint64_t)pg * 4;
	T_ASSERT_EQ(run(), -ENOMEM); /* reaches the unmapped page */
	/* Prep. */
	prep_madvise(map, (unsigned int)pg, MADV_NORMAL)->splice_fd_in = 1;
	T_ASSERT_EQ(run(), -EINVAL);
	munmap(map, (size_t)pg * 3);
}

int main(void)
{
	char path[128];

	t_require_engine();
	t_watchdog(60);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/nowait-sync.XXXXXX");
	T_ASSERT(mkdtemp(tmpdir) != NULL);
	T_ASSERT_EQ(t_ring_init(&ring, 16, NULL), 0);
	test_fsync();
	test_sync_file_range();
	test_fallocate();
	test_fadvise();
	test_madvise();
	t_ring_exit(&ring);
	snprintf(path, sizeof(path), "%s/f", tmpdir);
	T_ASSERT_EQ(unlink(path), 0);
	T_ASSERT_EQ(rmdir(tmpdir), 0);
	return T_EXIT_PASS;
}
