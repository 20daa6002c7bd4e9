/* SPDX-License-Identifier: MIT */
/*
 * Differential libFuzzer harness (make fuzz): one SQE from the input, on
 * the kernel's io_uring and on nowait, each in a fresh environment made
 * the same way (fuzzenv.c: the same fd numbers, files, pipes, sockets and
 * arena bytes). Input: byte 0 picks the ring setup (plain,
 * DEFER_TASKRUN, SUBMIT_ALL or COOP_TASKRUN), then 64 bytes of SQE.
 * Each engine: submit, wait at most 100 ms for its CQE; if none came,
 * ASYNC_CANCEL(ANY) and wait for it (then it reads "parked").
 * The two outcomes (the CQE's res, or parked) must agree (a difference
 * where one side parked is run twice more: a slow worker on a loaded
 * machine can miss the 100 ms), unless a line of
 * the allowlist (FZ_ALLOWLIST, test/fuzz/allowlist.txt) names the opcode
 * and the pair of results; an unlisted difference prints both and aborts.
 * The kernel's io_uring unavailable: every input passes untested.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <nowait.h>
#include "helpers.h"
#include "fuzzenv.h"

#define PARKED 1000000 /* no CQE within 100 ms: the request waits */

extern const struct t_calls t_calls_kernel, t_calls_user;

struct allow {
	int op;		/* -1: any */
	int kres, nres; /* PARKED, a res, or INT32_MIN: any */
};

static struct allow allows[256];
static unsigned int nallow;
static int kernel_ok = -1;

static int parse_res(const char *s)
{
	if (!strcmp(s, "*"))
		return INT32_MIN;
	if (!strcmp(s, "parked"))
		return PARKED;
	return atoi(s);
}

static void load_allowlist(void)
{
	const char *path = getenv("FZ_ALLOWLIST");
	char line[512], op[32], k[32], n[32];
	FILE *f;

	if (!path)
		path = "test/fuzz/allowlist.txt";
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && nallow < 256) {
		if (line[0] == '#' ||
		    sscanf(line, "%31s %31s %31s", op, k, n) != 3)
			continue;
		allows[nallow].op = strcmp(op, "*") ? atoi(op) : -1;
		allows[nallow].kres = parse_res(k);
		allows[nallow].nres = parse_res(n);
		nallow++;
	}
	fclose(f);
}

static bool allowed(int op, int kres, int nres)
{
	for (unsigned int i = 0; i < nallow; i++) {
		const struct allow *a = &allows[i];

		if ((a->op < 0 || a->op == op) &&
		    (a->kres == INT32_MIN || a->kres == kres) &&
		    (a->nres == INT32_MIN || a->nres == nres))
			return true;
	}
	return false;
}

static int call_enter(const struct t_calls *c, int fd, unsigned int n,
		      unsigned int min, unsigned int us)
{
	struct __kernel_timespec ts = {.tv_nsec = (long long)us * 1000};
	struct io_uring_getevents_arg arg = {.ts = (uint64_t)(uintptr_t)&ts};

	return c->enter(fd, n, min,
			min ? IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG : 0,
			min ? &arg : NULL, min ? sizeof(arg) : 0);
}

/*
 * The res of the first CQE of user_data 1 in r, or INT32_MIN; done once a
 * final one (no F_MORE) is seen.
 */
static int find_cqe(struct t_ring *r, bool *done)
{
	unsigned int head = *r->cq_head, tail;
	int res = INT32_MIN;

	tail = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
	for (; head != tail; head++) {
		struct io_uring_cqe *c = &r->cqes[(head & (r->p.cq_entries - 1))
						  << t_cqe_shift(r)];

		/* A SEND_ZC's notification (res 0) may be in the same batch. */
		if (c->user_data == 1 && !*done) {
			if (res == INT32_MIN)
				res = c->res;
			if (!(c->flags & IORING_CQE_F_MORE))
				*done = true;
		}
	}
	__atomic_store_n(r->cq_head, head, __ATOMIC_RELEASE);
	return res;
}

