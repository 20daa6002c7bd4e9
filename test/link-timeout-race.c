/* SPDX-License-Identifier: MIT */
/*
 * A LINK_TIMEOUT that fires while its request is woken: a READ of one byte
 * from a socket, linked to a timeout of a few microseconds, while another
 * thread sends bytes to the socket and steals each back at once (recv
 * MSG_DONTWAIT), so that the read is woken, often for nothing, at about
 * the time its timeout fires. Whatever the timing, the kernel's rules
 * (io_uring/timeout.c io_link_timeout_fn, io_req_task_link_timeout) give
 * exactly one CQE each, in one of these pairs:
 * - the timeout fired first: the read -ECANCELED, the timeout -ETIME;
 * - the read completed first (1 byte): the timeout -ECANCELED, or, if the
 *   read completed in the window after the timer fired and before its
 *   task work ran, that cancel's answer: -ENOENT (or -EALREADY), and on a
 *   DEFER_TASKRUN ring even -ETIME (6.18 gives it: the read's wake and the
 *   timeout's task work run in the same enter);
 * on nowait never the timeout -ENOENT with the read still pending (a lost
 * CQE; the kernel can leave it so: kernel_left_read). The
 * bytes tell which: sent - stolen - left over is what the read took.
 * Plain and DEFER_TASKRUN rings, a bounded number of rounds each.
 */
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "helpers.h"

#define ROUNDS 300
#define SENDS  4

/* One peer per setup, driven round by round (go: the round to run). */
struct peer {
	pthread_t thread;
	int wfd, rfd;	    /* sends to wfd, steals from rfd */
	unsigned int delay; /* spins before the first send */
	unsigned int go, done;
	int sent, stolen;
};

