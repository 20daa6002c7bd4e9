/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness over SQE streams on nowait (make fuzz).
 *
 * Input: byte 0 picks a ring setup (fz_setup_flags, its low 3 bits: plain,
 * SQPOLL, DEFER_TASKRUN, a small CQ, SUBMIT_ALL, COOP_TASKRUN, big
 * SQEs/CQEs), (bit 3) a second ring that MSG_RING SQEs can target, and
 * what is registered from the start: (bit 4) a buffer ring for group 0,
 * (bit 5) two registered buffers in the arena, (bit 6) the environment's
 * fds as registered files. Then records, each a kind byte and its payload:
 *   kind % 8 < 5: an SQE (64 bytes), sanitised by fz_sanitize with
 *                 fz_wide (every opcode to 62 and an unknown one, every
 *                 flag but CQE_SKIP_SUCCESS; most SQEs tidied so that
 *                 prep passes; fds from the environment's real and bad
 *                 ones, arena, NULL and unmapped addresses; futex words
 *                 and a child for WAITID; its personality field's low
 *                 bits choose tidy or raw and a registered personality);
 *   5:            submit what is queued;
 *   6:            an enter call (2 bytes: flags, min_complete), always
 *                 with a timeout of at most 1 ms, through the registered
 *                 ring index if asked and one was registered;
 *   7:            a register call (2 bytes: which % 16, argument): files,
 *                 buffers, eventfd, probe, ring fds, personalities,
 *                 buffer rings of groups 0-3, the errno paths of any
 *                 opcode with a NULL argument; or a readiness watcher of
 *                 the ring fd (nowait_ring_pollfd), or what the preload
 *                 tells the engine (nowait-hook.h: a write, a close),
 *                 or a raw dup2 over an fd the engine is not told of.
 * Every ring is traced and counted (NOWAIT_TRACE, NOWAIT_STATS to
 * /dev/null).
 * The input also fills the arena the SQEs point into.
 * FZ_TIME=1 prints each input's time in environment, setup, records,
 * teardown and close (microseconds), to find where the time goes.
 *
 * Teardown: ASYNC_CANCEL(ANY) (again every 25 ms: under SQPOLL it can
 * join an input's open link and be canceled with it; and with it a
 * REGISTER_SYNC_CANCEL(ANY), which no IOSQE_IO_DRAIN holds back: an SQE
 * with DRAIN behind a request that waits for good defers every SQE after
 * it, the harness's cancels too, until that request ends, as in the
 * kernel (io_queue_deferred)), then reap until every SQE the ring
 * consumed has had its one final CQE (no wall-clock cut a loaded machine
 * can pass; past FZ_REAP_LIMIT_S it is a hang, reported with what each
 * missing SQE was, fz_final_missing): a result without
 * IORING_CQE_F_MORE, or for SEND_ZC and SENDMSG_ZC the notification
 * (IORING_CQE_F_NOTIF) after a result with F_MORE. As in the kernel
 * (test/send-zc.c), a zerocopy send canceled as a link posts its result
 * without F_MORE and still a notification: that one is not a second final.
 * A second final CQE or notification, or one that never comes, aborts (a
 * finding). Then the ring and the environment are closed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <nowait.h>
#include <nowait-hook.h>
#include "helpers.h"
#include "fuzzenv.h"

#define MAX_SQES FZ_MAX_SQES

struct run {
	struct t_ring r;
	struct fz_env env;
	unsigned int flags;
	unsigned int queued;  /* SQEs written */
	unsigned int head0;   /* SQ head at the start */
	struct fz_finals fin; /* final CQEs per user_data */
	unsigned int ncancel; /* the harness's own cancels queued */
	int files_registered;
	int reg_index;	    /* the ring's registered index (RING_FDS), or -1 */
	struct t_ring peer; /* MSG_RING's target (env.ring_fd2), fd -1: none */
};

