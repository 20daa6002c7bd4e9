/* SPDX-License-Identifier: MIT */
/*
 * A signal raised by the submit part of enter(GETEVENTS) ends its wait
 * with -EINTR, against the kernel: a WRITE into a pipe whose read end is
 * O_ASYNC (owner: this thread) makes the write itself queue SIGIO while it
 * is issued inline. The kernel leaves the signal pending, so the wait that
 * follows in the same enter ends at once (-EINTR, which enter reports as
 * the count submitted; the handler runs on the way out); it must not run
 * the handler unseen and go on waiting. The wait has no timeout: a lost
 * signal hangs it and the watchdog fails the test. The WRITE is
 * CQE_SKIP_SUCCESS, so the CQ stays empty. Also with a READ that parks in
 * the same batch, and on SINGLE_ISSUER|DEFER_TASKRUN; and with sockets
 * (run_sock).
 * Semantics: io_uring.c io_cqring_wait (kernel-semantics.md 4).
 */
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "helpers.h"

static volatile sig_atomic_t hits;

static void on_sigio(int sig)
{
	(void)sig;
	hits++;
}

static void async_owner(int fd)
{
	struct f_owner_ex own = {.type = F_OWNER_TID,
				 .pid = (pid_t)syscall(SYS_gettid)};

	T_ASSERT_EQ(fcntl(fd, F_SETOWN_EX, &own), 0);
	T_ASSERT_EQ(fcntl(fd, F_SETSIG, 0), 0);
	T_ASSERT_EQ(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC), 0);
}

static void run(unsigned int setup_flags, bool with_read)
{
	struct io_uring_params p = {.flags = setup_flags};
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	struct t_ring r;
	char buf[8];
	int sigp[2], other[2], ret;
	unsigned int n = 1;

	T_ASSERT_EQ(pipe(sigp), 0);
	T_ASSERT_EQ(pipe(other), 0);
	async_owner(sigp[0]);
	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	if (with_read) {
		t_prep_rw(t_get_sqe(&r), IORING_OP_READ, other[0], buf,
			  sizeof(buf), 0, 2);
		n++;
	}
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_WRITE, sigp[1], "x", 1, 0, 1);
	sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
	hits = 0;
	ret = t_enter(r.fd, t_ring_flush(&r), n, IORING_ENTER_GETEVENTS, NULL,
		      0);
	T_ASSERT_EQ(ret, (int)n);
	T_ASSERT_EQ(hits, 1);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), -EAGAIN);
	T_ASSERT_EQ(read(sigp[0], buf, 1), 1);
	if (with_read) {
		T_ASSERT_EQ(write(other[1], "ab", 2), 2);
		t_expect_cqe(&r, 2, 2);
	}
	t_ring_exit(&r);
	close(sigp[0]);
	close(sigp[1]);
	close(other[0]);
	close(other[1]);
}

/*
 * SENDs and RECVs: a SEND into a socket whose peer is O_ASYNC (owner:
 * this thread) queues SIGIO as it moves the data.
 * need 1, RECV (parks) then SEND: the SEND's CQE ends the wait, which
 * returns 2 with the handler run once. need 2, SEND then RECV: the wait
 * sleeps for the RECV, so the SIGIO of the SEND must end it (-EINTR,
 * enter says 2). need 1, RECV then a CQE_SKIP_SUCCESS SEND: no CQE, so
 * the same. A lost SIGIO hangs the wait and the watchdog fails the test.
 */
static void run_sock(unsigned int setup_flags, unsigned int need, bool skip)
{
	struct io_uring_params p = {.flags = setup_flags};
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	struct t_ring r;
	char buf[8], rbuf[8];
	int tx[2], rx[2], ret;
	bool recv_first = need == 1;

	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, tx), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, rx), 0);
	async_owner(tx[1]);
	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	if (recv_first)
		t_prep_rw(t_get_sqe(&r), IORING_OP_RECV, rx[0], rbuf,
			  sizeof(rbuf), 0, 2);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_SEND, tx[0], "x", 1, 0, 1);
	if (skip)
		sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
	if (!recv_first)
		t_prep_rw(t_get_sqe(&r), IORING_OP_RECV, rx[0], rbuf,
			  sizeof(rbuf), 0, 2);
	hits = 0;
	ret = t_enter(r.fd, t_ring_flush(&r), need, IORING_ENTER_GETEVENTS,
		      NULL, 0);
	T_ASSERT_EQ(ret, 2);
	T_ASSERT_EQ(hits, 1);
	if (skip) {
		T_ASSERT_EQ(t_peek_cqe(&r, &cqe), -EAGAIN);
	} else {
		T_ASSERT_EQ(t_peek_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, 1);
		T_ASSERT_EQ(cqe.res, 1);
	}
	T_ASSERT_EQ(read(tx[1], buf, sizeof(buf)), 1);
	T_ASSERT_EQ(write(rx[1], "ab", 2), 2);
	t_expect_cqe(&r, 2, 2);
	t_ring_exit(&r);
	close(tx[0]);
	close(tx[1]);
	close(rx[0]);
	close(rx[1]);
}

int main(void)
{
#if defined(__SANITIZE_THREAD__)
	/* TSan runs signal handlers late, at its own points. */
	printf("skip: ThreadSanitizer defers signal handlers\n");
	return T_EXIT_SKIP;
#endif
	struct sigaction sa;

	t_require_engine();
	t_watchdog(20);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigio;
	sigemptyset(&sa.sa_mask);
	T_ASSERT_EQ(sigaction(SIGIO, &sa, NULL), 0);
	run(0, false);
	run(0, true);
	run(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, false);
	run(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, true);
	for (unsigned int f = 0; f < 2; f++) {
		unsigned int flags = f ? IORING_SETUP_SINGLE_ISSUER |
						     IORING_SETUP_DEFER_TASKRUN
				       : 0;

		run_sock(flags, 1, false);
		run_sock(flags, 2, false);
		run_sock(flags, 1, true);
	}
	return T_EXIT_PASS;
}
