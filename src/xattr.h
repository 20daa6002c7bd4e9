/* SPDX-License-Identifier: MIT */
/* FSETXATTR, SETXATTR, FGETXATTR, GETXATTR (xattr.c). */
#ifndef NW_XATTR_H
#define NW_XATTR_H

#include "internal.h"

int nw_fgetxattr_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_getxattr_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_fsetxattr_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_setxattr_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
/* All four run the system call in a worker. */
int nw_xattr_issue(struct nw_req *req, unsigned int issue_flags);
/* Frees the name, path and value copies (req->async). */
void nw_xattr_cleanup(struct nw_req *req);

#endif
