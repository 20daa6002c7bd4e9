/* SPDX-License-Identifier: MIT */
/*
 * The register opcodes about workers, busy polling and the engine:
 * IORING_REGISTER_IOWQ_MAX_WORKERS (defaults, old values back, clamps and
 * errors), IOWQ_AFF / UNREGISTER_IOWQ_AFF (errors, and a worker, named
 * iou-wrk-<tid> as io-wq names it, running on the CPU asked), NAPI /
 * UNREGISTER_NAPI (settings kept and answered, static ids), QUERY (with
 * and without a ring), PBUF_STATUS, and opcodes past 6.18's last.
 * Semantics: io_uring/register.c, io-wq.c, napi.c, query.c.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include "helpers.h"

static void ring_init(struct t_ring *r, unsigned int entries)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	T_ASSERT_EQ(t_ring_init(r, entries, &p), 0);
}

static unsigned int nproc(void)
{
	struct rlimit rl;

	T_ASSERT_EQ(getrlimit(RLIMIT_NPROC, &rl), 0);
	return rl.rlim_cur > 0x7fffffff ? 0xffffffffU
					: (unsigned int)rl.rlim_cur;
}

static int max_workers(struct t_ring *r, unsigned int b, unsigned int u,
		       unsigned int out[2])
{
	out[0] = b;
	out[1] = u;
	return t_register(r->fd, IORING_REGISTER_IOWQ_MAX_WORKERS, out, 2);
}

static void test_max_workers(void)
{
	unsigned int v[2], bound;
	struct t_ring r;

	/*
	 * The thread's first ring (main's, of 2 entries, as the kernel run's
	 * t_require_engine makes one of 1 first) made its io_wq: min(its
	 * sq_entries, 4 x CPUs) bound workers.
	 */
	ring_init(&r, 4);
	bound = t_engine() == T_ENGINE_KERNEL ? 1 : 2;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS, NULL, 2),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS, v, 1),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_MAX_WORKERS,
			       (void *)8, 2),
		    -EFAULT);
	T_ASSERT_EQ(max_workers(&r, 0, 0, v), 0);
	T_ASSERT_EQ(v[0], bound);
	T_ASSERT_EQ(v[1], nproc());
	T_ASSERT_EQ(max_workers(&r, 3, 0, v), 0);
	T_ASSERT_EQ(v[0], bound);
	T_ASSERT_EQ(max_workers(&r, 0, 5, v), 0);
	T_ASSERT_EQ(v[0], 3);
	T_ASSERT_EQ(v[1], nproc());
	/* Above INT_MAX: -EINVAL, nothing copied back. */
	T_ASSERT_EQ(max_workers(&r, 0x80000000U, 0, v), -EINVAL);
	T_ASSERT_EQ(v[0], 0x80000000U);
	/* Clamped to RLIMIT_NPROC. */
	T_ASSERT_EQ(max_workers(&r, 0x7fffffff, 0, v), 0);
	T_ASSERT_EQ(v[0], 3);
	T_ASSERT_EQ(v[1], 5);
	T_ASSERT_EQ(max_workers(&r, 0, 0, v), 0);
	T_ASSERT_EQ(v[0], nproc());
	T_ASSERT_EQ(max_workers(&r, 2, 2, v), 0);
	/* The limits are the thread's: another ring reports them too. */
	{
		struct t_ring r2;

		ring_init(&r2, 64);
		T_ASSERT_EQ(max_workers(&r2, 0, 0, v), 0);
		T_ASSERT_EQ(v[0], 2);
		T_ASSERT_EQ(v[1], 2);
		t_ring_exit(&r2);
	}
	t_ring_exit(&r);
}

/* The tid of a thread of ours named name, or 0 after a bounded search. */
static pid_t find_thread(const char *name)
{
	for (int tries = 0; tries < 500; tries++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *de;
		pid_t found = 0;

		T_ASSERT(d != NULL);
		while (!found && (de = readdir(d))) {
			char path[300], comm[32] = "";
			int fd;
			ssize_t n;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
				 de->d_name);
			fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			n = read(fd, comm, sizeof(comm) - 1);
			close(fd);
			if (n > 0 && comm[n - 1] == '\n')
				comm[n - 1] = '\0';
			if (n > 0 && !strcmp(comm, name))
				found = atoi(de->d_name);
		}
		closedir(d);
		if (found)
			return found;
		usleep(10000);
	}
	return 0;
}

