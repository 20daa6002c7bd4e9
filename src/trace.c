/* SPDX-License-Identifier: MIT */
/*
 * The request trace. NOWAIT_TRACE names where the lines go: a file
 * (opened O_APPEND, so the processes of a program share it), or "-" /
 * "stderr" / "1" for standard error; NOWAIT_TRACE_OPS=read,recv,... keeps
 * only those opcodes (names as the probe's, any case). nowait-run --trace
 * sets both.
 *
 * A line, one write(2) each, so lines of threads and processes never mix:
 *   0.001234 4242 ring=5 READ(fd=7, len=4096, off=0) = 4096 ud=0x1
 *       lat=12us path=parked
 * The line is formatted on the calling thread's stack: no lock. The SQE is
 * copied at submit (SUBMIT_STABLE: the program may reuse the slot), with a
 * path argument read then through the fault-safe copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "trace.h"
#include "fdhigh.h"
#include "opdef.h"
#include "stats.h"

static int trace_fd = -1;
static long long trace_t0;
static unsigned char trace_ops[256 / 8]; /* all set unless filtered */

static long long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return nw_ts_ns(&t);
}

static bool op_traced(unsigned int op)
{
	return trace_ops[op / 8] & (1U << (op % 8));
}

/* NOWAIT_TRACE_OPS: a comma-separated list of opcode names. */
static void parse_ops(const char *list)
{
	char buf[512], *save = NULL, *w;

	if (!list || !*list) {
		memset(trace_ops, 0xff, sizeof(trace_ops));
		return;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save))
		for (unsigned int op = 0; op < NW_OP_LAST; op++)
			if (nw_cold_defs[op].name &&
			    !strcasecmp(nw_cold_defs[op].name, w))
				trace_ops[op / 8] |= 1U << (op % 8);
}

static void trace_open(void)
{
	const char *where = getenv("NOWAIT_TRACE");
	int fd;

	if (!where || !*where || !strcmp(where, "0"))
		return;
	if (!strcmp(where, "-") || !strcmp(where, "stderr") ||
	    !strcmp(where, "1"))
		fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
	else
		fd = open(where, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			  0644);
	if (fd < 0) {
		fprintf(stderr, "nowait: NOWAIT_TRACE=%s: %s\n", where,
			strerror(errno));
		return;
	}
	parse_ops(getenv("NOWAIT_TRACE_OPS"));
	trace_t0 = mono_ns();
	trace_fd = nw_fd_hide(fd);
}

bool nw_trace_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, trace_open);
	return trace_fd >= 0;
}

/* The string at a user pointer, at most sizeof(str) - 4 bytes, or "". */
static void copy_str(char *str, size_t size, const void *uptr)
{
	size_t want = size - 4, page = 4096 - ((uintptr_t)uptr & 4095), n;

	str[0] = '\0';
	if (!uptr)
		return;
	/*
	 * A string may end just before an unmapped page: then up to the
	 * page's end, not past it (and only then: a string that crosses
	 * into a mapped page is copied whole).
	 */
	if (!nw_copy_from_user(str, uptr, want))
		n = want;
	else if (page < want && !nw_copy_from_user(str, uptr, page))
		n = page;
	else
		return;
	str[n] = '\0';
	if (strlen(str) == want)
		strcpy(str + want, "...");
}

void nw_trace_submit(struct nw_req *req, const struct io_uring_sqe *sqe)
{
	struct nw_trace_req *t;

	req->trace = NULL;
	if (!(trace_fd >= 0 && op_traced(req->opcode)) && !req->ring->stats)
		return;
	t = malloc(sizeof(*t));
	if (!t)
		return; /* not traced, rather than failed */
	t->submit_ns = mono_ns();
	t->path = NW_PATH_INLINE;
	memcpy(&t->sqe, sqe, sizeof(t->sqe));
	t->str[0] = '\0';
	if (req->opcode < NW_OP_LAST && nw_cold_defs[req->opcode].path_arg)
		copy_str(t->str, sizeof(t->str),
			 (const void *)(uintptr_t)sqe->addr);
	req->trace = t;
}

void nw_trace_free(struct nw_req *req)
{
	free(req->trace);
	req->trace = NULL;
}

static void emit(const char *buf, int len)
{
	if (len <= 0)
		return;
	if (len >= 512)
		len = 511;
	if (write(trace_fd, buf, (size_t)len) < 0)
		(void)0; /* a trace that cannot be written is lost */
}

static int line_head(char *buf, size_t size)
{
	long long t = mono_ns() - trace_t0;

	return snprintf(buf, size, "%lld.%06lld %d ", t / 1000000000,
			(t / 1000) % 1000000, (int)nw_gettid());
}