static int ring_enter(struct run *u, unsigned int to_submit,
		      unsigned int min_complete, unsigned int flags,
		      unsigned int us)
{
	int fd = u->r.fd;

	if (u->flags & IORING_SETUP_SQPOLL)
		flags |= IORING_ENTER_SQ_WAKEUP;
	/* Through the registered index (tctx.c) when asked and there is. */
	if ((flags & IORING_ENTER_REGISTERED_RING) && u->reg_index >= 0)
		fd = u->reg_index;
	else
		flags &= ~IORING_ENTER_REGISTERED_RING;
	return fz_enter(fd, to_submit, min_complete, flags, us);
}

static void reap(struct run *u)
{
	unsigned int head = __atomic_load_n(u->r.cq_head, __ATOMIC_RELAXED);
	unsigned int tail = __atomic_load_n(u->r.cq_tail, __ATOMIC_ACQUIRE);
	unsigned int shift = t_cqe_shift(&u->r);

	for (; head != tail; head++) {
		struct io_uring_cqe *c =
			&u->r.cqes[(head & (u->r.p.cq_entries - 1)) << shift];
		uint64_t ud = c->user_data;

		if (ud < 1 || ud > MAX_SQES)
			continue;
		fz_final_count(&u->fin, ud, c);
	}
	__atomic_store_n(u->r.cq_head, head, __ATOMIC_RELEASE);
}

static void submit(struct run *u)
{
	unsigned int n = t_ring_flush(&u->r);

	if (n)
		ring_enter(u, n, 0, 0, 0);
	reap(u);
}

static void add_sqe(struct run *u, const uint8_t *p)
{
	struct io_uring_sqe *sqe;

	if (u->queued >= MAX_SQES)
		return;
	sqe = t_get_sqe(&u->r);
	if (!sqe) {
		submit(u);
		sqe = t_get_sqe(&u->r);
		if (!sqe)
			return;
	}
	fz_sqe_from_input(&u->env, &u->fin, sqe, p, ++u->queued);
}

static void do_enter(struct run *u, const uint8_t *p)
{
	unsigned int flags =
		p[0] & (IORING_ENTER_GETEVENTS | IORING_ENTER_SQ_WAKEUP |
			IORING_ENTER_SQ_WAIT | IORING_ENTER_REGISTERED_RING);

	ring_enter(u, t_ring_flush(&u->r), p[1] & 3, flags, 1000);
	reap(u);
}

/*
 * A readiness watcher of the ring's fd (ringpoll.c, nowait_ring_pollfd):
 * open one, wait on it a moment (a NOP may post meanwhile), close it.
 */
static void ring_pollfd(struct run *u, uint8_t arg)
{
	int pfd = nowait_ring_pollfd((arg & 1) ? u->r.fd : u->env.fd[4]);
	uint64_t v;

	if (pfd < 0)
		return;
	if (arg & 2) {
		struct io_uring_sqe *sqe = t_get_sqe(&u->r);

		if (sqe && u->queued < MAX_SQES) {
			t_prep_nop(sqe, ++u->queued);
			fz_final_note(&u->fin, sqe);
			submit(u);
		}
	}
	if (read(pfd, &v, sizeof(v)) < 0 && arg & 4)
		ring_enter(u, 0, 1, IORING_ENTER_GETEVENTS, 500);
	nowait_ring_pollfd_close(pfd);
}

/*
 * A provided-buffer ring (IORING_REGISTER_PBUF_RING) of 8 buffers in the
 * arena for group bgid (0-3): its page is the harness's, one per group,
 * never unmapped; the buffers 512 (or len) bytes each.
 */
static void pbuf_ring(struct run *u, unsigned int bgid, unsigned int len)
{
	static uint8_t *pages;
	struct io_uring_buf_reg reg = {.ring_entries = 8,
				       .bgid = (uint16_t)(bgid & 3)};
	struct io_uring_buf *b;

	if (!pages) {
		pages = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (pages == MAP_FAILED)
			abort();
	}
	b = (struct io_uring_buf *)(pages + (bgid & 3) * 4096);
	memset(b, 0, 8 * sizeof(*b));
	for (unsigned int i = 0; i < 8; i++) {
		b[i].addr =
			(uint64_t)(uintptr_t)(u->env.arena + 32768 + i * 512);
		b[i].len = len ? len : 512;
		b[i].bid = (uint16_t)i;
	}
	/* The tail (the first entry's resv) after the entries. */
	__atomic_store_n(&b[0].resv, 8, __ATOMIC_RELEASE);
	reg.ring_addr = (uint64_t)(uintptr_t)b;
	nowait_register(u->r.fd, IORING_REGISTER_PBUF_RING, &reg, 1);
}

