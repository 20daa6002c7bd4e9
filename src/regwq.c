/* SPDX-License-Identifier: MIT */
/*
 * Register opcodes about the workers, busy polling and the engine itself:
 * IOWQ_AFF, UNREGISTER_IOWQ_AFF, IOWQ_MAX_WORKERS (kernel register.c,
 * io-wq.c io_wq_max_workers, io_wq_cpu_affinity), NAPI, UNREGISTER_NAPI
 * (napi.c: the settings are kept and answered, nothing is busy-polled, as
 * on a kernel whose sockets have no NAPI id) and QUERY (query.c). Run by
 * register.c's table under reg_lock; QUERY also without a ring (fd -1).
 *
 * The worker pool is the process's (iowq.c), where the kernel has one per
 * task: the limits MAX_WORKERS reports are the calling thread's (an
 * SQPOLL ring's: its poller's), starting as the kernel's io-wq does at
 * min(sq_entries, 4 x CPUs) bound (of the thread's first ring) and
 * RLIMIT_NPROC unbound workers, and the last call sets the pool's caps.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include "internal.h"
#include "opdef.h"
#include "regwq.h"

/* The io_wq limits of the calling thread, made at its first use. */
static __thread unsigned int tls_wq_max[2];

static unsigned int nproc_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NPROC, &rl) || rl.rlim_cur > 0xffffffffU)
		return 0xffffffffU;
	return (unsigned int)rl.rlim_cur;
}

/* io_init_wq_offload's defaults, for a task whose first ring is ring. */
static void wq_defaults(const struct nw_ring *ring, unsigned int max[2])
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int bound = 4 * (unsigned int)(cpus > 0 ? cpus : 1);

	if (max[0])
		return;
	max[0] = ring->sq_entries < bound ? ring->sq_entries : bound;
	max[1] = nproc_limit();
}

void nw_regwq_task_init(const struct nw_ring *ring)
{
	wq_defaults(ring, tls_wq_max);
	nw_iowq_init(); /* on the program's thread, never a reactor's */
}

int nw_reg_iowq_max_workers(struct nw_ring *ring, void *arg,
			    unsigned int nr_args)
{
	unsigned int *max = ring->sqd ? ring->sqp_wq_max : tls_wq_max;
	unsigned int v[2], prev[2], nproc = nproc_limit();

	if (!arg || nr_args != 2)
		return -EINVAL;
	if (nw_copy_from_user(v, arg, sizeof(v)))
		return -EFAULT;
	if (v[0] > 0x7fffffffU || v[1] > 0x7fffffffU)
		return -EINVAL;
	wq_defaults(ring, max);
	for (int i = 0; i < 2; i++) {
		prev[i] = max[i];
		if (v[i] > nproc)
			v[i] = nproc;
		if (v[i])
			max[i] = v[i];
	}
	nw_iowq_set_max(v);
	return nw_copy_to_user(arg, prev, sizeof(prev)) ? -EFAULT : 0;
}

/* The kernel's cpumask_size(): the longs nr_cpu_ids bits take. */
static size_t cpumask_bytes(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (n < 1)
		n = 1;
	return (size_t)(n + 63) / 64 * 8;
}

int nw_reg_iowq_aff(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	cpu_set_t set;
	size_t len = nr_args;

	(void)ring;
	if (!arg || !nr_args)
		return -EINVAL;
	if (len > cpumask_bytes())
		len = cpumask_bytes();
	if (len > sizeof(set))
		len = sizeof(set);
	CPU_ZERO(&set);
	if (nw_copy_from_user(&set, arg, len))
		return -EFAULT;
	nw_iowq_set_affinity(&set, len);
	return 0;
}

int nw_reg_unregister_iowq_aff(struct nw_ring *ring, void *arg,
			       unsigned int nr_args)
{
	(void)ring;
	if (arg || nr_args)
		return -EINVAL;
	nw_iowq_set_affinity(NULL, 0);
	return 0;
}

/* struct io_uring_napi's opcode and tracking values (6.15). */
enum { NAPI_REGISTER_OP, NAPI_STATIC_ADD_ID, NAPI_STATIC_DEL_ID };
enum { NAPI_DYNAMIC, NAPI_STATIC, NAPI_INACTIVE = 255 };
#define NW_MIN_NAPI_ID 8192U /* below: CPU ids (busy_poll's napi_id_valid) */

static int napi_find(const struct nw_ring *ring, unsigned int id)
{
	for (unsigned int i = 0; i < ring->nr_napi_ids; i++)
		if (ring->napi_ids[i] == id)
			return (int)i;
	return -1;
}

/* IO_URING_NAPI_STATIC_ADD_ID / DEL_ID on a STATIC ring. */
static int napi_static(struct nw_ring *ring, unsigned int op, unsigned int id)
{
	int i;

	if (ring->napi_track != NAPI_STATIC || id < NW_MIN_NAPI_ID)
		return -EINVAL;
	i = napi_find(ring, id);
	if (op == NAPI_STATIC_ADD_ID) {
		if (i >= 0)
			return -EEXIST;
		if (ring->nr_napi_ids == NW_NAPI_IDS)
			return -ENOMEM;
		ring->napi_ids[ring->nr_napi_ids++] = id;
		return 0;
	}
	if (i < 0)
		return -ENOENT;
	ring->napi_ids[i] = ring->napi_ids[--ring->nr_napi_ids];
	return 0;
}

