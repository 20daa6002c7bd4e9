/* SPDX-License-Identifier: MIT */
/*
 * The order of READ/WRITE's checks when several fields are bad, against
 * the kernel (found by test/fuzz/diff-fuzz). Prep: ioprio_check_cap (the
 * class, and a level only in its low 3 bits: hint bits pass), then
 * attr_type_mask; a bad fd or fixed-file slot is -EBADF next; then a
 * registered buffer is looked up (-EFAULT), at issue as io_read_fixed does;
 * a PI attribute's struct is read at prep too (-EFAULT);
 * then io_rw_init_file: the fd's mode (-EBADF), kiocb_set_rw_flags
 * (unknown bits -EOPNOTSUPP, APPEND with NOAPPEND -EINVAL, ATOMIC on what
 * cannot write atomically -EOPNOTSUPP), RWF_HIPRI without IOPOLL -EINVAL;
 * all of it before the transfer, so also for a length of 0, and before a
 * socket refuses an offset (-ESPIPE).
 * Semantics: io_uring/rw.c __io_prep_rw, io_init_rw_fixed, io_rw_init_file;
 * block/ioprio.c ioprio_check_cap; include/linux/fs.h kiocb_set_rw_flags.
 */
#include <fcntl.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "helpers.h"

#define F_HIPRI	   0x01
#define F_NOWAIT   0x08
#define F_APPEND   0x10
#define F_NOAPPEND 0x20
#define F_ATOMIC   0x40

static char buf[64];

/* One request: op on fd, len bytes, off, rw_flags, ioprio, sqe flags. */
static int rw(struct t_ring *r, int op, int fd, unsigned int len, uint64_t off,
	      int rw_flags, unsigned int ioprio)
{
	static struct iovec iov;
	struct io_uring_sqe *sqe = t_get_sqe(r);

	iov.iov_base = buf;
	iov.iov_len = len;
	if (op == IORING_OP_READV || op == IORING_OP_WRITEV)
		t_prep_rw(sqe, op, fd, &iov, 1, off, 7);
	else
		t_prep_rw(sqe, op, fd, buf, len, off, 7);
	sqe->rw_flags = rw_flags;
	sqe->ioprio = (uint16_t)ioprio;
	return t_run(r, 7);
}

static int fixed(struct t_ring *r, int op, int fd, uint8_t flags, uint64_t attr,
		 int rw_flags)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	t_prep_rw(sqe, op, fd, buf, 16, 0, 8);
	sqe->flags = flags;
	sqe->buf_index = 0;
	sqe->__pad2[0] = attr;
	sqe->rw_flags = rw_flags;
	return t_run(r, 8);
}

static void ioprio_checks(struct t_ring *r)
{
	/* BE with hint bits (level 0): valid, so the bad fd is next. */
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, 1000, 4, 0, 0, 0x5d00), -EBADF);
	T_ASSERT_EQ(rw(r, IORING_OP_READV, 1000, 4, 0, 0, 0x4008), -EBADF);
	/* IDLE: any level. NONE: level 0 only. Classes 4-7: none. */
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, 1000, 4, 0, 0, 0x6007), -EBADF);
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, 1000, 4, 0, 0, 0x0008), -EBADF);
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, 1000, 4, 0, 0, 0x0001), -EINVAL);
	T_ASSERT_EQ(rw(r, IORING_OP_READ, 1000, 4, 0, 0, 0x8000), -EINVAL);
	T_ASSERT_EQ(rw(r, IORING_OP_READ, 1000, 4, 0, 0, 0xe000), -EINVAL);
}

static void fixed_checks(struct t_ring *r, int file)
{
	/* No buffers registered: attr_type_mask first, then the fd. */
	T_ASSERT_EQ(fixed(r, IORING_OP_READ_FIXED, file, 0, 0x5642, 0),
		    -EINVAL);
	T_ASSERT_EQ(fixed(r, IORING_OP_WRITE_FIXED, 1000, 0, 0, 0), -EBADF);
	T_ASSERT_EQ(fixed(r, IORING_OP_READ_FIXED, 0, IOSQE_FIXED_FILE, 0, 0),
		    -EBADF);
	/* The buffer before the file's checks (rw_flags, mode). */
	T_ASSERT_EQ(fixed(r, IORING_OP_READ_FIXED, file, 0, 0, 0x4000),
		    -EFAULT);
	T_ASSERT_EQ(fixed(r, IORING_OP_WRITE_FIXED, file, 0, 0, F_HIPRI),
		    -EFAULT);
	T_ASSERT_EQ(fixed(r, IORING_OP_READ_FIXED, file, 0, 0, 0), -EFAULT);
}

