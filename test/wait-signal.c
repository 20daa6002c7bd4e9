/* SPDX-License-Identifier: MIT */
/*
 * io_uring_enter(GETEVENTS) and signals: a signal during the wait ends it
 * with -EINTR and its handler runs once (SA_RESTART or not; sent to the
 * thread, or to the process by a timer); a signal blocked by the sigmask
 * argument does not end the wait and its handler runs only after enter
 * returned; a pending signal that the argument unblocks ends the wait at
 * once, the handler running under the argument's mask, and the thread's
 * own mask is back afterwards; a non-empty CQ turns -EINTR into 0.
 * Every case runs on a plain ring and on SINGLE_ISSUER|DEFER_TASKRUN, and
 * on the user engine under NOWAIT_SPIN_US 0, 20000 (20 ms), 100000
 * (100 ms) and adaptive: a signal must end a spin at once (well within
 * 50 ms of a 100 ms spin), and a spin must not let a blocked signal in.
 * Semantics: io_uring.c io_cqring_wait, kernel/signal.c set_user_sigmask
 * (kernel-semantics.md 4).
 */
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

#define MS 1000ULL /* in t_now_us() units */

static const char *cur_spin = "-";
static unsigned int cur_flags;

static const char *const spins[] = {"0", "20000", "100000", "adaptive"};
static const unsigned int ring_flags[] = {
	0, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};

#define GETEV_EXT (IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG)

/* What the handler saw: how often, when, and the mask it ran under. */
static volatile sig_atomic_t hits;
static volatile uint64_t hit_us;
static volatile sig_atomic_t hit_usr2_blocked;
/* Set around the enter calls: did the handler run inside one? */
static volatile sig_atomic_t in_enter, hit_in_enter;
/* How many enter calls began (the killer's gate). */
static unsigned int enters;

static void on_signal(int sig)
{
	sigset_t cur;

	(void)sig;
	hit_us = t_now_us();
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	hit_usr2_blocked = sigismember(&cur, SIGUSR2);
	hit_in_enter = in_enter;
	hits++;
}

static void handle(int sig, int sa_flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = sa_flags;
	sigemptyset(&sa.sa_mask);
	T_ASSERT_EQ(sigaction(sig, &sa, NULL), 0);
	hits = 0;
	hit_us = 0;
	hit_usr2_blocked = -1;
	hit_in_enter = -1;
	in_enter = 0;
}

static void unhandle(int sig)
{
	signal(sig, SIG_DFL);
}

static void ring_init(struct t_ring *r)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = cur_flags;
	setenv("NOWAIT_SPIN_US", cur_spin, 1);
	T_ASSERT_EQ(t_ring_init(r, 8, &p), 0);
	unsetenv("NOWAIT_SPIN_US");
}

/* A read parked on the empty pipe p: in flight, never completes alone. */
static void park_read(struct t_ring *r, int p[2], char *buf, uint64_t ud)
{
	struct io_uring_sqe *sqe;

	T_ASSERT_EQ(pipe(p), 0);
	sqe = t_get_sqe(r);
	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_READ, p[0], buf, 1, 0, ud);
	T_ASSERT_EQ(t_submit(r), 1);
	T_ASSERT_EQ(t_cq_ready(r), 0);
}

static void unpark_read(struct t_ring *r, int p[2], uint64_t ud)
{
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	t_expect_cqe(r, ud, 1);
	close(p[0]);
	close(p[1]);
}

/*
 * A thread that sends sig to target delay_us after the target began its
 * enter (counted in enters by sig_enter just before the call: on a loaded
 * machine the target may be preempted for longer than the delay between
 * the killer's start and its enter, and a signal that comes before the
 * wait proves nothing). With a timer, it arms that instead (a
 * process-directed signal delay_us later). With a rescue fd, it then
 * writes a byte there if the target has not come back from its wait
 * within 2 s, so that a lost -EINTR (the handler ran, the wait went on)
 * fails the test with a message instead of hanging it. Both waits are
 * bounded by the clock, not by a count of naps (a nap on a loaded machine
 * lasts longer than asked).
 */