int nw_reg_napi(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	struct nw_napi_register napi, cur;

	if (!arg || nr_args != 1)
		return -EINVAL;
	if (ring->flags & IORING_SETUP_IOPOLL)
		return -EINVAL;
	if (nw_copy_from_user(&napi, arg, sizeof(napi)))
		return -EFAULT;
	if (napi.pad[0] || napi.pad[1] || napi.resv)
		return -EINVAL;
	memset(&cur, 0, sizeof(cur));
	cur.busy_poll_to = ring->napi_busy_us;
	cur.prefer_busy_poll = ring->napi_prefer;
	cur.op_param = ring->napi_track;
	if (nw_copy_to_user(arg, &cur, sizeof(cur)))
		return -EFAULT;
	if (napi.opcode != NAPI_REGISTER_OP)
		return napi.opcode <= NAPI_STATIC_DEL_ID
			       ? napi_static(ring, napi.opcode, napi.op_param)
			       : -EINVAL;
	if (napi.op_param != NAPI_DYNAMIC && napi.op_param != NAPI_STATIC)
		return -EINVAL;
	ring->nr_napi_ids = 0;
	ring->napi_track = (uint8_t)napi.op_param;
	ring->napi_busy_us = napi.busy_poll_to;
	ring->napi_prefer = napi.prefer_busy_poll != 0;
	return 0;
}

int nw_reg_unregister_napi(struct nw_ring *ring, void *arg,
			   unsigned int nr_args)
{
	struct nw_napi_register cur;

	if (nr_args != 1)
		return -EINVAL;
	memset(&cur, 0, sizeof(cur));
	cur.busy_poll_to = ring->napi_busy_us;
	cur.prefer_busy_poll = ring->napi_prefer;
	if (arg && nw_copy_to_user(arg, &cur, sizeof(cur)))
		return -EFAULT;
	ring->napi_busy_us = 0;
	ring->napi_prefer = false;
	ring->napi_track = NAPI_INACTIVE;
	return 0;
}

/* ---- IORING_REGISTER_QUERY (6.18: one query, the opcodes) ---- */

struct nw_query_hdr {
	uint64_t next_entry;
	uint64_t query_data;
	uint32_t query_op;
	uint32_t size;
	int32_t result;
	uint32_t resv[3];
};

struct nw_query_opcode {
	uint32_t nr_request_opcodes;
	uint32_t nr_register_opcodes;
	uint64_t feature_flags;
	uint64_t ring_setup_flags;
	uint64_t enter_flags;
	uint64_t sqe_flags;
	uint32_t nr_query_opcodes;
	uint32_t pad;
};

#define NW_QUERY_MAX_ENTRIES 1000

/* What this engine implements, in the kernel's terms. */
static size_t query_ops(struct nw_query_opcode *e)
{
	e->nr_request_opcodes = NW_OP_LAST;
	e->nr_register_opcodes = NW_REGISTER_LAST;
	e->feature_flags = NW_FEATURES;
	e->ring_setup_flags = NW_SETUP_FLAGS;
	e->enter_flags = NW_ENTER_FLAGS;
	e->sqe_flags = NW_SQE_VALID_FLAGS;
	e->nr_query_opcodes = 1;
	e->pad = 0;
	return sizeof(*e);
}

/* io_handle_query_entry: answer one header; -errno ends the walk. */
static int query_entry(void *uhdr, uint64_t *next)
{
	static const char zeros[sizeof(struct nw_query_opcode)];
	struct nw_query_opcode data;
	struct nw_query_hdr hdr;
	size_t usize, res = 0, size;
	void *udata;
	int ret = -EINVAL;

	if (nw_copy_from_user(&hdr, uhdr, sizeof(hdr)))
		return -EFAULT;
	usize = hdr.size;
	size = usize < sizeof(data) ? usize : sizeof(data);
	udata = (void *)(uintptr_t)hdr.query_data;
	memset(&data, 0, sizeof(data));
	if (hdr.query_op >= 1) {
		ret = -EOPNOTSUPP;
	} else if (!hdr.resv[0] && !hdr.resv[1] && !hdr.resv[2] &&
		   !hdr.result && size) {
		if (nw_copy_from_user(&data, udata, size))
			return -EFAULT;
		res = query_ops(&data);
		ret = 0;
	}
	hdr.result = ret;
	hdr.size = (uint32_t)(usize < res ? usize : res);
	/* copy_struct_to_user: the answer, then zeros to the caller's size */
	if (nw_copy_to_user(udata, &data, hdr.size))
		return -EFAULT;
	for (size_t off = hdr.size; off < usize; off += sizeof(zeros)) {
		size_t n = usize - off < sizeof(zeros) ? usize - off
						       : sizeof(zeros);

		if (nw_copy_to_user((char *)udata + off, zeros, n))
			return -EFAULT;
	}
	if (nw_copy_to_user(uhdr, &hdr, sizeof(hdr)))
		return -EFAULT;
	*next = hdr.next_entry;
	return 0;
}

int nw_reg_query(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	void *uhdr = arg;
	int nr = 0;

	(void)ring;
	if (nr_args)
		return -EINVAL;
	while (uhdr) {
		uint64_t next;
		int ret = query_entry(uhdr, &next);

		if (ret)
			return ret;
		uhdr = (void *)(uintptr_t)next;
		if (++nr >= NW_QUERY_MAX_ENTRIES)
			return -ERANGE;
	}
	return 0;
}