static void test_iowq_aff(void)
{
	struct t_ring r;
	cpu_set_t set, got;
	char buf[8], name[32];
	struct io_uring_sqe *sqe;
	int fds[2], cpu;
	pid_t wrk;

	ring_init(&r, 8);
	CPU_ZERO(&set);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_AFF, NULL, 8),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_AFF, &set, 0),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_IOWQ_AFF, (void *)8, 8),
		    -EFAULT);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_IOWQ_AFF, &set, 0),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_IOWQ_AFF, NULL, 1),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_IOWQ_AFF, NULL, 0), 0);
	/* The last CPU we may run on. */
	T_ASSERT_EQ(sched_getaffinity(0, sizeof(got), &got), 0);
	for (cpu = CPU_SETSIZE - 1; !CPU_ISSET(cpu, &got); cpu--)
		;
	CPU_SET(cpu, &set);
	T_ASSERT_EQ(
		t_register(r.fd, IORING_REGISTER_IOWQ_AFF, &set, sizeof(set)),
		0);
	/* A worker: an IOSQE_ASYNC read of an empty pipe blocks in one. */
	T_ASSERT_EQ(pipe(fds), 0);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_READ, fds[0], buf, 1, 0, 1);
	sqe->flags = IOSQE_ASYNC;
	T_ASSERT_EQ(t_submit(&r), 1);
	snprintf(name, sizeof(name), "iou-wrk-%d", (int)gettid());
	wrk = find_thread(name);
	T_ASSERT_NE(wrk, 0);
	/* It moves at its next look at the pool, at the latest its start. */
	for (int tries = 0; tries < 200; tries++) {
		T_ASSERT_EQ(sched_getaffinity(wrk, sizeof(got), &got), 0);
		if (CPU_COUNT(&got) == 1)
			break;
		usleep(10000);
	}
	T_ASSERT_EQ(CPU_COUNT(&got), 1);
	T_ASSERT(CPU_ISSET(cpu, &got));
	T_ASSERT_EQ(write(fds[1], "x", 1), 1);
	t_expect_cqe(&r, 1, 1);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_IOWQ_AFF, NULL, 0), 0);
	close(fds[0]);
	close(fds[1]);
	t_ring_exit(&r);
}

static int napi(struct t_ring *r, unsigned int op, struct nw_napi_register *n)
{
	return t_register(r->fd, op, n, 1);
}

static void test_napi(void)
{
	struct nw_napi_register n;
	struct io_uring_params p;
	struct t_ring r;

	ring_init(&r, 8);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_NAPI, NULL, 1), -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_NAPI, &n, 0), -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_NAPI, (void *)8, 1),
		    -EFAULT);
	memset(&n, 0, sizeof(n));
	n.resv = 1;
	T_ASSERT_EQ(napi(&r, IORING_REGISTER_NAPI, &n), -EINVAL);
	/* Register: the old settings come back (inactive: 255). */
	memset(&n, 0, sizeof(n));
	n.busy_poll_to = 100;
	n.prefer_busy_poll = 3;
	n.op_param = 1; /* static tracking */
	T_ASSERT_EQ(napi(&r, IORING_REGISTER_NAPI, &n), 0);
	T_ASSERT_EQ(n.busy_poll_to, 0);
	T_ASSERT_EQ(n.op_param, 255);
	memset(&n, 0, sizeof(n));
	n.opcode = 1; /* add id */
	n.op_param = 100;
	T_ASSERT_EQ(napi(&r, IORING_REGISTER_NAPI, &n), -EINVAL);
	T_ASSERT_EQ(n.busy_poll_to, 100);
	T_ASSERT_EQ(n.prefer_busy_poll, 1);
	T_ASSERT_EQ(n.op_param, 1);
	n.opcode = 1;
	n.op_param = 100000;
	T_ASSERT_EQ(napi(&r, IORING_REGISTER_NAPI, &n), 0);
	n.opcode = 1;
	n.op_param = 100000;
	T_ASSERT_EQ(napi(&r, IORING_REGISTER_NAPI, &n), -EEXIST);
	n.opcode = 2; /* del id */
	n.op_param = 100000;
	T_ASSERT_EQ(napi(&r, IORING_REGISTER_NAPI, &n), 0);
	n.opcode = 2;
	n.op_param = 100000;
	T_ASSERT_EQ(napi(&r, IORING_REGISTER_NAPI, &n), -ENOENT);
	n.opcode = 3;
	T_ASSERT_EQ(napi(&r, IORING_REGISTER_NAPI, &n), -EINVAL);
	memset(&n, 0, sizeof(n));
	n.op_param = 2; /* no such tracking */
	T_ASSERT_EQ(napi(&r, IORING_REGISTER_NAPI, &n), -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_NAPI, NULL, 0), -EINVAL);
	memset(&n, 0, sizeof(n));
	T_ASSERT_EQ(napi(&r, IORING_UNREGISTER_NAPI, &n), 0);
	T_ASSERT_EQ(n.busy_poll_to, 100);
	T_ASSERT_EQ(n.prefer_busy_poll, 1);
	T_ASSERT_EQ(n.op_param, 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_NAPI, NULL, 1), 0);
	t_ring_exit(&r);

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_IOPOLL;
	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	memset(&n, 0, sizeof(n));
	T_ASSERT_EQ(napi(&r, IORING_REGISTER_NAPI, &n), -EINVAL);
	T_ASSERT_EQ(napi(&r, IORING_UNREGISTER_NAPI, &n), 0);
	t_ring_exit(&r);
}