#define RESCUE_MS 2000
#define GATE_MS	  10000

struct t_killer {
	pthread_t thread, target;
	int sig;
	unsigned int delay_us;
	timer_t *timer;	     /* arm this instead of pthread_kill */
	uint64_t sent_us;    /* the signal was sent (the timer armed) before */
	unsigned int enters; /* enters when the killer started */
	int rescue_fd;
	int done;    /* the target returned (main: release) */
	int rescued; /* the rescue write was needed */
};

/* Wait (bounded) until the target began its enter call. */
static void killer_gate(const struct t_killer *k)
{
	uint64_t end = t_now_us() + GATE_MS * MS;

	while (__atomic_load_n(&enters, __ATOMIC_ACQUIRE) == k->enters) {
		if (t_now_us() > end) {
			fprintf(stderr, "  the target never entered\n");
			abort();
		}
		usleep(100);
	}
}

static void killer_send(struct t_killer *k)
{
	struct itimerspec its;

	if (!k->timer) {
		usleep(k->delay_us);
		pthread_kill(k->target, k->sig);
		k->sent_us = t_now_us(); /* a preempted killer is not late */
		return;
	}
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = k->delay_us / 1000000;
	its.it_value.tv_nsec = (long)(k->delay_us % 1000000) * 1000;
	k->sent_us = t_now_us();
	T_ASSERT_EQ(timer_settime(*k->timer, 0, &its, NULL), 0);
}

static void *killer_fn(void *arg)
{
	struct t_killer *k = arg;
	uint64_t end;

	killer_gate(k);
	killer_send(k);
	if (k->rescue_fd < 0)
		return NULL;
	end = k->sent_us + RESCUE_MS * MS;
	while (t_now_us() < end) {
		if (__atomic_load_n(&k->done, __ATOMIC_ACQUIRE))
			return NULL;
		usleep(1000);
	}
	k->rescued = write(k->rescue_fd, "r", 1) == 1;
	return NULL;
}

