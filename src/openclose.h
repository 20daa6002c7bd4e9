/* SPDX-License-Identifier: MIT */
/* OPENAT, OPENAT2, CLOSE, PIPE, FIXED_FD_INSTALL (openclose.c). */
#ifndef NW_OPENCLOSE_H
#define NW_OPENCLOSE_H

#include "internal.h"

int nw_openat_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_openat2_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_openat_issue(struct nw_req *req, unsigned int issue_flags);
void nw_open_cleanup(struct nw_req *req);
int nw_close_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_close_issue(struct nw_req *req, unsigned int issue_flags);
int nw_pipe_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_pipe_issue(struct nw_req *req, unsigned int issue_flags);
int nw_fd_install_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_fd_install_issue(struct nw_req *req, unsigned int issue_flags);

#endif
