/* SPDX-License-Identifier: MIT */
/*
 * Request statistics. Each ring that exists while NOWAIT_STATS is set gets
 * a table, written only on its submit side (where CQEs are posted), read
 * at exit or on SIGUSR2. Latencies go into log-linear buckets (8 per
 * power of two: a percentile is known to within about 9%), reported at
 * the bucket's upper bound. Output goes to NOWAIT_STATS_FILE (appended),
 * or standard error. The file is opened once, at the first ring's setup
 * (on the program's thread), and kept at a high number (fdhigh.c): a
 * ring's table is written when the ring is released, which may be on an
 * engine thread at any moment, and a file opened there for each report
 * took the lowest free number, then closed it: a number the program could
 * close and get back from open() meanwhile, and lose (test/stats-fd.c).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "stats.h"
#include "fdhigh.h"
#include "opdef.h"

#define NB_SUB	  8
#define NB_BUCKET (64 * NB_SUB)
#define NR_PATHS  5

struct op_stats {
	unsigned long n, by_path[NR_PATHS];
	long long max_ns;
	unsigned int hist[NB_BUCKET];
};

struct nw_stats {
	struct nw_ring *ring;
	struct nw_list node; /* on all_stats, newest first */
	struct op_stats *ops[NW_OP_LAST];
};

static int stats_mode; /* 0 off, 1 table, 2 json */
static struct nw_list all_stats = {&all_stats, &all_stats};
static bool exit_reported; /* the exit report ran: rings freed after, quietly */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out; /* the report's stream (stats_open), written under all_lock */
static const char *const path_names[NR_PATHS] = {
	"inline", "parked", "reissued", "worker", "linked",
};

static unsigned int bucket_of(long long ns)
{
	unsigned long long v = ns > 0 ? (unsigned long long)ns : 1;
	int top = 63 - __builtin_clzll(v);
	unsigned int sub = top >= 3 ? (unsigned int)(v >> (top - 3)) & 7
				    : (unsigned int)(v << (3 - top)) & 7;

	return (unsigned int)top * NB_SUB + sub;
}

/* The upper bound of bucket b, in ns. */
static long long bucket_top(unsigned int b)
{
	unsigned int top = b / NB_SUB, sub = b % NB_SUB;

	if (top < 3)
		return (long long)(((8ULL + sub + 1) << top) >> 3);
	return (long long)((8ULL + sub + 1) << (top - 3));
}

static long long percentile(const struct op_stats *o, unsigned int pct)
{
	unsigned long want = (o->n * pct + 99) / 100, seen = 0;

	for (unsigned int b = 0; b < NB_BUCKET; b++) {
		seen += o->hist[b];
		if (seen >= want && seen)
			return bucket_top(b) < o->max_ns ? bucket_top(b)
							 : o->max_ns;
	}
	return o->max_ns;
}

void nw_stats_done(struct nw_ring *ring, unsigned int opcode, unsigned int path,
		   long long lat_ns)
{
	struct nw_stats *st = ring->stats;
	struct op_stats *o;

	if (!st || opcode >= NW_OP_LAST)
		return;
	o = st->ops[opcode];
	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o)
			return;
		__atomic_store_n(&st->ops[opcode], o, __ATOMIC_RELEASE);
	}
	o->n++;
	o->by_path[path < NR_PATHS ? path : 0]++;
	if (lat_ns > o->max_ns)
		o->max_ns = lat_ns;
	o->hist[bucket_of(lat_ns)]++;
}

static int ring_totals(char *buf, size_t size, const struct nw_stats *st,
		       bool json)
{
	unsigned long path[NR_PATHS] = {0};
	const struct nw_ring *r = st->ring;

	for (unsigned int op = 0; op < NW_OP_LAST; op++)
		for (unsigned int p = 0; st->ops[op] && p < NR_PATHS; p++)
			path[p] += st->ops[op]->by_path[p];
	return snprintf(buf, size,
			json ? "\"parks\":%lu,\"reissues\":%lu,\"worker\":%lu,"
			       "\"cq_overflows\":%u,\"spins\":%lu,"
			       "\"spin_hits\":%lu"
			     : "  parks %lu  reissues %lu  worker punts %lu  "
			       "CQ overflows %u  spins %lu (hits %lu)\n",
			path[1], path[2], path[3], r->nr_overflowed,
			r->spin.spins, r->spin.spin_hits);
}

/*
 * One ring's table: a header, then a line per opcode used. (Not inlined,
 * nor is the JSON form: the fuzzers' coverage counts a function from its
 * best harness, and sqe-fuzz reports in the table's form, reg-fuzz in
 * JSON.)
 */
static __attribute__((noinline)) void
report_ring_table(FILE *f, const struct nw_stats *st)
{
	char tot[256];

	ring_totals(tot, sizeof(tot), st, false);
	fprintf(f,
		"nowait stats: pid %d ring %u (fd %d)\n%s"
		"  %-16s %10s %8s %8s %8s %8s %8s %10s %10s %10s\n",
		(int)getpid(), st->ring->id, READ_ONCE(st->ring->last_fd), tot,
		"opcode", "requests", "inline", "parked", "reissued", "worker",
		"linked", "p50_us", "p99_us", "max_us");
	for (unsigned int op = 0; op < NW_OP_LAST; op++) {
		const struct op_stats *o =
			__atomic_load_n(&st->ops[op], __ATOMIC_ACQUIRE);

		if (!o || !o->n)
			continue;
		fprintf(f, "  %-16s %10lu", nw_cold_defs[op].name, o->n);
		for (unsigned int p = 0; p < NR_PATHS; p++)
			fprintf(f, " %8lu", o->by_path[p]);
		fprintf(f, " %10.1f %10.1f %10.1f\n", percentile(o, 50) / 1e3,
			percentile(o, 99) / 1e3, o->max_ns / 1e3);
	}
}

