/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_BIND and IORING_OP_LISTEN (6.11) against the kernel: a socket
 * bound and listening through the ring takes a connection, on a plain fd
 * and on a fixed slot in a link; the errors: reserved fields (-EINVAL at
 * prep), an address length out of range, an unreadable address (-EFAULT),
 * a bad fd, a non-socket (-ENOTSOCK), a second bind, a port in use, listen
 * on a datagram socket; a failed bind breaks its link.
 * Semantics: io_uring/net.c io_bind_prep/io_bind, io_listen_prep/io_listen.
 */
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "helpers.h"

static struct io_uring_sqe *
prep_bind(struct t_ring *r, int fd, const void *addr, uint64_t len, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = NW_OP_BIND;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)addr;
	sqe->addr2 = len;
	sqe->user_data = ud;
	return sqe;
}

static struct io_uring_sqe *prep_listen(struct t_ring *r, int fd,
					unsigned int backlog, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = NW_OP_LISTEN;
	sqe->fd = fd;
	sqe->len = backlog;
	sqe->user_data = ud;
	return sqe;
}

static void loopback(struct sockaddr_in *sin, unsigned short port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin->sin_port = htons(port);
}

/* The socket at fd listens on sin's port: a client gets through. */
static void check_listening(int fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int c, a;

	T_ASSERT_EQ(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	T_ASSERT_NE(sin.sin_port, 0);
	c = t_tcp_connect(&sin);
	T_ASSERT_GE(c, 0);
	a = accept(fd, NULL, NULL);
	T_ASSERT_GE(a, 0);
	close(a);
	close(c);
}

static void plain(void)
{
	struct sockaddr_in sin, bound;
	socklen_t blen = sizeof(bound);
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int s, s2, u, p[2];

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	s = socket(AF_INET, SOCK_STREAM, 0);
	T_ASSERT_GE(s, 0);
	loopback(&sin, 0);
	/* prep's checks first */
	sqe = prep_bind(&r, s, &sin, sizeof(sin), 1);
	sqe->rw_flags = 1;
	T_ASSERT_EQ(t_run(&r, 1), -EINVAL);
	sqe = prep_bind(&r, s, &sin, sizeof(sin), 1);
	sqe->len = 1;
	T_ASSERT_EQ(t_run(&r, 1), -EINVAL);
	prep_bind(&r, s, &sin, sizeof(struct sockaddr_storage) + 1, 1);
	T_ASSERT_EQ(t_run(&r, 1), -EINVAL);
	prep_bind(&r, s, (void *)16, sizeof(sin), 1);
	T_ASSERT_EQ(t_run(&r, 1), -EFAULT);
	prep_bind(&r, s, &sin, 0, 1);
	T_ASSERT_EQ(t_run(&r, 1), -EINVAL);
	prep_bind(&r, 1000, &sin, sizeof(sin), 1);
	T_ASSERT_EQ(t_run(&r, 1), -EBADF);
	prep_bind(&r, p[0], &sin, sizeof(sin), 1);
	T_ASSERT_EQ(t_run(&r, 1), -ENOTSOCK);
	/* the bind itself, then a second one */
	prep_bind(&r, s, &sin, sizeof(sin), 2);
	T_ASSERT_EQ(t_run(&r, 2), 0);
	T_ASSERT_EQ(getsockname(s, (struct sockaddr *)&bound, &blen), 0);
	T_ASSERT_NE(bound.sin_port, 0);
	prep_bind(&r, s, &sin, sizeof(sin), 3);
	T_ASSERT_EQ(t_run(&r, 3), -EINVAL);
	/* the same port from another socket */
	s2 = socket(AF_INET, SOCK_STREAM, 0);
	T_ASSERT_GE(s2, 0);
	prep_bind(&r, s2, &bound, sizeof(bound), 4);
	T_ASSERT_EQ(t_run(&r, 4), -EADDRINUSE);
	/* listen's checks */
	sqe = prep_listen(&r, s, 4, 5);
	sqe->addr2 = 1;
	T_ASSERT_EQ(t_run(&r, 5), -EINVAL);
	sqe = prep_listen(&r, s, 4, 5);
	sqe->addr = 1;
	T_ASSERT_EQ(t_run(&r, 5), -EINVAL);
	prep_listen(&r, p[0], 4, 5);
	T_ASSERT_EQ(t_run(&r, 5), -ENOTSOCK);
	prep_listen(&r, 1000, 4, 5);
	T_ASSERT_EQ(t_run(&r, 5), -EBADF);
	u = socket(AF_INET, SOCK_DGRAM, 0);
	T_ASSERT_GE(u, 0);
	prep_listen(&r, u, 4, 5);
	T_ASSERT_EQ(t_run(&r, 5), -EOPNOTSUPP);
	prep_listen(&r, s, 4, 6);
	T_ASSERT_EQ(t_run(&r, 6), 0);
	check_listening(s);
	close(u);
	close(s2);
	close(s);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/* A socket in a fixed slot, bound and listening in one link. */
static void fixed_linked(void)
{
	struct sockaddr_in sin;
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int s, fd;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	s = socket(AF_INET, SOCK_STREAM, 0);
	T_ASSERT_GE(s, 0);
	T_ASSERT_EQ(t_reg_files2(&r, 1, &s, NULL, 0), 0);
	loopback(&sin, 0);
	sqe = prep_bind(&r, 0, &sin, sizeof(sin), 10);
	sqe->flags = IOSQE_FIXED_FILE | IOSQE_IO_LINK;
	sqe = prep_listen(&r, 0, 8, 11);
	sqe->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 10, 0);
	t_expect_cqe(&r, 11, 0);
	/* The slot holds the same socket: the program's fd listens. */
	check_listening(s);
	/* A failed bind (already bound) cancels what is linked to it. */
	sqe = prep_bind(&r, 0, &sin, sizeof(sin), 12);
	sqe->flags = IOSQE_FIXED_FILE | IOSQE_IO_LINK;
	sqe = prep_listen(&r, 0, 8, 13);
	sqe->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit(&r), 2);
	t_expect_cqe(&r, 12, -EINVAL);
	t_expect_cqe(&r, 13, -ECANCELED);
	/* An empty slot is -EBADF. */
	fd = -1;
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 0, 1, &fd,
				   NULL),
		    1);
	sqe = prep_listen(&r, 0, 8, 14);
	sqe->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_run(&r, 14), -EBADF);
	close(s);
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	plain();
	fixed_linked();
	return T_EXIT_PASS;
}
