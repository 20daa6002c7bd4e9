/* SPDX-License-Identifier: MIT */
/*
 * STATX, RENAMEAT, UNLINKAT, MKDIRAT, SYMLINKAT, LINKAT (fs.c), and the
 * path copy every op that takes a path name uses at prep.
 */
#ifndef NW_FS_H
#define NW_FS_H

#include "internal.h"

/*
 * The kernel's getname: copy the NUL-terminated path at uaddr into dst,
 * which holds PATH_MAX bytes, through a fault-safe read. Returns its
 * length, or -EFAULT (bad pointer), -ENAMETOOLONG (no NUL within
 * PATH_MAX bytes), -ENOENT (empty and !empty_ok).
 */
int nw_getname(char *dst, uint64_t uaddr, bool empty_ok);
/*
 * The same copy into dst of max bytes: the length (0 for ""), -EFAULT,
 * or -ENAMETOOLONG (no NUL within max bytes).
 */
int nw_getname_max(char *dst, uint64_t uaddr, size_t max);
/* Does fd name a file the kernel's fget would return (not O_PATH)? */
bool nw_fd_usable(int fd);
/*
 * Copy the path at u1 (and the one at u2 when p2 is not NULL) into one
 * allocation that req->async owns (free it in the op's cleanup). 0 or
 * the first path's error; u2 never allows "".
 */
int nw_getnames(struct nw_req *req, uint64_t u1, bool empty1, char **p1,
		uint64_t u2, char **p2);

int nw_statx_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_statx_issue(struct nw_req *req, unsigned int issue_flags);
int nw_renameat_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_renameat_issue(struct nw_req *req, unsigned int issue_flags);
int nw_unlinkat_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_unlinkat_issue(struct nw_req *req, unsigned int issue_flags);
int nw_mkdirat_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_mkdirat_issue(struct nw_req *req, unsigned int issue_flags);
int nw_symlinkat_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_symlinkat_issue(struct nw_req *req, unsigned int issue_flags);
int nw_linkat_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_linkat_issue(struct nw_req *req, unsigned int issue_flags);
/* Frees the path copies (req->async), for every op of this file. */
void nw_fs_cleanup(struct nw_req *req);

#endif