static void flag_checks(struct t_ring *r, int file, int p[2], int s[2])
{
	/* A socket's offset is refused only after the flags' checks. */
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, s[0], 16, 0x4a0000,
		       F_ATOMIC | F_NOWAIT, 0),
		    -EOPNOTSUPP);
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, s[0], 0, 1ULL << 61,
		       F_ATOMIC | F_HIPRI, 0),
		    -EOPNOTSUPP);
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, s[0], 16, 4096, F_NOWAIT, 0),
		    -ESPIPE);
	/* The fd's mode before RWF_HIPRI. */
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, p[0], 16, 0, F_HIPRI, 0), -EBADF);
	T_ASSERT_EQ(rw(r, IORING_OP_READV, p[1], 16, 0, F_HIPRI, 0), -EBADF);
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, p[0], 16, 0, 0x4000, 0), -EBADF);
	/* Length 0: the checks still run, where the system call skips. */
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, s[0], 0, 0, 0x4000, 0), -EOPNOTSUPP);
	T_ASSERT_EQ(rw(r, IORING_OP_WRITEV, file, 0, 0, 0x4000, 0),
		    -EOPNOTSUPP);
	T_ASSERT_EQ(
		rw(r, IORING_OP_READV, p[0], 0, 0, F_APPEND | F_NOAPPEND, 0),
		-EINVAL);
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, file, 0, 0, F_HIPRI, 0), -EINVAL);
	T_ASSERT_EQ(rw(r, IORING_OP_READ, file, 0, 0, F_ATOMIC, 0),
		    -EOPNOTSUPP);
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, file, 4, 0, F_ATOMIC, 0),
		    -EOPNOTSUPP);
	/* A negative offset (rw_verify_area) after the fd and its mode. */
	T_ASSERT_EQ(
		rw(r, IORING_OP_READV, 1000, 0, 0xffff000000000000ULL, 0, 0),
		-EBADF);
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, p[0], 4, (uint64_t)-2, 0, 0),
		    -EBADF);
	T_ASSERT_EQ(rw(r, IORING_OP_READ, file, 4, (uint64_t)-2, 0, 0),
		    -EINVAL);
	/* Good flags: the data goes through. */
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, file, 4, 0, F_NOAPPEND, 0), 4);
	T_ASSERT_EQ(rw(r, IORING_OP_WRITE, s[0], 4, 0, F_NOWAIT, 0), 4);
	T_ASSERT_EQ(rw(r, IORING_OP_READ, s[1], 4, 0, F_NOWAIT, 0), 4);
}

/* A read or write with attr_type_mask (__pad2) and attr_ptr (addr3). */
static int attr_rw(struct t_ring *r, int op, int fd, uint8_t flags,
		   uint64_t mask, const void *attr)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	t_prep_rw(sqe, op, fd, buf, 16, 0, 9);
	sqe->flags = flags;
	sqe->__pad2[0] = mask;
	sqe->addr3 = (uint64_t)(uintptr_t)attr;
	return t_run(r, 9);
}

/*
 * The PI attribute (io_prep_rw_pi): its struct is read at prep, before
 * the fixed-file slot is looked up (-EFAULT, -EINVAL for its reserved
 * word); metadata is refused at issue after the file's mode (-EINVAL on
 * files and pipes).
 */
static void pi_checks(struct t_ring *r, int file, int p[2])
{
	uint64_t pi[4] = {0};

	T_ASSERT_EQ(
		attr_rw(r, IORING_OP_READ_FIXED, 0, IOSQE_FIXED_FILE, 1, NULL),
		-EFAULT);
	T_ASSERT_EQ(attr_rw(r, IORING_OP_READ, file, 0, 1, NULL), -EFAULT);
	T_ASSERT_EQ(attr_rw(r, IORING_OP_READ, file, 0, 2, pi), -EINVAL);
	T_ASSERT_EQ(attr_rw(r, IORING_OP_READ, file, 0, 1, pi), -EINVAL);
	T_ASSERT_EQ(attr_rw(r, IORING_OP_READ, p[0], 0, 1, pi), -EINVAL);
	T_ASSERT_EQ(attr_rw(r, IORING_OP_WRITE, p[0], 0, 1, pi), -EBADF);
	pi[3] = 1; /* rsvd */
	T_ASSERT_EQ(attr_rw(r, IORING_OP_WRITE, p[0], 0, 1, pi), -EINVAL);
}

int main(void)
{
	char path[] = "/tmp/nowait-rworder.XXXXXX";
	struct t_ring r;
	int p[2], s[2], file;

	t_require_engine();
	t_watchdog(30);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	file = mkstemp(path);
	T_ASSERT_GE(file, 0);
	unlink(path);
	ioprio_checks(&r);
	fixed_checks(&r, file);
	flag_checks(&r, file, p, s);
	pi_checks(&r, file, p);
	t_ring_exit(&r);
	return T_EXIT_PASS;
}