static void killer_run(struct t_killer *k, int sig, timer_t *timer,
		       unsigned int delay_us, int rescue_fd)
{
	sigset_t all, old;

	memset(k, 0, sizeof(*k));
	k->target = pthread_self();
	k->sig = sig;
	k->timer = timer;
	k->delay_us = delay_us;
	k->rescue_fd = rescue_fd;
	k->enters = __atomic_load_n(&enters, __ATOMIC_RELAXED);
	/* the killer itself never takes the signal */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	T_ASSERT_EQ(pthread_create(&k->thread, NULL, killer_fn, k), 0);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void killer_start_rescue(struct t_killer *k, int sig,
				unsigned int delay_us, int rescue_fd)
{
	killer_run(k, sig, NULL, delay_us, rescue_fd);
}

static void killer_start(struct t_killer *k, int sig, unsigned int delay_us)
{
	killer_run(k, sig, NULL, delay_us, -1);
}

/* A killer that arms timer delay_us into the target's enter. */
static void killer_start_timer(struct t_killer *k, timer_t *timer,
			       unsigned int delay_us)
{
	killer_run(k, 0, timer, delay_us, -1);
}

/* The wait returned: stop the rescue and join. */
static void killer_join(struct t_killer *k)
{
	__atomic_store_n(&k->done, 1, __ATOMIC_RELEASE);
	T_ASSERT_EQ(pthread_join(k->thread, NULL), 0);
}

/*
 * Was the rescue needed? If the handler ran inside enter, the -EINTR was
 * lost: fail. If it ran before enter began (the test thread was preempted
 * for longer than the killer's delay), the attempt proves nothing: the
 * caller reaps the read the rescue completed and tries again.
 */
static bool rescue_inconclusive(const struct t_killer *k)
{
	if (!k->rescued)
		return false;
	if (hit_in_enter) {
		fprintf(stderr,
			"  [%s] lost -EINTR: the handler ran inside enter "
			"(%d time(s), %lld us after the signal was sent) but "
			"enter went on waiting until a write %d ms later "
			"completed the read\n",
			t_engine_name(), (int)hits,
			(long long)(hit_us - k->sent_us), RESCUE_MS);
		T_ASSERT_EQ(hit_in_enter, 0);
	}
	fprintf(stderr, "  the signal came before enter began: again\n");
	return true;
}

/* enter, marked so that the handler knows it ran inside the call. */
static int sig_enter(int fd, unsigned int min_complete, unsigned int flags,
		     const void *arg, size_t argsz)
{
	int ret;

	in_enter = 1;
	__atomic_add_fetch(&enters, 1, __ATOMIC_RELEASE);
	ret = t_enter(fd, 0, min_complete, flags, arg, argsz);
	in_enter = 0;
	return ret;
}

/*
 * How soon a wait ends (a signal ends a spin at once) is checked against
 * a bound that only a spin running its whole budget exceeds; the machine
 * may be busy (a preempted thread), so the attempt is repeated a few
 * times and the best one counts. Every attempt checks the semantics.
 */
#define ATTEMPTS 5

static void within(uint64_t (*attempt)(void), uint64_t bound_us,
		   const char *what)
{
	uint64_t best = ~0ULL, us;
	int i;

	for (i = 0; i < ATTEMPTS; i++) {
		us = attempt();
		if (us < best)
			best = us;
		if (best < bound_us)
			return;
		fprintf(stderr, "  %s: %llu us (bound %llu us), again\n", what,
			(unsigned long long)us, (unsigned long long)bound_us);
	}
	T_ASSERT_LT(best, bound_us);
}

static int enter_ts(struct t_ring *r, unsigned int min_complete, long long ns,
		    const sigset_t *mask)
{
	struct __kernel_timespec ts = {.tv_sec = ns / 1000000000LL,
				       .tv_nsec = ns % 1000000000LL};
	struct io_uring_getevents_arg arg;

	memset(&arg, 0, sizeof(arg));
	arg.ts = (uint64_t)(uintptr_t)&ts;
	if (mask) {
		arg.sigmask = (uint64_t)(uintptr_t)mask;
		arg.sigmask_sz = _NSIG / 8;
	}
	return sig_enter(r->fd, min_complete, GETEV_EXT, &arg, sizeof(arg));
}

/*
 * A signal 5 ms into a wait on a parked read: -EINTR well within 50 ms
 * (a spin must stop at once), the handler ran once. With a timeout too,
 * and with SA_RESTART (enter is never restarted). Returns the time from
 * the signal to the return.
 */
static uint64_t signal_interrupts(int sa_flags, bool timeout)
{
	struct t_killer k;
	struct t_ring r;
	uint64_t t1;
	char buf[1];
	int p[2], ret;

	handle(SIGUSR1, sa_flags);
	ring_init(&r);
	park_read(&r, p, buf, 1);
	killer_start_rescue(&k, SIGUSR1, 5000, p[1]);
	if (timeout)
		ret = enter_ts(&r, 1, 5000000000LL, NULL);
	else
		ret = sig_enter(r.fd, 1, IORING_ENTER_GETEVENTS, NULL, 0);
	t1 = t_now_us();
	killer_join(&k);
	if (rescue_inconclusive(&k)) {
		t_expect_cqe(&r, 1, 1);
		t1 = k.sent_us + 3600 * 1000 * MS;
		goto out;
	}
	T_ASSERT_EQ(ret, -EINTR);
	T_ASSERT_EQ(hits, 1);
	T_ASSERT_EQ(t_cq_ready(&r), 0);
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	t_expect_cqe(&r, 1, 1);
out:
	close(p[0]);
	close(p[1]);
	unhandle(SIGUSR1);
	t_ring_exit(&r);
	return t1 > k.sent_us ? t1 - k.sent_us : 0;
}

static uint64_t signal_plain(void)
{
	return signal_interrupts(0, false);
}

static uint64_t signal_restart(void)
{
	return signal_interrupts(SA_RESTART, false);
}

static uint64_t signal_timeout(void)
{
	return signal_interrupts(0, true);
}

static void test_signal_plain(void)
{
	within(signal_plain, 50 * MS, "signal to -EINTR");
}

static void test_signal_restart(void)
{
	within(signal_restart, 50 * MS, "signal to -EINTR");
}

static void test_signal_timeout(void)
{
	within(signal_timeout, 50 * MS, "signal to -EINTR");
}

/*
 * A process-directed signal from a POSIX timer: it must reach the waiting
 * thread (the engine's own threads block every signal) and end the wait.
 */
static uint64_t signal_process_timer(void)
{
	struct sigevent sev;
	struct t_killer k;
	struct t_ring r;
	timer_t tid;
	uint64_t t1;
	char buf[1];
	int p[2], ret;

	handle(SIGUSR1, 0);
	ring_init(&r);
	park_read(&r, p, buf, 1);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR1;
	T_ASSERT_EQ(timer_create(CLOCK_MONOTONIC, &sev, &tid), 0);
	killer_start_timer(&k, &tid, 5000);
	ret = enter_ts(&r, 1, 5000000000LL, NULL);
	t1 = t_now_us();
	killer_join(&k);
	T_ASSERT_EQ(ret, -EINTR);
	T_ASSERT_EQ(hits, 1);
	T_ASSERT_EQ(timer_delete(tid), 0);
	unpark_read(&r, p, 1);
	unhandle(SIGUSR1);
	t_ring_exit(&r);
	return t1 - k.sent_us;
}

static void test_signal_process_timer(void)
{
	within(signal_process_timer, 55 * MS, "timer set to -EINTR");
}

/*
 * The sigmask argument blocks SIGUSR1 for the wait: a SIGUSR1 at 10 ms
 * does not end it (the timeout does, at 150 ms), and its handler runs only
 * once enter returns, not in the middle of the wait.
 */
static void test_blocked_by_ext_arg_mask(void)
{
	struct t_killer k;
	struct t_ring r;
	sigset_t mask;
	uint64_t t0, t1;
	char buf[1];
	int p[2], ret;

	handle(SIGUSR1, 0);
	ring_init(&r);
	park_read(&r, p, buf, 1);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	killer_start(&k, SIGUSR1, 10000);
	t0 = t_now_us();
	ret = enter_ts(&r, 1, 150000000LL, &mask);
	t1 = t_now_us();
	killer_join(&k);
	T_ASSERT_EQ(ret, -ETIME);
	T_ASSERT_GE(t1 - t0, 149 * MS);
	T_ASSERT_EQ(hits, 1);
	/* it ran at the return (t1 is taken just after), not at 10-20 ms */
	T_ASSERT_GE(hit_us - t0, 140 * MS);
	unpark_read(&r, p, 1);
	unhandle(SIGUSR1);
	t_ring_exit(&r);
}

/*
 * The same with the plain sigset argument (argsz 8) and no timeout: the
 * wait ends when a writer completes the read at 60 ms; the handler of the
 * SIGUSR1 sent at 10 ms runs after that, not during the wait.
 */
static void test_blocked_by_plain_mask(void)
{
	struct t_killer k;
	struct t_writer w;
	struct t_ring r;
	sigset_t mask;
	uint64_t t0, w_us;
	char buf[1];
	int p[2], ret;

	handle(SIGUSR1, 0);
	ring_init(&r);
	park_read(&r, p, buf, 1);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	t0 = t_now_us();
	killer_start(&k, SIGUSR1, 10000);
	t_writer_start(&w, p[1], "w", 1, 60000);
	ret = sig_enter(r.fd, 1, IORING_ENTER_GETEVENTS, &mask, _NSIG / 8);
	killer_join(&k);
	T_ASSERT_EQ(t_writer_join(&w), 1);
	w_us = t0 + 60 * MS; /* the write came after this */
	T_ASSERT_EQ(ret, 0);
	T_ASSERT_EQ(hits, 1);
	T_ASSERT_GE(hit_us, w_us);
	t_expect_cqe(&r, 1, 1);
	close(p[0]);
	close(p[1]);
	unhandle(SIGUSR1);
	t_ring_exit(&r);
}

/*
 * SIGUSR1 pending and blocked by the thread; the wait's mask unblocks it
 * (and blocks SIGUSR2): -EINTR at once, the handler ran once under the
 * wait's mask, and afterwards the thread's own mask is back.
 */
static uint64_t pending_unblocked_by_mask(bool ext)
{
	sigset_t block, old, mask, now;
	struct t_ring r;
	uint64_t t0, t1;
	char buf[1];
	int p[2], ret;

	handle(SIGUSR1, 0);
	ring_init(&r);
	park_read(&r, p, buf, 1);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	pthread_kill(pthread_self(), SIGUSR1);
	T_ASSERT_EQ(hits, 0);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	t0 = t_now_us();
	if (ext)
		ret = enter_ts(&r, 1, 5000000000LL, &mask);
	else
		ret = t_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS, &mask,
			      _NSIG / 8);
	t1 = t_now_us();
	T_ASSERT_EQ(ret, -EINTR);
	T_ASSERT_EQ(hits, 1);
	T_ASSERT_EQ(hit_usr2_blocked, 1);
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	T_ASSERT_EQ(sigismember(&now, SIGUSR1), 1);
	T_ASSERT_EQ(sigismember(&now, SIGUSR2), 0);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	T_ASSERT_EQ(hits, 1);
	unpark_read(&r, p, 1);
	unhandle(SIGUSR1);
	t_ring_exit(&r);
	return t1 - t0;
}