/* What the preload library tells the engine (hook.c), on this env. */
static void hooks(struct run *u, uint8_t arg)
{
	int fd = u->env.fd[arg & 15];
	char c = 'h';

	switch ((arg >> 4) % 5) {
	case 0:
		nowait_hook_is_ring_fd(arg & 1 ? u->r.fd : fd);
		nowait_hook_ring_fd_learn(arg & 2 ? u->r.fd : fd);
		break;
	case 1:
		/* A write as the preload's interposer sees it. */
		if (write(u->env.fd[(arg & 1) ? 3 : 1], &c, 1) == 1)
			nowait_hook_wrote();
		break;
	case 2:
		if (fd < 0 || (arg & 15) == 7)
			break;
		/*
		 * Its number now names a socket and the engine is not told (a
		 * raw dup2): watches and kinds it learned are stale. (Not over
		 * 9999, the bad fd: that would open it.)
		 */
		if (arg >> 4 == 7) {
			if ((arg & 15) == 10)
				break;
			dup2(u->env.fd[(arg & 15) == 2 ? 3 : 2], fd);
			break;
		}
		/* The program closes an fd of the environment. */
		nowait_hook_fd_closing(fd);
		close(fd);
		break;
	case 3:
		nowait_hook_uring_wake_fd(u->env.fd[6], arg & 1);
		break;
	default:
		nowait_hook_reissue_count();
		nowait_hook_cpu_busy_cached();
		break;
	}
}

/* Personalities (creds.c), buffer rings (kbuf.c), the hooks. */
static void do_register_more(struct run *u, const uint8_t *p)
{
	struct io_uring_buf_reg reg = {.bgid = p[1] & 3};
	int id;

	switch (p[0] % 16) {
	case 11:
		id = nowait_register(u->r.fd, IORING_REGISTER_PERSONALITY, NULL,
				     0);
		if (id > 0)
			u->env.pers_id = id;
		break;
	case 12:
		id = u->env.pers_id ? u->env.pers_id : p[1];
		nowait_register(u->r.fd, IORING_UNREGISTER_PERSONALITY, NULL,
				(unsigned int)id);
		u->env.pers_id = 0;
		break;
	case 13:
		pbuf_ring(u, p[1], (p[1] & 4) ? 64 : 0);
		break;
	case 14:
		nowait_register(u->r.fd, IORING_UNREGISTER_PBUF_RING, &reg, 1);
		break;
	default:
		hooks(u, p[1]);
		break;
	}
}