/* One engine's outcome for the SQE: its first res, or PARKED. */
static int run_one(const struct t_calls *c, const uint8_t *data, size_t size,
		   unsigned int flags, struct io_uring_sqe *out)
{
	struct io_uring_params p = {.flags = flags};
	struct fz_env env;
	struct t_ring r;
	struct io_uring_sqe *sqe;
	int fd, res = INT32_MIN, first = INT32_MIN;
	bool done = false;

	fz_env_open(&env, data, size);
	fd = c->setup(8, &p);
	if (fd < 0 || t_ring_map(&r, fd, &p)) {
		fz_env_close(&env);
		return fd < 0 ? fd - 2000000 : -3000000;
	}
	env.ring_fd = fd;
	sqe = t_get_sqe(&r);
	memcpy(sqe, data + 1, sizeof(*sqe));
	fz_sanitize(&env, sqe);
	sqe->flags &= (uint8_t) ~(IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
	sqe->user_data = 1;
	*out = *sqe;
	t_ring_flush(&r);
	if (call_enter(c, fd, 1, 0, 0) != 1)
		first = -4000000; /* the submit itself failed */
	for (int i = 0; i < 100 && !done && first == INT32_MIN; i++) {
		res = find_cqe(&r, &done);
		if (res != INT32_MIN)
			first = res;
		else
			call_enter(c, fd, 0, 1, 1000);
	}
	if (first == INT32_MIN)
		first = PARKED;
	if (!done) {
		sqe = t_get_sqe(&r);
		sqe->opcode = IORING_OP_ASYNC_CANCEL;
		sqe->fd = -1;
		sqe->cancel_flags = IORING_ASYNC_CANCEL_ANY;
		sqe->user_data = FZ_MARK_OWN;
		t_ring_flush(&r);
		call_enter(c, fd, 1, 0, 0);
		for (int i = 0; i < 1000 && !done; i++) {
			find_cqe(&r, &done);
			if (!done)
				call_enter(c, fd, 0, 1, 1000);
		}
	}
	t_ring_exit(&r);
	fz_env_close(&env);
	return first;
}

/* Report mode: the first input of each kind of difference, to replay. */
static void save_kind(unsigned int op, int kres, int nres, const uint8_t *data,
		      size_t size)
{
	const char *dir = getenv("FZ_DIFF_DIR");
	char name[512];
	FILE *f;

	if (!dir || !*dir)
		return;
	snprintf(name, sizeof(name), "%s/diff-op%u_k%d_n%d", dir, op, kres,
		 nres);
	if (access(name, F_OK) == 0 || !(f = fopen(name, "w")))
		return;
	fwrite(data, 1, size, f);
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned int setups[] = {
		0, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_SUBMIT_ALL,
		IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG};
	struct io_uring_sqe ksqe, nsqe;
	unsigned int flags;
	int kres, nres;

	if (size < 1 + sizeof(struct io_uring_sqe))
		return 0;
	fz_init();
	if (kernel_ok < 0) {
		struct io_uring_params p = {0};
		int fd = t_calls_kernel.setup(1, &p);

		kernel_ok = fd >= 0;
		if (fd >= 0)
			close(fd);
		load_allowlist();
	}
	if (!kernel_ok)
		return 0;
	flags = setups[data[0] % 4];
	kres = run_one(&t_calls_kernel, data, size, flags, &ksqe);
	nres = run_one(&t_calls_user, data, size, flags, &nsqe);
	/*
	 * "Parked" is a time limit: on a loaded machine a slow worker's
	 * result can miss it. Such a difference counts only if it repeats.
	 */
	for (int i = 0;
	     i < 2 && kres != nres && (kres == PARKED || nres == PARKED); i++) {
		kres = run_one(&t_calls_kernel, data, size, flags, &ksqe);
		nres = run_one(&t_calls_user, data, size, flags, &nsqe);
	}
	if (kres == nres || allowed(ksqe.opcode, kres, nres))
		return 0;
	fprintf(stderr,
		"diff-fuzz: difference: opcode %u flags 0x%x fd %d len %u "
		"setup 0x%x: kernel %d, nowait %d (%d parked)\n"
		"diff-fuzz:   off 0x%llx addr 0x%llx op_flags 0x%x ioprio 0x%x "
		"buf_index %u addr3 0x%llx pad2 0x%llx fd_in 0x%x\n",
		ksqe.opcode, ksqe.flags, ksqe.fd, ksqe.len, flags, kres, nres,
		PARKED, (unsigned long long)ksqe.off,
		(unsigned long long)ksqe.addr, ksqe.rw_flags, ksqe.ioprio,
		ksqe.buf_index, (unsigned long long)ksqe.addr3,
		(unsigned long long)ksqe.__pad2[0], ksqe.splice_fd_in);
	/* FZ_DIFF_LOG: list differences and go on (to write the allowlist). */
	if (!getenv("FZ_DIFF_LOG") || !*getenv("FZ_DIFF_LOG"))
		abort();
	save_kind(ksqe.opcode, kres, nres, data, size);
	return 0;
}