static uint64_t pending_unblocked_plain(void)
{
	return pending_unblocked_by_mask(false);
}

static uint64_t pending_unblocked_ext(void)
{
	return pending_unblocked_by_mask(true);
}

static void test_pending_unblocked_plain(void)
{
	within(pending_unblocked_plain, 50 * MS, "enter to -EINTR");
}

static void test_pending_unblocked_ext(void)
{
	within(pending_unblocked_ext, 50 * MS, "enter to -EINTR");
}

/*
 * A pending signal that stays blocked (by the thread and the argument)
 * does not end the wait: the timeout does.
 */
static void test_pending_stays_blocked(void)
{
	sigset_t block, old;
	struct t_ring r;
	char buf[1];
	int p[2];

	handle(SIGUSR1, 0);
	ring_init(&r);
	park_read(&r, p, buf, 1);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	pthread_kill(pthread_self(), SIGUSR1);
	T_ASSERT_EQ(enter_ts(&r, 1, 20000000LL, &block), -ETIME);
	T_ASSERT_EQ(enter_ts(&r, 1, 20000000LL, NULL), -ETIME);
	T_ASSERT_EQ(hits, 0);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	T_ASSERT_EQ(hits, 1);
	unpark_read(&r, p, 1);
	unhandle(SIGUSR1);
	t_ring_exit(&r);
}

