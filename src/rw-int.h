/* SPDX-License-Identifier: MIT */
/*
 * What rw.c and rwcheck.c share: private to the two, and only they include
 * this header. rw.c has the transfers (READ, WRITE and their vectored,
 * fixed and multishot kinds); rwcheck.c the checks the kernel makes of an
 * SQE's ioprio and attributes at prep and of its RWF_* flags against the
 * file (io_rw_init_file), which rw.c calls (never the other way).
 */
#ifndef NW_RW_INT_H
#define NW_RW_INT_H

#include <fcntl.h>
#include <sys/uio.h>
#include "rw.h"

/*
 * What RWF_NOWAIT meets on a file, where the system call cannot tell:
 * RW_NOWAIT_NONE, no FMODE_NOWAIT (a directory, an epoll fd, a ring's, a
 * regular file of a filesystem that sets none: rw_fs_nowait);
 * RW_NOWAIT_LOOP, FMODE_NOWAIT but no write_iter, so the kernel's
 * loop_rw_iter answers -EAGAIN unless the file is O_NONBLOCK (an
 * eventfd's write: eventfd_write is a plain ->write), where pwritev2
 * says -EOPNOTSUPP, or 0 for no bytes; RW_NOWAIT_REG, a regular file
 * (rw_reg_nowait), RW_NOWAIT_REG_EAGAIN one whose buffered write
 * io_write refuses nonblocking; else RW_NOWAIT_OK.
 */
enum {
	RW_NOWAIT_OK,
	RW_NOWAIT_NONE,
	RW_NOWAIT_LOOP,
	RW_NOWAIT_REG,
	RW_NOWAIT_REG_EAGAIN
};

struct nw_rw {
	uint64_t off;	     /* (uint64_t)-1: the file position */
	int rw_flags;	     /* RWF_* from the program */
	unsigned int nr_iov; /* iovecs left to transfer */
	struct iovec *iov;   /* fast_iov or req->async */
	struct iovec fast_iov;
	size_t done;  /* bytes transferred so far */
	size_t total; /* bytes asked for */
	bool write;
	bool mshot_tried; /* READ_MULTISHOT: an attempt was made */
	bool flags_ok;	  /* rw_init_file's checks passed */
	int16_t buf_err;  /* a registered buffer's lookup failed: at issue */
	bool pi;	  /* a PI attribute: refused at issue */
	uint8_t nowait;	  /* what RWF_NOWAIT meets: RW_NOWAIT_* */
};
_Static_assert(sizeof(struct nw_rw) <= NW_REQ_CMD_SIZE, "nw_rw too big");

/* The fd opened for this direction (F_GETFL's flags, or -1). */
static inline bool nw_rw_mode_ok(const struct nw_rw *rw, int fl)
{
	int acc = fl & O_ACCMODE;

	return fl >= 0 && !(fl & O_PATH) && acc != 3 &&
	       acc != (rw->write ? O_RDONLY : O_WRONLY);
}

/* ioprio_check_cap at prep: 0, -EINVAL or -EPERM. */
int nw_rw_ioprio_check(unsigned int ioprio);
/* attr_type_mask and attr_ptr at prep (io_prep_rw_pi): 0 or -errno. */
int nw_rw_attr_prep(struct nw_rw *rw, const struct io_uring_sqe *sqe);
/* io_rw_init_file's checks for a request with rw_flags: 0 or -errno. */
int nw_rw_init_file(struct nw_req *req, struct nw_rw *rw);

#endif