/* One ring as one JSON object on a line. */
static __attribute__((noinline)) void
report_ring_json(FILE *f, const struct nw_stats *st)
{
	char tot[256];
	bool first = true;

	ring_totals(tot, sizeof(tot), st, true);
	fprintf(f, "{\"pid\":%d,\"ring\":%u,%s,\"ops\":{", (int)getpid(),
		st->ring->id, tot);
	for (unsigned int op = 0; op < NW_OP_LAST; op++) {
		const struct op_stats *o =
			__atomic_load_n(&st->ops[op], __ATOMIC_ACQUIRE);

		if (!o || !o->n)
			continue;
		fprintf(f, "%s\"%s\":{\"n\":%lu", first ? "" : ",",
			nw_cold_defs[op].name, o->n);
		for (unsigned int p = 0; p < NR_PATHS; p++)
			fprintf(f, ",\"%s\":%lu", path_names[p], o->by_path[p]);
		fprintf(f, ",\"p50_ns\":%lld,\"p99_ns\":%lld,\"max_ns\":%lld}",
			percentile(o, 50), percentile(o, 99), o->max_ns);
		first = false;
	}
	fputs("}}\n", f);
}

static void report_ring(FILE *f, const struct nw_stats *st, bool json)
{
	if (json)
		report_ring_json(f, st);
	else
		report_ring_table(f, st);
}

/* The report's stream: NOWAIT_STATS_FILE (appended), or stderr; NULL. */
static FILE *out_open(void)
{
	const char *path = getenv("NOWAIT_STATS_FILE");
	FILE *f;
	int fd;

	if (!path || !*path)
		return stderr;
	fd = nw_fd_hide(
		open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "a");
	if (!f)
		close(fd);
	return f;
}

/*
 * At exit, each ring's submit side is taken so that the counters are read
 * whole; a SIGUSR2 report takes nothing (it may interrupt a holder) and
 * reads them as they are.
 */
static void report_all(bool from_signal)
{
	if (!out)
		return;
	if (from_signal ? pthread_mutex_trylock(&all_lock)
			: pthread_mutex_lock(&all_lock))
		return;
	if (!from_signal)
		exit_reported = true;
	for (struct nw_list *pos = all_stats.next; pos != &all_stats;
	     pos = pos->next) {
		struct nw_stats *st = nw_list_entry(pos, struct nw_stats, node);
		/* The submit side, as nw_submit_lock takes it. */
		bool lock = !from_signal && !st->ring->lockless_cq;

		if (lock)
			pthread_mutex_lock(&st->ring->submit_lock);
		report_ring(out, st, stats_mode == 2);
		if (lock)
			pthread_mutex_unlock(&st->ring->submit_lock);
	}
	fflush(out);
	pthread_mutex_unlock(&all_lock);
}

static void report(void)
{
	report_all(false);
}

static void on_usr2(int sig)
{
	(void)sig;
	report_all(true);
}

static void stats_open(void)
{
	const char *v = getenv("NOWAIT_STATS");
	struct sigaction old;

	if (!v || !*v || !strcmp(v, "0"))
		return;
	stats_mode = !strcmp(v, "json") ? 2 : 1;
	out = out_open();
	atexit(report);
	if (!sigaction(SIGUSR2, NULL, &old) && old.sa_handler == SIG_DFL &&
	    !(old.sa_flags & SA_SIGINFO)) {
		struct sigaction sa = {.sa_handler = on_usr2};

		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		sigaction(SIGUSR2, &sa, NULL);
	}
}

bool nw_stats_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, stats_open);
	return stats_mode != 0;
}

void nw_stats_ring(struct nw_ring *ring)
{
	struct nw_stats *st = calloc(1, sizeof(*st));

	if (!st)
		return;
	st->ring = ring;
	pthread_mutex_lock(&all_lock);
	nw_list_add_tail(&st->node, all_stats.next);
	pthread_mutex_unlock(&all_lock);
	ring->stats = st;
}

/*
 * A ring is freed (nothing can submit on it now): its table is reported
 * now, as the exit report would have, and dropped, so that a program that
 * makes and lets go of many rings (a fuzzer's inputs) keeps none of them.
 */
void nw_stats_ring_gone(struct nw_ring *ring)
{
	struct nw_stats *st = ring->stats;

	if (!st)
		return;
	pthread_mutex_lock(&all_lock);
	nw_list_del(&st->node);
	if (!exit_reported && out) {
		report_ring(out, st, stats_mode == 2);
		fflush(out);
	}
	pthread_mutex_unlock(&all_lock);
	for (unsigned int op = 0; op < NW_OP_LAST; op++)
		free(st->ops[op]);
	free(st);
	ring->stats = NULL;
}
