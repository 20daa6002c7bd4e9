/* SPDX-License-Identifier: MIT */
/*
 * Ignored signals sent all through waits that must time out: the kernel
 * discards a signal whose disposition ignores it as it is sent to a task
 * that does not block it (kernel/signal.c sig_ignored), so its wait never
 * sees one and ends with -ETIME. A thread sends SIGUSR1 (at SIG_IGN) and
 * SIGCHLD (at its default, which ignores) to the waiter as fast as it can
 * while the waiter does short timed waits with a RECV parked on an empty
 * socket. The engine holds every signal around its waits, so each one
 * that comes then is queued; a sleep that let it in with epoll_pwait2
 * said EINTR for it (epoll does not restart), whatever was checked just
 * before the sleep. No wait may end with -EINTR. Both ring kinds: the
 * DEFER_TASKRUN waiter drives the reactor and sleeps in it, the other
 * sleeps on its eventfd. Semantics: io_uring/wait.c io_cqring_wait,
 * kernel-semantics.md 4.
 */
#include <signal.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "helpers.h"

#define WAITS	150
#define WAIT_US 2000
#define DEFER	(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)
#define RECV_UD 7

static volatile int stop_storm;
static pid_t waiter_tid;

static void *storm(void *arg)
{
	unsigned long n = 0;

	(void)arg;
	while (!__atomic_load_n(&stop_storm, __ATOMIC_RELAXED)) {
		syscall(SYS_tgkill, getpid(), waiter_tid,
			n++ & 1 ? SIGCHLD : SIGUSR1);
		if (!(n & 15))
			usleep(20);
	}
	return (void *)n;
}

/* One timed wait: its result (-ETIME expected). */
static int timed_wait(struct t_ring *r)
{
	struct __kernel_timespec ts = {0, WAIT_US * 1000};
	struct io_uring_getevents_arg arg;

	memset(&arg, 0, sizeof(arg));
	arg.ts = (uint64_t)(uintptr_t)&ts;
	return t_enter(r->fd, 0, 1,
		       IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg,
		       sizeof(arg));
}

static void run(unsigned int flags)
{
	struct io_uring_params p;
	struct io_uring_cqe cqe;
	struct t_ring r;
	pthread_t th;
	void *sent;
	char buf[16];
	int sv[2], i, eintr = 0, etime = 0, ret;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	t_queue_rw(&r, IORING_OP_RECV, sv[0], buf, sizeof(buf), 0, RECV_UD);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), -EAGAIN);

	waiter_tid = (pid_t)syscall(SYS_gettid);
	stop_storm = 0;
	T_ASSERT_EQ(pthread_create(&th, NULL, storm, NULL), 0);
	for (i = 0; i < WAITS; i++) {
		ret = timed_wait(&r);
		if (ret == -EINTR)
			eintr++;
		else if (ret == -ETIME)
			etime++;
		else
			T_ASSERT_EQ(ret, -ETIME);
	}
	__atomic_store_n(&stop_storm, 1, __ATOMIC_RELAXED);
	T_ASSERT_EQ(pthread_join(th, &sent), 0);
	fprintf(stderr, "[%s] flags 0x%x: %d waits, %lu signals, %d EINTR\n",
		t_engine_name(), flags, WAITS, (unsigned long)sent, eintr);
	T_ASSERT_GT((unsigned long)sent, WAITS);
	T_ASSERT_EQ(eintr, 0);
	T_ASSERT_EQ(etime, WAITS);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), -EAGAIN); /* the RECV still waits */

	/* Data ends it as usual. */
	T_ASSERT_EQ(write(sv[1], "x", 1), 1);
	T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, RECV_UD);
	T_ASSERT_EQ(cqe.res, 1);
	close(sv[0]);
	close(sv[1]);
	t_ring_exit(&r);
}

int main(void)
{
	struct sigaction sa;

	if (T_TSAN) {
		/* TSan runs signal handlers late, at its own points. */
		printf("skip: ThreadSanitizer defers signals\n");
		return T_EXIT_SKIP;
	}
	t_require_engine();
	t_watchdog(60);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	T_ASSERT_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	sa.sa_handler = SIG_DFL;
	T_ASSERT_EQ(sigaction(SIGCHLD, &sa, NULL), 0);
	run(DEFER);
	run(0);
	return T_EXIT_PASS;
}
