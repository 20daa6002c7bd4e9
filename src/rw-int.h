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
	bool loop_nowait; /* RWF_NOWAIT on a file of loop_rw_iter's */
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