static const char *const sqe_flag_names[] = {
	"FIXED_FILE", "IO_DRAIN",      "IO_LINK",	   "IO_HARDLINK",
	"ASYNC",      "BUFFER_SELECT", "CQE_SKIP_SUCCESS",
};

/* The SQE's arguments: fd, len, off, flags, and a path if it has one. */
static int sqe_args(char *buf, size_t size, const struct nw_trace_req *t)
{
	const struct io_uring_sqe *s = &t->sqe;
	int n, i;

	if (s->flags & IOSQE_FIXED_FILE)
		n = snprintf(buf, size, "fixed=%d", s->fd);
	else
		n = snprintf(buf, size, "fd=%d", s->fd);
	if (s->len)
		n += snprintf(buf + n, size - n, ", len=%u", s->len);
	if (s->off)
		n += snprintf(buf + n, size - n, ", off=%lld",
			      (long long)s->off);
	if (s->rw_flags)
		n += snprintf(buf + n, size - n, ", op_flags=0x%x",
			      s->rw_flags);
	for (i = 0; i < 7; i++)
		if (s->flags & (1U << i))
			n += snprintf(buf + n, size - n, "%s%s",
				      i && (s->flags & ((1U << i) - 1))
					      ? "|"
					      : ", flags=",
				      sqe_flag_names[i]);
	if (t->str[0])
		n += snprintf(buf + n, size - n, ", \"%s\"", t->str);
	return n;
}

static const char *path_name(const struct nw_req *req, int res)
{
	static const char *const names[] = {"inline", "parked", "reissued",
					    "worker", "linked"};
	unsigned int p = req->trace->path;

	if (p == NW_PATH_LINKED)
		return names[p];
	if (res == -ECANCELED)
		return "cancelled";
	if (req->flags & NW_REQ_F_TIMER)
		return "timer";
	return p < 5 ? names[p] : "?";
}

void nw_trace_cqe(struct nw_ring *ring, const struct nw_req *req, int res)
{
	const struct nw_trace_req *t = req->trace;
	const char *name, *err;
	char buf[512], args[256];
	long long lat;
	int n;

	if (!t)
		return;
	lat = mono_ns() - t->submit_ns;
	if (ring->stats && !(req->cflags & IORING_CQE_F_MORE))
		nw_stats_done(ring, req->opcode, t->path, lat);
	if (trace_fd < 0 || !op_traced(req->opcode))
		return;
	name = req->opcode < NW_OP_LAST ? nw_cold_defs[req->opcode].name : 0;
	/* An errno; not a notification's IORING_NOTIF_USAGE_ZC_COPIED. */
	err = res < 0 && res > -4096 ? strerrorname_np(-res) : NULL;
	sqe_args(args, sizeof(args), t);
	n = line_head(buf, sizeof(buf));
	n += snprintf(
		buf + n, sizeof(buf) - n,
		"ring=%d %s(%s) = %d%s%s ud=0x%llx lat=%lldus path=%s%s\n",
		READ_ONCE(ring->last_fd), name ? name : "OP?", args, res,
		err ? " " : "", err ? err : "",
		(unsigned long long)req->user_data, lat / 1000,
		path_name(req, res),
		(req->cflags & IORING_CQE_F_MORE) ? " more" : "");
	emit(buf, n);
}

void nw_trace_setup(unsigned int entries, const struct io_uring_params *p,
		    int ret)
{
	char buf[512];
	int n;

	if (!nw_trace_init())
		return;
	n = line_head(buf, sizeof(buf));
	n += snprintf(buf + n, sizeof(buf) - n,
		      "io_uring_setup(%u, flags=0x%x, sq=%u, cq=%u) = %d%s%s\n",
		      entries, p ? p->flags : 0,
		      p && ret >= 0 ? p->sq_entries : 0,
		      p && ret >= 0 ? p->cq_entries : 0, ret,
		      ret < 0 ? " " : "", ret < 0 ? strerrorname_np(-ret) : "");
	emit(buf, n);
}

void nw_trace_register(int fd, const char *op, unsigned int opcode,
		       unsigned int nr_args, int ret)
{
	char buf[512];
	int n;

	if (trace_fd < 0)
		return;
	n = line_head(buf, sizeof(buf));
	n += snprintf(buf + n, sizeof(buf) - n,
		      "ring=%d io_uring_register(%s, nr=%u) = %d%s%s\n", fd,
		      op ? op : "?", nr_args, ret, ret < 0 ? " " : "",
		      ret < 0 ? strerrorname_np(-ret) : "");
	(void)opcode;
	emit(buf, n);
}
