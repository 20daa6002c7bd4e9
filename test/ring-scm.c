/* SPDX-License-Identifier: MIT */
/*
 * A ring fd in an SCM_RIGHTS message: the kernel refuses io_uring files
 * there (-EINVAL, 6.7 on; earlier kernels let them through, and the test
 * skips), so that no socket in flight keeps a ring alive. nowait's ring is
 * a memfd, which the kernel passes: the preload's sendmsg() refuses it,
 * so the user engine runs this under the preload. A pipe's fd in the same
 * message goes through; a message with a pipe's fd and a ring fd fails
 * whole, and nothing of it is queued.
 */
#include <sys/socket.h>
#include <unistd.h>
#include "helpers.h"

#define CHILD_ENV "NOWAIT_TEST_RINGSCM_CHILD"

/* sendmsg of n fds on s: 0, or -errno. */
static int send_fds(int s, const int *fds, int n)
{
	char buf[CMSG_SPACE(2 * sizeof(int))] __attribute__((aligned(8)));
	struct iovec iov = {.iov_base = "x", .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;

	memset(buf, 0, sizeof(buf));
	msg.msg_control = buf;
	msg.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
	return sendmsg(s, &msg, 0) < 0 ? -errno : 0;
}

/* One datagram in: its payload and how many fds came with it. */
static int recv_fds(int s)
{
	char buf[CMSG_SPACE(2 * sizeof(int))] __attribute__((aligned(8)));
	char byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;
	int n = 0, fd;

	msg.msg_control = buf;
	msg.msg_controllen = sizeof(buf);
	T_ASSERT_EQ(recvmsg(s, &msg, MSG_DONTWAIT), 1);
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		for (size_t i = 0;
		     i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			close(fd);
			n++;
		}
	}
	return n;
}

static int run_checks(void)
{
	struct t_ring r;
	int sp[2], p[2], fds[2], ret;

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sp), 0);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);

	/* A plain fd goes through. */
	T_ASSERT_EQ(send_fds(sp[0], &p[0], 1), 0);
	T_ASSERT_EQ(recv_fds(sp[1]), 1);

	ret = send_fds(sp[0], &r.fd, 1);
	if (ret == 0 && t_engine() == T_ENGINE_KERNEL && !getenv(CHILD_ENV)) {
		printf("skip: this kernel passes io_uring fds (before 6.7)\n");
		return T_EXIT_SKIP;
	}
	T_ASSERT_EQ(ret, -EINVAL);
	/* A ring fd among others fails the whole message. */
	fds[0] = p[1];
	fds[1] = r.fd;
	T_ASSERT_EQ(send_fds(sp[0], fds, 2), -EINVAL);
	/* Nothing was queued by the failed sends. */
	T_ASSERT_EQ(recv(sp[1], &ret, 1, MSG_DONTWAIT), -1);
	T_ASSERT_EQ(errno, EAGAIN);

	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
	close(sp[0]);
	close(sp[1]);
	return T_EXIT_PASS;
}

int main(void)
{
	t_watchdog(30);
	if (getenv(CHILD_ENV)) {
		T_ASSERT(t_ring_is_nowait()); /* really the preload's engine */
		return run_checks();
	}
	t_require_engine();
	if (t_engine() == T_ENGINE_KERNEL)
		return run_checks();
	/* Linked directly, nothing sees the program's sendmsg: preload. */
	t_rerun_preloaded(CHILD_ENV, 20000);
	return T_EXIT_PASS;
}