static void do_register(struct run *u, const uint8_t *p)
{
	static int eventfd_slot = 5;
	int fds[FZ_NFD];
	uint64_t tags[FZ_NFD];
	struct iovec iov[2];
	struct io_uring_rsrc_update up;
	int arg;

	if (p[0] % 16 >= 11) {
		do_register_more(u, p);
		reap(u);
		return;
	}
	switch (p[0] % 16) {
	case 0:
		for (int i = 0; i < FZ_NFD; i++) {
			fds[i] = (p[1] >> (i & 7)) & 1 ? u->env.fd[i] : -1;
			/* A ring fd is refused (-EBADF): now and then. */
			if (i == 7)
				fds[i] = (p[1] & 0x88) == 0x88 ? u->r.fd : -1;
			tags[i] = (p[1] & 0x80) ? FZ_MARK_TAG | (uint64_t)i : 0;
		}
		{
			struct io_uring_rsrc_register rr = {
				.nr = FZ_NFD,
				.data = (uint64_t)(uintptr_t)fds,
				.tags = (uint64_t)(uintptr_t)tags,
			};
			if (!nowait_register(u->r.fd, IORING_REGISTER_FILES2,
					     &rr, sizeof(rr)))
				u->files_registered = 1;
		}
		break;
	case 1:
		nowait_register(u->r.fd, IORING_UNREGISTER_FILES, NULL, 0);
		break;
	case 2:
		iov[0].iov_base = u->env.arena + (p[1] << 8);
		iov[0].iov_len = 4096;
		iov[1].iov_base = u->env.arena;
		iov[1].iov_len = (size_t)(p[1] & 3) << 12;
		nowait_register(u->r.fd, IORING_REGISTER_BUFFERS, iov,
				1 + (p[1] >> 7));
		break;
	case 3:
		nowait_register(u->r.fd, IORING_UNREGISTER_BUFFERS, NULL, 0);
		break;
	case 4:
		arg = u->env.fd[eventfd_slot];
		nowait_register(u->r.fd,
				(p[1] & 1) ? IORING_REGISTER_EVENTFD_ASYNC
					   : IORING_REGISTER_EVENTFD,
				&arg, 1);
		break;
	case 5:
		nowait_register(u->r.fd, IORING_UNREGISTER_EVENTFD, NULL, 0);
		break;
	case 6:
		arg = u->env.fd[p[1] & 15];
		up.offset = p[1] >> 4;
		up.resv = 0;
		up.data = (uint64_t)(uintptr_t)&arg;
		nowait_register(u->r.fd, IORING_REGISTER_FILES_UPDATE, &up, 1);
		break;
	case 7: {
		static uint8_t probe[sizeof(struct io_uring_probe) +
				     256 * sizeof(struct io_uring_probe_op)];

		memset(probe, 0, sizeof(probe));
		nowait_register(u->r.fd, IORING_REGISTER_PROBE, probe, p[1]);
		break;
	}
	case 8: {
		struct io_uring_rsrc_update r = {.offset = -1U,
						 .data = (uint64_t)u->r.fd};

		if (u->reg_index < 0 &&
		    nowait_register(u->r.fd, IORING_REGISTER_RING_FDS, &r, 1) ==
			    1)
			u->reg_index = (int)r.offset;
		break;
	}
	case 9:
		ring_pollfd(u, p[1]);
		break;
	default:
		/* Any opcode with a NULL argument: the errno paths. */
		nowait_register(u->r.fd, p[1] % 40, NULL, p[1] >> 5);
		break;
	}
	reap(u);
}

static void run_records(struct run *u, const uint8_t *d, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned int kind = d[i++] % 8;

		if (kind < 5) {
			if (n - i < sizeof(struct io_uring_sqe))
				return;
			add_sqe(u, d + i);
			i += sizeof(struct io_uring_sqe);
		} else if (kind == 5) {
			submit(u);
		} else {
			if (n - i < 2)
				return;
			if (kind == 6)
				do_enter(u, d + i);
			else
				do_register(u, d + i);
			i += 2;
		}
	}
}

/*
 * The harness's ASYNC_CANCEL(ANY). Under SQPOLL it may land in the same
 * batch as an SQE the input left with IO_LINK at its end, and then it is
 * a link of that chain (canceled with it when the chain fails, as the
 * kernel does too): so the reap loop queues another now and then, and
 * every one is counted out of the consumed SQEs.
 */
static void queue_cancel(struct run *u)
{
	struct io_uring_sqe *sqe = t_get_sqe(&u->r);

	if (!sqe)
		return;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->fd = -1;
	sqe->cancel_flags = IORING_ASYNC_CANCEL_ANY;
	sqe->user_data = FZ_MARK_OWN;
	u->ncancel++;
}

/*
 * The synchronous cancel (register.c): not an SQE, so not deferred by a
 * drain; 10 ms at most. Its targets post their CQEs as usual.
 */
static void sync_cancel(struct run *u)
{
	struct io_uring_sync_cancel_reg reg = {
		.fd = -1,
		.flags = IORING_ASYNC_CANCEL_ANY,
		.timeout = {.tv_sec = 0, .tv_nsec = 10000000},
	};

	nowait_register(u->r.fd, IORING_REGISTER_SYNC_CANCEL, &reg, 1);
}

static unsigned int consumed_sqes(struct run *u)
{
	return __atomic_load_n(u->r.sq_head, __ATOMIC_ACQUIRE) - u->head0 -
	       u->ncancel;
}

