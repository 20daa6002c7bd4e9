/* SPDX-License-Identifier: MIT */
/*
 * What IORING_REGISTER_BUFFERS(2) and BUFFERS_UPDATE check about the
 * memory of a buffer: the kernel pins its pages (io_pin_pages:
 * pin_user_pages_fast with FOLL_WRITE | FOLL_LONGTERM) and counts them
 * against RLIMIT_MEMLOCK (io_buffer_account_pin). Semantics: kernel
 * io_uring/rsrc.c, memmap.c and mm/gup.c check_vma_flags (6.18).
 *
 * The engine pins nothing; it asks the same questions of the address
 * space, through the PROCMAP_QUERY ioctl on /proc/self/maps (Linux 6.11,
 * one call per mapping the buffer spans; else the text of the file):
 * - a page with no mapping, or a mapping without PROT_WRITE: -EFAULT;
 * - a shared writable mapping of a file whose filesystem tracks dirty
 *   pages (a disk filesystem, not tmpfs/shmem or hugetlbfs): -EFAULT, as
 *   FOLL_LONGTERM refuses (writable_file_mapping_allowed). Shared
 *   anonymous memory, memfds and SysV shm live on internal shmem mounts
 *   (no mount table entry, device major 0): fine.
 * Without /proc only holes are found (msync).
 *
 * RLIMIT_MEMLOCK: a process without CAP_IPC_LOCK (in the initial user
 * namespace) has each buffer's pages counted, plus the ring's own pages
 * (the kernel counts its ring memory too), and a registration that would
 * go over the limit is -ENOMEM. The kernel's count is per user across
 * every process and ring; here it is the buffers of this process plus
 * the ring the buffer is for, which is the same for one ring. Huge pages
 * are counted page by page (the kernel counts a compound page whole,
 * once); the capability is looked at when the buffer is registered (the
 * kernel looks at ring setup).
 * Runs on the thread that calls register, under the ring's reg_lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <linux/capability.h>
#include "pin.h"

#define NW_PAGE_SHIFT 12
#define NW_PAGE_SIZE  (1ULL << NW_PAGE_SHIFT)

/* The PROCMAP_QUERY ABI (include/uapi/linux/fs.h, 6.11). */
struct nw_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
_Static_assert(sizeof(struct nw_procmap_query) == 104, "procmap_query");
#define NW_PROCMAP_QUERY    _IOWR('f', 17, struct nw_procmap_query)
#define NW_PROCMAP_WRITABLE 0x02
#define NW_PROCMAP_SHARED   0x08

/* One mapping, as the checks need it. */
struct vma {
	uint64_t start, end;
	bool writable, shared, file;
	unsigned int major, minor;
};

/* Pages pinned by the buffers of this process, as counted (atomic). */
static unsigned long pinned_pages;
/* Set once PROCMAP_QUERY said it is not there. */
static bool no_procmap_query;

void nw_pin_begin(struct nw_pin_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->maps_fd = -1;
}

void nw_pin_end(struct nw_pin_ctx *ctx)
{
	if (ctx->maps_fd >= 0)
		close(ctx->maps_fd);
}

/* Parse "start-end perms offset major:minor inode" of a maps line. */
static bool parse_line(const char *line, struct vma *v)
{
	unsigned long long start, end, inode;
	unsigned int major, minor;
	char perms[8];

	if (sscanf(line, "%llx-%llx %7s %*x %x:%x %llu", &start, &end, perms,
		   &major, &minor, &inode) != 6)
		return false;
	v->start = start;
	v->end = end;
	v->writable = perms[1] == 'w';
	v->shared = perms[3] == 's';
	v->file = inode || major || minor;
	v->major = major;
	v->minor = minor;
	return true;
}

/* The text way: find the line covering addr. 0, -ENOENT or -EIO. */
static int query_text(int fd, uint64_t addr, struct vma *v)
{
	char buf[8192], *line, *nl;
	size_t have = 0;
	off_t off = 0;
	ssize_t n;

	for (;;) {
		n = pread(fd, buf + have, sizeof(buf) - 1 - have, off);
		if (n < 0)
			return -EIO;
		off += n;
		have += (size_t)n;
		buf[have] = 0;
		line = buf;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			if (parse_line(line, v) && addr >= v->start &&
			    addr < v->end)
				return 0;
			line = nl + 1;
		}
		if (!n)
			return -ENOENT;
		have = strlen(line);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* not a maps line: skip it */
	}
}

/* The mapping covering addr: 0, -ENOENT (none) or -EIO (cannot tell). */
static int query(struct nw_pin_ctx *ctx, uint64_t addr, struct vma *v)
{
	struct nw_procmap_query q;

	if (ctx->maps_fd == -1) {
		ctx->maps_fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
		if (ctx->maps_fd < 0)
			ctx->maps_fd = -2;
	}
	if (ctx->maps_fd < 0)
		return -EIO;
	if (__atomic_load_n(&no_procmap_query, __ATOMIC_RELAXED))
		return query_text(ctx->maps_fd, addr, v);
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.query_addr = addr;
	if (ioctl(ctx->maps_fd, NW_PROCMAP_QUERY, &q) < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		__atomic_store_n(&no_procmap_query, true, __ATOMIC_RELAXED);
		return query_text(ctx->maps_fd, addr, v);
	}
	v->start = q.vma_start;
	v->end = q.vma_end;
	v->writable = q.vma_flags & NW_PROCMAP_WRITABLE;
	v->shared = q.vma_flags & NW_PROCMAP_SHARED;
	v->file = q.inode || q.dev_major || q.dev_minor;
	v->major = q.dev_major;
	v->minor = q.dev_minor;
	return 0;
}

