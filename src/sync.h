/* SPDX-License-Identifier: MIT */
/* FSYNC, SYNC_FILE_RANGE, FALLOCATE, FADVISE, MADVISE, FTRUNCATE (sync.c). */
#ifndef NW_SYNC_H
#define NW_SYNC_H

#include "internal.h"

int nw_fsync_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_fsync_issue(struct nw_req *req, unsigned int issue_flags);
int nw_sfr_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_sfr_issue(struct nw_req *req, unsigned int issue_flags);
int nw_fallocate_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_fallocate_issue(struct nw_req *req, unsigned int issue_flags);
int nw_fadvise_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_fadvise_issue(struct nw_req *req, unsigned int issue_flags);
int nw_madvise_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_madvise_issue(struct nw_req *req, unsigned int issue_flags);

int nw_ftruncate_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_ftruncate_issue(struct nw_req *req, unsigned int issue_flags);

#endif