struct query_hdr {
	uint64_t next_entry, query_data;
	uint32_t query_op, size;
	int32_t result;
	uint32_t resv[3];
};

static void query_hdr(struct query_hdr *h, uint32_t op, void *data,
		      uint32_t size)
{
	memset(h, 0, sizeof(*h));
	h->query_op = op;
	h->query_data = (uint64_t)(uintptr_t)data;
	h->size = size;
}

static void test_query(void)
{
	struct query_hdr h, h2;
	uint32_t data[16];
	struct t_ring r;

	ring_init(&r, 8);
	for (int fd = -1; fd != r.fd; fd = r.fd) {
		memset(data, 0xaa, sizeof(data));
		query_hdr(&h, 0, data, sizeof(data));
		T_ASSERT_EQ(t_register(fd, IORING_REGISTER_QUERY, &h, 0), 0);
		T_ASSERT_EQ(h.result, 0);
		T_ASSERT_EQ(h.size, 48);
		T_ASSERT_GE(data[0], 49); /* request opcodes, 6.1's or more */
		T_ASSERT_EQ(data[1], 36); /* register opcodes */
		T_ASSERT_EQ(data[10], 1); /* query opcodes */
		T_ASSERT_EQ(data[11], 0);
		T_ASSERT_EQ(data[12], 0); /* past the answer: zeroed */
		T_ASSERT_EQ(data[15], 0);
		T_ASSERT(data[2] & IORING_FEAT_NODROP);
		T_ASSERT_EQ(data[8], 0x7f); /* IOSQE_* */
	}
	/* Short buffer: its size only. */
	memset(data, 0xaa, sizeof(data));
	query_hdr(&h, 0, data, 8);
	T_ASSERT_EQ(t_register(-1, IORING_REGISTER_QUERY, &h, 0), 0);
	T_ASSERT_EQ(h.size, 8);
	T_ASSERT_EQ(data[2], 0xaaaaaaaa);
	/* Unknown query: -EOPNOTSUPP in the header, the data zeroed. */
	query_hdr(&h, 1, data, 16);
	T_ASSERT_EQ(t_register(-1, IORING_REGISTER_QUERY, &h, 0), 0);
	T_ASSERT_EQ(h.result, -EOPNOTSUPP);
	T_ASSERT_EQ(h.size, 0);
	T_ASSERT_EQ(data[0], 0);
	query_hdr(&h, 0, data, 0);
	T_ASSERT_EQ(t_register(-1, IORING_REGISTER_QUERY, &h, 0), 0);
	T_ASSERT_EQ(h.result, -EINVAL);
	query_hdr(&h, 0, data, 16);
	h.resv[1] = 1;
	T_ASSERT_EQ(t_register(-1, IORING_REGISTER_QUERY, &h, 0), 0);
	T_ASSERT_EQ(h.result, -EINVAL);
	/* A chain of two. */
	query_hdr(&h, 0, data, 16);
	query_hdr(&h2, 1, data + 8, 8);
	h.next_entry = (uint64_t)(uintptr_t)&h2;
	T_ASSERT_EQ(t_register(-1, IORING_REGISTER_QUERY, &h, 0), 0);
	T_ASSERT_EQ(h.result, 0);
	T_ASSERT_EQ(h2.result, -EOPNOTSUPP);
	/* Errors of the call itself. */
	query_hdr(&h, 0, data, 16);
	T_ASSERT_EQ(t_register(-1, IORING_REGISTER_QUERY, &h, 1), -EINVAL);
	T_ASSERT_EQ(t_register(-1, IORING_REGISTER_QUERY, (void *)8, 0),
		    -EFAULT);
	T_ASSERT_EQ(t_register(-1, IORING_REGISTER_QUERY, NULL, 0), 0);
	query_hdr(&h, 0, NULL, 16);
	T_ASSERT_EQ(t_register(-1, IORING_REGISTER_QUERY, &h, 0), -EFAULT);
	query_hdr(&h, 0, data, 16);
	h.next_entry = (uint64_t)(uintptr_t)&h;
	T_ASSERT_EQ(t_register(-1, IORING_REGISTER_QUERY, &h, 0), -ERANGE);
	/* Other opcodes need a ring; past 6.18's last is -EINVAL. */
	T_ASSERT_EQ(t_register(-1, IORING_REGISTER_PROBE, NULL, 0), -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, 36, NULL, 0), -EINVAL);
	T_ASSERT_EQ(t_register(-1, 36, NULL, 0), -EINVAL);
	t_ring_exit(&r);
}

