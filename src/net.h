/* SPDX-License-Identifier: MIT */
/*
 * SEND, RECV, SENDMSG, RECVMSG (net.c); ACCEPT, CONNECT, SHUTDOWN, SOCKET
 * (sock.c). One header for both, the one the opcode table includes.
 */
#ifndef NW_NET_H
#define NW_NET_H

#include <sys/socket.h>
#include "internal.h"

int nw_send_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_recv_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_sendmsg_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_recvmsg_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_sr_issue(struct nw_req *req, unsigned int issue_flags);
/* SEND_ZC, SENDMSG_ZC: a copy, with the kernel's notification CQE. */
int nw_send_zc_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_sendmsg_zc_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_zc_issue(struct nw_req *req, unsigned int issue_flags);
/* Frees req->async and posts the notification CQE. */
void nw_zc_cleanup(struct nw_req *req);
int nw_accept_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_accept_issue(struct nw_req *req, unsigned int issue_flags);
int nw_connect_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_connect_issue(struct nw_req *req, unsigned int issue_flags);
int nw_shutdown_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_shutdown_issue(struct nw_req *req, unsigned int issue_flags);
int nw_socket_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_socket_issue(struct nw_req *req, unsigned int issue_flags);
int nw_bind_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_bind_issue(struct nw_req *req, unsigned int issue_flags);
int nw_listen_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_listen_issue(struct nw_req *req, unsigned int issue_flags);
/* URING_CMD on sockets (cmdsock.c). */
int nw_uring_cmd_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_uring_cmd_issue(struct nw_req *req, unsigned int issue_flags);
/* Frees what prep allocated (req->async) for any of them (net.c). */
void nw_net_cleanup(struct nw_req *req);

/* Shared by net.c and sock.c; defined in net.c. */
#define NW_MSHOT_MAX_LOOPS 32 /* the kernel's MULTISHOT_MAX_RETRY */
/* move_addr_to_kernel: 0, -EINVAL (length) or -EFAULT. */
int nw_addr_copy(struct sockaddr_storage *dst, const void *src, long len);
/* nw_poll_prepare, but never skipping on a file or a pipe (-ENOTSOCK). */
bool nw_net_poll_skip(struct nw_req *req, unsigned int mask);

#endif
