/* SPDX-License-Identifier: MIT */
/*
 * Synchronous signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS)
 * are never blocked by the engine: not in a thread sleeping in
 * enter(GETEVENTS) (its SigBlk, read from another thread while it sleeps),
 * nor in any thread of the process once the engine started its own (a
 * reactor for a parked read, a worker for an fsync, an SQPOLL poller). A
 * fault there must run its handler (a sanitizer's report) or kill; a
 * blocked synchronous signal hides it. On the kernel, its io threads
 * (iou-sqp, iou-wrk) run no user code and block everything: counted, not
 * checked.
 */
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "helpers.h"

static const int sync_sigs[] = {SIGSEGV, SIGBUS,  SIGFPE,
				SIGILL,	 SIGTRAP, SIGSYS};

/*
 * Thread tid's blocked signals 1-32 (field 32 of its stat, all the
 * synchronous ones are among them; status would take the mm's lock), its
 * name into name; -1 if it is gone.
 */
static long long sig_blocked(pid_t tid, char *name, size_t len)
{
	char path[64], buf[1024], *p, *q;
	long long blk = -1;
	int field;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (t_read_text(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strchr(buf, '(');
	q = strrchr(buf, ')');
	if (!p || !q)
		return -1;
	if (name)
		snprintf(name, len, "%.*s", (int)(q - p - 1), p + 1);
	/* Fields from 3 on follow ") "; blocked is the 32nd. */
	p = q + 2;
	for (field = 3; field < 32 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		blk = strtoll(p, NULL, 10);
	return blk;
}

static bool sync_blocked(long long blk)
{
	for (size_t i = 0; i < sizeof(sync_sigs) / sizeof(sync_sigs[0]); i++)
		if (blk & (1LL << (sync_sigs[i] - 1)))
			return true;
	return false;
}

static void check_mask(pid_t tid, long long blk, const char *name)
{
	for (size_t i = 0; i < sizeof(sync_sigs) / sizeof(sync_sigs[0]); i++)
		if (blk & (1LL << (sync_sigs[i] - 1))) {
			fprintf(stderr, "thread %d (%.15s) blocks signal %d\n",
				(int)tid, name, sync_sigs[i]);
			T_ASSERT(0);
		}
}

/* Every thread of the process; returns how many were looked at. */
static int check_all_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	T_ASSERT(d != NULL);
	while ((e = readdir(d))) {
		char name[32] = "";
		pid_t tid = (pid_t)atoi(e->d_name);
		long long blk;

		if (tid <= 0)
			continue;
		blk = sig_blocked(tid, name, sizeof(name));
		if (blk < 0)
			continue;
		n++;
		/* The kernel's io threads run no user code: not ours. */
		if (!strncmp(name, "iou-", 4))
			continue;
		check_mask(tid, blk, name);
	}
	closedir(d);
	return n;
}

struct watcher {
	pid_t tid;
	int wfd;
	int seen; /* the sleeper's masks looked at */
};

/* Look at the sleeper's mask a few times, then end its wait. */
static void *watch(void *arg)
{
	struct watcher *w = arg;
	char name[32] = "";

	for (int i = 0; i < 20; i++) {
		long long blk;

		usleep(5000);
		blk = sig_blocked(w->tid, name, sizeof(name));
		/*
		 * pthread_create blocks every signal around its clone (glibc,
		 * and TSan's interceptor): a thread the engine starts during
		 * the wait may show that for an instant. A wait's own mask
		 * stays: look again before calling it blocked.
		 */
		for (int j = 0; j < 3 && blk > 0 && sync_blocked(blk); j++) {
			usleep(1000);
			blk = sig_blocked(w->tid, name, sizeof(name));
		}
		if (blk >= 0) {
			check_mask(w->tid, blk, name);
			w->seen++;
		}
	}
	T_ASSERT_EQ(write(w->wfd, "x", 1), 1);
	return NULL;
}

static void test_wait(unsigned int flags)
{
	struct io_uring_params p = {.flags = flags};
	struct watcher w = {.tid = (pid_t)syscall(SYS_gettid)};
	struct t_ring r;
	pthread_t th;
	char buf[4];
	int fds[2];

	T_ASSERT_EQ(pipe(fds), 0);
	T_ASSERT_EQ(t_ring_init(&r, 4, &p), 0);
	w.wfd = fds[1];
	t_prep_rw(t_get_sqe(&r), IORING_OP_READ, fds[0], buf, 1, 0, 1);
	T_ASSERT_EQ(pthread_create(&th, NULL, watch, &w), 0);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	pthread_join(th, NULL);
	T_ASSERT_GT(w.seen, 0);
	t_expect_cqe(&r, 1, 1);
	if (!T_TSAN)
		check_all_threads();
	t_ring_exit(&r);
	close(fds[0]);
	close(fds[1]);
}

static void test_threads(void)
{
	char path[] = "/tmp/nowait-syncsig.XXXXXX";
	struct io_uring_params p = {.flags = IORING_SETUP_SQPOLL};
	struct io_uring_sqe *sqe;
	struct t_ring r, sq;
	int fd = mkstemp(path);
	bool have_sq;

	T_ASSERT_GE(fd, 0);
	unlink(path);
	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	sqe = t_get_sqe(&r);
	sqe->opcode = IORING_OP_FSYNC;
	sqe->fd = fd;
	sqe->flags = IOSQE_ASYNC; /* a worker on both engines */
	sqe->user_data = 1;
	T_ASSERT_EQ(t_run(&r, 1), 0);
	have_sq = t_ring_init(&sq, 4, &p) == 0;
	if (have_sq) {
		t_prep_nop(t_get_sqe(&sq), 2);
		T_ASSERT_EQ(t_enter(sq.fd, t_ring_flush(&sq), 0,
				    IORING_ENTER_SQ_WAKEUP, NULL, 0),
			    1);
		t_expect_cqe(&sq, 2, 0);
	}
	/* (TSan's own background thread blocks every signal.) */
	if (!T_TSAN)
		T_ASSERT_GT(check_all_threads(), 1);
	if (have_sq)
		t_ring_exit(&sq);
	t_ring_exit(&r);
	close(fd);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_wait(0);
	test_wait(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	test_threads();
	return T_EXIT_PASS;
}