static void *peer_main(void *arg)
{
	struct peer *p = arg;
	char c = 'x';

	for (unsigned int round = 1; round <= ROUNDS; round++) {
		for (long i = 0;
		     i < 100000000L &&
		     __atomic_load_n(&p->go, __ATOMIC_ACQUIRE) != round;
		     i++)
			if (i > 1000)
				sched_yield();
		for (volatile unsigned int i = 0; i < p->delay; i++)
			;
		for (int i = 0; i < SENDS; i++) {
			if (send(p->wfd, &c, 1, 0) == 1)
				p->sent++;
			if (recv(p->rfd, &c, 1, MSG_DONTWAIT) == 1)
				p->stolen++;
		}
		__atomic_store_n(&p->done, round, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int left_over(int fd)
{
	int n = -1;

	T_ASSERT_EQ(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

struct tally {
	unsigned int cancelled, read_first, read_enoent, kernel_left;
};

/*
 * The kernel's own window: its timer fired, the cancel found the read
 * between a wake and its re-arm (io_try_cancel -ENOENT or -EALREADY), the
 * timeout posted that, and the read armed again for data the peer then
 * stole back. The kernel gives no second try (nowait's LT_FIRED does), so
 * there the read waits for a byte: once the peer is done, give it one
 * (counted as sent) and wait again. Only for the kernel, only then.
 */
static int kernel_left_read(const int *seen, const int *res, struct peer *peer,
			    unsigned int i)
{
	char c = 'y';

	if (t_engine() != T_ENGINE_KERNEL || seen[1] || !seen[2] ||
	    (res[2] != -ENOENT && res[2] != -EALREADY))
		return 0;
	if (__atomic_load_n(&peer->done, __ATOMIC_ACQUIRE) != i + 1)
		return 0;
	T_ASSERT_EQ(send(peer->wfd, &c, 1, 0), 1);
	peer->sent++;
	return 1;
}

static void one_round(unsigned int flags, unsigned int i, struct peer *peer,
		      struct tally *t)
{
	struct io_uring_params p = {.flags = flags};
	struct __kernel_timespec ts = {.tv_nsec = 1000 + (i % 32) * 3000};
	struct io_uring_cqe cqe;
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int res[3] = {0, 1, 1}, seen[3] = {0};
	char buf[SENDS], c;
	int s[2] = {peer->rfd, peer->wfd}, took;

	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_READ, s[0], buf, 1, 0, 1);
	sqe->flags = IOSQE_IO_LINK;
	sqe = t_get_sqe(&r);
	sqe->opcode = IORING_OP_LINK_TIMEOUT;
	sqe->addr = (uint64_t)(uintptr_t)&ts;
	sqe->len = 1;
	sqe->user_data = 2;
	peer->delay = (i % 5) * 2000;
	peer->sent = peer->stolen = 0;
	T_ASSERT_EQ(t_submit(&r), 2);
	__atomic_store_n(&peer->go, i + 1, __ATOMIC_RELEASE);
	for (int n = 0; n < 2; n++) {
		/* 10 s: only a CQE that never comes reaches it. */
		int ret = t_wait_cqe_timeout(&r, &cqe, 10000);

		if (ret && kernel_left_read(seen, res, peer, i)) {
			t->kernel_left++;
			n--;
			continue;
		}
		if (ret) {
			fprintf(stderr,
				"round %u: CQE %d of 2 missing (%d): read %s, "
				"timeout %s\n",
				i, n + 1, ret, seen[1] ? "done" : "pending",
				seen[2] ? "done" : "pending");
			if (seen[2])
				fprintf(stderr, "  the timeout's res: %d\n",
					res[2]);
			abort();
		}
		T_ASSERT(cqe.user_data == 1 || cqe.user_data == 2);
		T_ASSERT_EQ(seen[cqe.user_data]++, 0);
		res[cqe.user_data] = cqe.res;
	}
	for (long k = 0;
	     k < 100000000L &&
	     __atomic_load_n(&peer->done, __ATOMIC_ACQUIRE) != i + 1;
	     k++)
		sched_yield();
	T_ASSERT_EQ(__atomic_load_n(&peer->done, __ATOMIC_ACQUIRE), i + 1);
	t_expect_no_cqe(&r, 0);
	/* What the read took: sent, minus stolen, minus what is still there. */
	took = peer->sent - peer->stolen - left_over(s[0]);
	while (left_over(s[0]) > 0)
		T_ASSERT_EQ(read(s[0], &c, 1), 1);
	if (getenv("LTR_VERBOSE"))
		fprintf(stderr, "round %u: read %d, timeout %d, took %d\n", i,
			res[1], res[2], took);
	if (res[1] == -ECANCELED) {
		T_ASSERT_EQ(res[2], -ETIME);
		T_ASSERT_EQ(took, 0);
		t->cancelled++;
	} else {
		T_ASSERT_EQ(res[1], 1);
		T_ASSERT_EQ(took, 1);
		T_ASSERT(res[2] == -ECANCELED || res[2] == -ENOENT ||
			 res[2] == -EALREADY || res[2] == -ETIME);
		if (res[2] == -ECANCELED)
			t->read_first++;
		else
			t->read_enoent++;
	}
	t_ring_exit(&r);
}

int main(void)
{
	static const unsigned int setups[] = {
		0, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};

	t_require_engine();
	t_watchdog(120);
	for (unsigned int k = 0; k < 2; k++) {
		struct tally t = {0};
		struct peer peer = {0};
		int s[2];

		T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
		peer.rfd = s[0];
		peer.wfd = s[1];
		T_ASSERT_EQ(
			pthread_create(&peer.thread, NULL, peer_main, &peer),
			0);
		for (unsigned int i = 0; i < ROUNDS; i++)
			one_round(setups[k], i, &peer, &t);
		T_ASSERT_EQ(pthread_join(peer.thread, NULL), 0);
		close(s[0]);
		close(s[1]);
		fprintf(stderr,
			"setup 0x%x: %u rounds: timeout first %u, read first "
			"%u (timeout -ECANCELED), read in the window %u "
			"(left waiting by the kernel %u)\n",
			setups[k], ROUNDS, t.cancelled, t.read_first,
			t.read_enoent, t.kernel_left);
		T_ASSERT_EQ(t.cancelled + t.read_first + t.read_enoent, ROUNDS);
	}
	return T_EXIT_PASS;
}