static void td_reap(void *u)
{
	reap(u);
}

static unsigned int td_consumed(void *u)
{
	return consumed_sqes(u);
}

static void td_again(void *u)
{
	queue_cancel(u); /* again: one armed late, or linked */
	submit(u);
	sync_cancel(u); /* past a drain that waits */
}

static void td_wait(void *p)
{
	struct run *u = p;

	ring_enter(u, t_ring_flush(&u->r), 1, IORING_ENTER_GETEVENTS, 1000);
}

static void teardown(struct run *u)
{
	static const struct fz_reaper ops = {
		td_reap, td_consumed, td_again, 25, td_wait,
	};
	uint64_t waited;

	submit(u);
	for (int i = 0; i < 4 && t_ring_flush(&u->r); i++)
		submit(u);
	queue_cancel(u);
	submit(u);
	waited = fz_reap_finals(&u->fin, &u->r, &ops, u);
	if (u->fin.nfinal != consumed_sqes(u))
		fz_final_missing(&u->fin, &u->r, consumed_sqes(u), u->queued,
				 waited);
}

/*
 * Byte 0's bits 4-6: a buffer ring for group 0, the arena's first pages as
 * registered buffers, the environment's fds as registered files, from the
 * start (what most programs that use them do first).
 */
static void start_regs(struct run *u, uint8_t b)
{
	if (b & 0x10)
		pbuf_ring(u, 0, 0);
	if (b & 0x20) {
		/* Two buffers, the first at FZ_FIXED_BUF. */
		uint8_t r[2] = {2, FZ_FIXED_BUF >> 8};

		do_register(u, r);
	}
	if (b & 0x40) {
		/* Slots 0-1, 4-9 (9 empty), 12-14 and the ring: no bad fd. */
		uint8_t r[2] = {0, 0x73};

		do_register(u, r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run u;
	struct io_uring_params p;
	unsigned int entries, cq;
	uint64_t t0, t1, t2, t3, t4, t5;

	if (size < 1)
		return 0;
	fz_init();
	fz_wide = 1;
	/* Every ring traced and counted (trace.c, stats.c), to /dev/null. */
	setenv("NOWAIT_TRACE", "/dev/null", 0);
	setenv("NOWAIT_STATS", "1", 0);
	setenv("NOWAIT_STATS_FILE", "/dev/null", 0);
	memset(&u, 0, sizeof(u));
	u.reg_index = -1;
	t0 = fz_now_us();
	fz_env_open(&u.env, data, size);
	t1 = fz_now_us();
	memset(&p, 0, sizeof(p));
	u.flags = p.flags = fz_setup_flags(data[0], &entries, &cq);
	p.cq_entries = cq;
	p.sq_thread_idle = 1;
	if (t_ring_init(&u.r, entries, &p)) {
		fz_env_close(&u.env);
		return 0;
	}
	u.env.ring_fd = u.r.fd;
	/* Bit 3: a second ring, for MSG_RING (fd slot 7 with bit 4). */
	u.peer.fd = -1;
	if ((data[0] & 8) && t_ring_init(&u.peer, 4, NULL) == 0)
		u.env.ring_fd2 = u.peer.fd;
	start_regs(&u, data[0]);
	u.head0 = __atomic_load_n(u.r.sq_head, __ATOMIC_ACQUIRE);
	t2 = fz_now_us();
	run_records(&u, data + 1, size - 1);
	t3 = fz_now_us();
	teardown(&u);
	t4 = fz_now_us();
	t_ring_exit(&u.r);
	if (u.env.ring_fd2 >= 0)
		t_ring_exit(&u.peer);
	fz_env_close(&u.env);
	t5 = fz_now_us();
	if (getenv("FZ_TIME"))
		fprintf(stderr,
			"fztime env %llu setup %llu run %llu teardown %llu "
			"close %llu\n",
			(unsigned long long)(t1 - t0),
			(unsigned long long)(t2 - t1),
			(unsigned long long)(t3 - t2),
			(unsigned long long)(t4 - t3),
			(unsigned long long)(t5 - t4));
	return 0;
}
