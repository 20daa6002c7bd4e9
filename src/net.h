/* SPDX-License-Identifier: MIT */
/*
 * SEND, RECV, SENDMSG, RECVMSG, ACCEPT, CONNECT, SHUTDOWN, SOCKET (net.c).
 */
#ifndef NW_NET_H
#define NW_NET_H

#include "internal.h"

int nw_send_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_recv_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_sendmsg_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_recvmsg_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_sr_issue(struct nw_req *req, unsigned int issue_flags);
int nw_accept_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_accept_issue(struct nw_req *req, unsigned int issue_flags);
int nw_connect_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_connect_issue(struct nw_req *req, unsigned int issue_flags);
int nw_shutdown_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_shutdown_issue(struct nw_req *req, unsigned int issue_flags);
int nw_socket_prep(struct nw_req *req, const struct io_uring_sqe *sqe);
int nw_socket_issue(struct nw_req *req, unsigned int issue_flags);
/* Frees what prep allocated (req->async) for any of them. */
void nw_net_cleanup(struct nw_req *req);

#endif