/* IORING_REGISTER_PBUF_STATUS: a ring group's head, and its errors. */
static void test_pbuf_status(void)
{
	struct {
		uint32_t buf_group, head, resv[8];
	} st;
	struct io_uring_buf_reg reg;
	struct io_uring_buf_ring *br;
	struct io_uring_sqe *sqe;
	struct t_ring r;
	static char bufs[2][16];
	int fds[2];

	ring_init(&r, 8);
	memset(&st, 0, sizeof(st));
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PBUF_STATUS, &st, 1),
		    -ENOENT);
	br = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(br != MAP_FAILED);
	for (int i = 0; i < 2; i++) {
		br->bufs[i].addr = (uint64_t)(uintptr_t)bufs[i];
		br->bufs[i].len = sizeof(bufs[i]);
		br->bufs[i].bid = (uint16_t)i;
	}
	__atomic_store_n(&br->tail, 2, __ATOMIC_RELEASE);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uint64_t)(uintptr_t)br;
	reg.ring_entries = 4;
	reg.bgid = 3;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PBUF_RING, &reg, 1), 0);
	st.buf_group = 3;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PBUF_STATUS, &st, 1), 0);
	T_ASSERT_EQ(st.head, 0);
	T_ASSERT_EQ(pipe(fds), 0);
	T_ASSERT_EQ(write(fds[1], "abc", 3), 3);
	sqe = t_get_sqe(&r);
	t_prep_rw(sqe, IORING_OP_READ, fds[0], NULL, 8, 0, 9);
	sqe->flags = IOSQE_BUFFER_SELECT;
	sqe->buf_group = 3;
	T_ASSERT_EQ(t_run(&r, 9), 3);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PBUF_STATUS, &st, 1), 0);
	T_ASSERT_EQ(st.head, 1);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PBUF_STATUS, &st, 0),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PBUF_STATUS, NULL, 1),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PBUF_STATUS, (void *)8, 1),
		    -EFAULT);
	st.resv[7] = 1;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PBUF_STATUS, &st, 1),
		    -EINVAL);
	memset(&st, 0, sizeof(st));
	st.buf_group = 0x10003;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PBUF_STATUS, &st, 1),
		    -ENOENT);
	close(fds[0]);
	close(fds[1]);
	t_ring_exit(&r);
	munmap(br, 4096);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	{
		struct t_ring first;

		ring_init(&first, 2);
		t_ring_exit(&first);
	}
	test_max_workers();
	test_iowq_aff();
	test_napi();
	test_query();
	test_pbuf_status();
	return T_EXIT_PASS;
}
