/* SPDX-License-Identifier: MIT */
/*
 * ACCEPT on files that are no sockets, multishot and POLL_FIRST, against
 * the kernel (io_uring/net.c io_accept, io_uring.c io_queue_async and
 * io_wq_submit_work):
 * - MULTISHOT on a regular file: the first attempt's -ENOTSOCK;
 * - MULTISHOT|POLL_FIRST on a regular file (no ->poll): io-wq refuses a
 *   multishot on an unpollable file, -EBADFD;
 * - MULTISHOT|POLL_FIRST on an empty pipe: armed on POLLIN, no attempt
 *   until the pipe is readable, then -ENOTSOCK;
 * - MULTISHOT|POLL_FIRST|DONTWAIT: -EAGAIN at once;
 * - MULTISHOT on a pipe: -ENOTSOCK at once;
 * - POLL_FIRST (single-shot) on a regular file: the arm fails, io-wq runs
 *   it still unpolled: -EAGAIN; on a pipe made readable: -ENOTSOCK.
 * - MULTISHOT with IOSQE_ASYNC: -EBADFD on a regular file, -ENOTSOCK on
 *   a ring's own fd, which the kernel can poll.
 * Found by diff-fuzz (the kernel parked where nowait said -ENOTSOCK; the
 * kernel's -ENOTSOCK for a ring's fd where nowait said -EBADFD).
 */
#include <fcntl.h>
#include <unistd.h>
#include "helpers.h"

#define ACC_MULTISHOT  (1U << 0)
#define ACC_DONTWAIT   (1U << 1)
#define ACC_POLL_FIRST (1U << 2)

static struct io_uring_sqe *queue_accept(struct t_ring *r, int fd,
					 unsigned int flags)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = IORING_OP_ACCEPT;
	sqe->fd = fd;
	sqe->ioprio = (uint16_t)flags;
	sqe->user_data = 1;
	return sqe;
}

static int run_accept(struct t_ring *r, int fd, unsigned int flags)
{
	queue_accept(r, fd, flags);
	return t_run(r, 1);
}

/*
 * MULTISHOT with IOSQE_ASYNC: io-wq refuses a multishot on a file it
 * cannot poll (a regular file: -EBADFD) but polls the ring's own fd
 * (io_uring_poll), so the accept is made: -ENOTSOCK. nowait's ring fd is
 * a memfd that epoll refuses; diff-fuzz found its -EBADFD there.
 */
static void test_async(struct t_ring *r, int file)
{
	static const unsigned int fl[] = {ACC_MULTISHOT,
					  ACC_MULTISHOT | ACC_DONTWAIT};

	for (unsigned int i = 0; i < 2; i++) {
		queue_accept(r, file, fl[i])->flags = IOSQE_ASYNC;
		T_ASSERT_EQ(t_run(r, 1), -EBADFD);
		queue_accept(r, r->fd, fl[i])->flags = IOSQE_ASYNC;
		T_ASSERT_EQ(t_run(r, 1), -ENOTSOCK);
	}
}

int main(void)
{
	char name[] = "/tmp/nowait-accept-nonsock.XXXXXX";
	struct t_ring r;
	int f, p[2];

	t_require_engine();
	t_watchdog(30);
	f = mkstemp(name);
	T_ASSERT_GE(f, 0);
	unlink(name);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);

	T_ASSERT_EQ(run_accept(&r, f, ACC_MULTISHOT), -ENOTSOCK);
	T_ASSERT_EQ(run_accept(&r, f, ACC_MULTISHOT | ACC_POLL_FIRST), -EBADFD);
	T_ASSERT_EQ(run_accept(&r, p[0],
			       ACC_MULTISHOT | ACC_POLL_FIRST | ACC_DONTWAIT),
		    -EAGAIN);
	T_ASSERT_EQ(run_accept(&r, p[0], ACC_MULTISHOT), -ENOTSOCK);

	T_ASSERT_EQ(run_accept(&r, f, ACC_POLL_FIRST), -EAGAIN);
	T_ASSERT_EQ(run_accept(&r, f, 0), -ENOTSOCK);

	queue_accept(&r, p[0], ACC_MULTISHOT | ACC_POLL_FIRST);
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 50);
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	t_expect_cqe(&r, 1, -ENOTSOCK);
	T_ASSERT_EQ(run_accept(&r, p[0], ACC_POLL_FIRST), -ENOTSOCK);

	test_async(&r, f);
	t_ring_exit(&r);
	close(f);
	close(p[0]);
	close(p[1]);
	return T_EXIT_PASS;
}