/* A CQE in the ring when the signal ends the wait: 0, not -EINTR. */
static uint64_t signal_cq_nonempty(void)
{
	struct io_uring_sqe *sqe;
	struct t_killer k;
	struct t_ring r;
	uint64_t t1;
	char buf[1];
	int p[2], ret;

	handle(SIGUSR1, 0);
	ring_init(&r);
	park_read(&r, p, buf, 1);
	sqe = t_get_sqe(&r);
	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, 2);
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	killer_start_rescue(&k, SIGUSR1, 5000, p[1]);
	ret = sig_enter(r.fd, 2, IORING_ENTER_GETEVENTS, NULL, 0);
	t1 = t_now_us();
	killer_join(&k);
	if (rescue_inconclusive(&k)) {
		t_expect_cqe(&r, 2, 0);
		t_expect_cqe(&r, 1, 1);
		t1 = k.sent_us + 3600 * 1000 * MS;
		goto out;
	}
	T_ASSERT_EQ(ret, 0);
	T_ASSERT_EQ(hits, 1);
	T_ASSERT_EQ(t_cq_ready(&r), 1);
	t_expect_cqe(&r, 2, 0);
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	t_expect_cqe(&r, 1, 1);
out:
	close(p[0]);
	close(p[1]);
	unhandle(SIGUSR1);
	t_ring_exit(&r);
	return t1 > k.sent_us ? t1 - k.sent_us : 0;
}