/* The device of the kernel's internal shmem mount (memfds, shared anon). */
static dev_t shm_dev(void)
{
	static dev_t dev;
	static bool known;
	struct stat st;
	int fd;

	if (__atomic_load_n(&known, __ATOMIC_ACQUIRE))
		return dev;
	fd = memfd_create("nowait-pin", MFD_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st))
		dev = st.st_dev;
	if (fd >= 0)
		close(fd);
	__atomic_store_n(&known, true, __ATOMIC_RELEASE);
	return dev;
}

/*
 * Does the filesystem on major:minor let a shared writable mapping be
 * pinned for long (no dirty tracking: tmpfs/shmem, hugetlbfs)? From the
 * mount table; a device no mount shows is an internal mount (shmem for
 * shared anonymous memory and SysV shm, hugetlbfs for MAP_HUGETLB).
 */
static bool fs_pinnable(unsigned int major, unsigned int minor)
{
	char line[1024], want[32], fstype[64];
	bool found = false, ok = false;
	FILE *f;

	if (makedev(major, minor) == shm_dev())
		return true;
	snprintf(want, sizeof(want), " %u:%u ", major, minor);
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return major == 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");

		if (!strstr(line, want) || !sep || strstr(line, want) > sep)
			continue;
		found = true;
		if (sscanf(sep + 3, "%63s", fstype) == 1)
			ok = !strcmp(fstype, "tmpfs") ||
			     !strcmp(fstype, "hugetlbfs");
	}
	fclose(f);
	return found ? ok : major == 0;
}

/* Why pinning one mapping would fail: 0 or -EFAULT. */
static int vma_check(const struct vma *v)
{
	if (!v->writable)
		return -EFAULT;
	if (v->shared && v->file && !fs_pinnable(v->major, v->minor))
		return -EFAULT;
	return 0;
}

/* No /proc: only a hole can be found (msync says -ENOMEM). */
static int check_holes(uint64_t start, uint64_t end)
{
	if (msync((void *)(uintptr_t)start, end - start, MS_ASYNC) &&
	    errno == ENOMEM)
		return -EFAULT;
	return 0;
}

int nw_pin_check(struct nw_pin_ctx *ctx, uint64_t addr, uint64_t len)
{
	uint64_t start = addr & ~(NW_PAGE_SIZE - 1);
	uint64_t end = (addr + len + NW_PAGE_SIZE - 1) & ~(NW_PAGE_SIZE - 1);
	uint64_t at = start;
	unsigned int n;

	if (start >= ctx->ok_start && end <= ctx->ok_end)
		return 0;
	/* Bounded: each step moves past one mapping. */
	for (n = 0; at < end && n < (1U << 20); n++) {
		struct vma v;
		int ret = query(ctx, at, &v);

		if (ret == -ENOENT)
			return -EFAULT;
		if (ret)
			return check_holes(start, end);
		ret = vma_check(&v);
		if (ret)
			return ret;
		at = v.end > at ? v.end : end;
	}
	ctx->ok_start = start;
	ctx->ok_end = end;
	return 0;
}

/* ns_capable(&init_user_ns, CAP_IPC_LOCK), as far as we can tell. */
static bool can_lock_memory(void)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	unsigned long a = 1, b = 1, c = 0;
	FILE *f;

	if (syscall(SYS_capget, &hdr, data) ||
	    !(data[CAP_IPC_LOCK / 32].effective & (1U << (CAP_IPC_LOCK % 32))))
		return false;
	/* The initial user namespace maps every id to itself. */
	f = fopen("/proc/self/uid_map", "re");
	if (!f)
		return true;
	if (fscanf(f, "%lu %lu %lu", &a, &b, &c) != 3)
		a = 1;
	fclose(f);
	return !a && !b && c == 4294967295UL;
}

/* rings_size() and the SQE array: the pages the kernel counts at setup. */
static unsigned long ring_pages(const struct nw_ring *ring)
{
	uint64_t rings = 64 + (uint64_t)ring->cq_entries * 16;
	uint64_t sqes = (uint64_t)ring->sq_entries << ring->sqe_shift;

	if (ring->cqe_shift == 5)
		rings *= 2;
	rings = (rings + 63) & ~63ULL;
	if (!(ring->flags & IORING_SETUP_NO_SQARRAY))
		rings += (uint64_t)ring->sq_entries * 4;
	return (unsigned long)(((rings + NW_PAGE_SIZE - 1) >> NW_PAGE_SHIFT) +
			       ((sqes + NW_PAGE_SIZE - 1) >> NW_PAGE_SHIFT));
}

int nw_pin_account(struct nw_pin_ctx *ctx, struct nw_ring *ring, uint64_t addr,
		   uint64_t len, unsigned long *acct)
{
	uint64_t start = addr >> NW_PAGE_SHIFT;
	uint64_t end = (addr + len + NW_PAGE_SIZE - 1) >> NW_PAGE_SHIFT;
	unsigned long pages = (unsigned long)(end - start), limit, cur;
	struct rlimit rl;

	*acct = 0;
	if (!ctx->acct_mode)
		ctx->acct_mode = can_lock_memory() ? 1 : 2;
	if (ctx->acct_mode == 1)
		return 0;
	limit = ULONG_MAX;
	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY)
		limit = (unsigned long)(rl.rlim_cur >> NW_PAGE_SHIFT);
	cur = __atomic_load_n(&pinned_pages, __ATOMIC_RELAXED);
	do {
		if (cur + pages + ring_pages(ring) > limit)
			return -ENOMEM;
	} while (!__atomic_compare_exchange_n(&pinned_pages, &cur, cur + pages,
					      true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	*acct = pages;
	return 0;
}

void nw_pin_unaccount(unsigned long acct)
{
	if (acct)
		__atomic_sub_fetch(&pinned_pages, acct, __ATOMIC_RELAXED);
}