static void test_signal_cq_nonempty(void)
{
	within(signal_cq_nonempty, 50 * MS, "signal to return");
}

/* After an interrupted wait the ring works: the read still completes. */
static void test_wait_after_eintr(void)
{
	struct t_killer k;
	struct t_writer w;
	struct t_ring r;
	char buf[1];
	int p[2], ret, i;

	handle(SIGUSR1, 0);
	ring_init(&r);
	for (i = 0; i < ATTEMPTS; i++) {
		park_read(&r, p, buf, 1);
		killer_start_rescue(&k, SIGUSR1, 5000, p[1]);
		ret = sig_enter(r.fd, 1, IORING_ENTER_GETEVENTS, NULL, 0);
		killer_join(&k);
		if (!rescue_inconclusive(&k))
			break;
		t_expect_cqe(&r, 1, 1);
		close(p[0]);
		close(p[1]);
		hits = 0;
	}
	T_ASSERT_LT(i, ATTEMPTS);
	T_ASSERT_EQ(ret, -EINTR);
	T_ASSERT_EQ(hits, 1);
	t_writer_start(&w, p[1], "a", 1, 10000);
	T_ASSERT_EQ(enter_ts(&r, 1, 5000000000LL, NULL), 0);
	T_ASSERT_EQ(t_writer_join(&w), 1);
	t_expect_cqe(&r, 1, 1);
	T_ASSERT_EQ(buf[0], 'a');
	close(p[0]);
	close(p[1]);
	unhandle(SIGUSR1);
	t_ring_exit(&r);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{"signal_plain", test_signal_plain},
	{"signal_restart", test_signal_restart},
	{"signal_timeout", test_signal_timeout},
	{"signal_process_timer", test_signal_process_timer},
	{"blocked_by_ext_arg_mask", test_blocked_by_ext_arg_mask},
	{"blocked_by_plain_mask", test_blocked_by_plain_mask},
	{"pending_unblocked_plain", test_pending_unblocked_plain},
	{"pending_unblocked_ext", test_pending_unblocked_ext},
	{"pending_stays_blocked", test_pending_stays_blocked},
	{"signal_cq_nonempty", test_signal_cq_nonempty},
	{"wait_after_eintr", test_wait_after_eintr},
};

/*
 * Arguments, all optional, to narrow a run down: the one test to run
 * ("all" for every one), the ring flags (hex), the spin setting.
 */
int main(int argc, char **argv)
{
#if defined(__SANITIZE_THREAD__)
	/* TSan runs signal handlers late, at its own points: timing fails. */
	printf("skip: ThreadSanitizer defers signal handlers\n");
	return T_EXIT_SKIP;
#endif
	const char *only = argc > 1 && strcmp(argv[1], "all") ? argv[1] : NULL;
	const char *only_spin = argc > 3 ? argv[3] : NULL;
	long only_flags = argc > 2 ? strtol(argv[2], NULL, 16) : -1;
	size_t f, s, i;

	t_require_engine();
	t_watchdog(60);
	for (f = 0; f < sizeof(ring_flags) / sizeof(ring_flags[0]); f++) {
		cur_flags = ring_flags[f];
		if (only_flags >= 0 && cur_flags != (unsigned long)only_flags)
			continue;
		for (s = 0; s < sizeof(spins) / sizeof(spins[0]); s++) {
			cur_spin = spins[s];
			if (only_spin && strcmp(only_spin, cur_spin))
				continue;
			/* the kernel has no spin setting: one pass */
			if (t_engine() == T_ENGINE_KERNEL && s)
				break;
			for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
				if (only && strcmp(only, tests[i].name))
					continue;
				fprintf(stderr, "[%s] flags 0x%x spin %s: %s\n",
					t_engine_name(), cur_flags, cur_spin,
					tests[i].name);
				tests[i].fn();
			}
		}
	}
	return T_EXIT_PASS;
}
