/* SPDX-License-Identifier: MIT */
/*
 * The checks of a READ or WRITE family request that come before any
 * transfer: at prep, the SQE's ioprio (ioprio_check_cap) and attributes
 * (io_prep_rw_pi); at issue, its RWF_* flags against the file, as
 * io_rw_init_file and kiocb_set_rw_flags make them (kernel io_uring/rw.c,
 * fs/read_write.c), where the system call checks less, later or not at
 * all. rw.c calls them; the transfers are its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <linux/capability.h>
#include "rw-int.h"

#define NW_RW_ATTR_FLAG_PI (1ULL << 0) /* IORING_RW_ATTR_FLAG_PI */
/* Above any user address (57-bit paging included): access_ok fails. */
#define NW_RW_USER_TOP	   0x00fffffffffff000ULL

/* Has the caller CAP_SYS_ADMIN or CAP_SYS_NICE (effective)? */
static bool rt_capable(void)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2] = {{0}};

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[0].effective &
	       ((1U << CAP_SYS_ADMIN) | (1U << CAP_SYS_NICE));
}

/* struct io_uring_attr_pi (6.14): what attr_ptr points at. */
struct nw_attr_pi {
	uint16_t flags;
	uint16_t app_tag;
	uint32_t len;
	uint64_t addr;
	uint64_t seed;
	uint64_t rsvd;
};

/*
 * attr_type_mask (6.14+, over __pad2) and attr_ptr (addr3), as
 * io_prep_rw_pi reads them at prep: only the PI attribute is known
 * (other bits -EINVAL); its struct is copied (-EFAULT), its reserved
 * word must be 0 and its buffer a user range (-EFAULT). The metadata
 * needs a block device's integrity support, none of ours: the issue
 * refuses it after the file's mode (-EINVAL, as 6.18 does for files
 * and pipes).
 */
int nw_rw_attr_prep(struct nw_rw *rw, const struct io_uring_sqe *sqe)
{
	uint64_t mask = READ_ONCE(sqe->__pad2[0]);
	struct nw_attr_pi pi;

	rw->pi = false;
	if (!mask)
		return 0;
	if (mask != NW_RW_ATTR_FLAG_PI)
		return -EINVAL;
	if (nw_copy_from_user(&pi, (void *)(uintptr_t)READ_ONCE(sqe->addr3),
			      sizeof(pi)))
		return -EFAULT;
	if (pi.rsvd)
		return -EINVAL;
	if (pi.addr + pi.len < pi.addr || pi.addr + pi.len > NW_RW_USER_TOP)
		return -EFAULT;
	rw->pi = true;
	return 0;
}

/*
 * ioprio_check_cap: the class is the top 3 bits, the level the low 3 (the
 * bits between are hints, not checked). RT needs a capability (-EPERM),
 * NONE a level of 0, and classes past IDLE do not exist.
 */
int nw_rw_ioprio_check(unsigned int ioprio)
{
	unsigned int class = (ioprio >> 13) & 7, level = ioprio & 7;

	switch (class) {
	case 0:
		return level ? -EINVAL : 0;
	case 1:
		return rt_capable() ? 0 : -EPERM;
	case 2:
	case 3:
		return 0;
	default:
		return -EINVAL;
	}
}

/* The RWF_* flags the kernel's kiocb_set_rw_flags knows (6.18). */
#define NW_RWF_KNOWN	 0x1ffu
#define NW_RWF_ATOMIC	 0x40u
#define NW_RWF_DONTCACHE 0x80u

/*
 * io_rw_init_file with kiocb_set_rw_flags, for a request with rw_flags:
 * the kernel checks them once the file is known and before any transfer,
 * a length of 0 and a socket's refused offset included, where the system
 * call skips them or checks the offset first. In its order: the fd and
 * its mode (-EBADF), unknown bits (-EOPNOTSUPP), APPEND with NOAPPEND
 * (-EINVAL), ATOMIC (a direct write to a file or block device only, else
 * -EOPNOTSUPP), DONTCACHE (files only), then HIPRI, which only an IOPOLL
 * ring takes (-EINVAL). NOWAIT's support is mostly the system call's to
 * say, but it never looks for a length of 0 and refuses a file without
 * read or write ops first (-EINVAL): a directory, an epoll fd, a ring's
 * and the regular files of some filesystems have no FMODE_NOWAIT
 * (-EOPNOTSUPP), as rw_nowait_kind tells, which also marks the regular
 * files whose issue io_uring decides itself (rw.c's rw_reg_nowait).
 */
/*
 * A regular file's FMODE_NOWAIT and FOP_BUFFER_WASYNC, which no system
 * call shows, by its filesystem (6.18): tmpfs, procfs and kernfs (sysfs,
 * cgroup) set no FMODE_NOWAIT, which the system call tells only for a
 * length above 0; ext4, XFS and btrfs set it, and of these XFS and btrfs
 * alone take a buffered write with IOCB_NOWAIT (ext4's pwritev2 says
 * -EOPNOTSUPP, the generic write checks -EINVAL). Any other filesystem is
 * left to the system call's answers, as before: what it sets is not
 * known here.
 */
static int rw_fs_nowait(int fd, bool write, int fl)
{
	struct statfs sf;

	if (fstatfs(fd, &sf))
		return RW_NOWAIT_OK;
	switch ((unsigned long)sf.f_type) {
	case TMPFS_MAGIC:
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
		return RW_NOWAIT_NONE;
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
		return RW_NOWAIT_REG;
	case EXT4_SUPER_MAGIC:
		return write && !(fl & O_DIRECT) ? RW_NOWAIT_REG_EAGAIN
						 : RW_NOWAIT_REG;
	default:
		return RW_NOWAIT_OK;
	}
}

static int rw_nowait_kind(int fd, bool write, int fl)
{
	char path[40], link[32];
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st))
		return RW_NOWAIT_OK;
	if (S_ISDIR(st.st_mode))
		return RW_NOWAIT_NONE;
	if (S_ISREG(st.st_mode))
		return rw_fs_nowait(fd, write, fl);
	if (st.st_mode & S_IFMT)
		return RW_NOWAIT_OK;
	/* An anon inode: which one its link says (no fd is opened). */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return RW_NOWAIT_OK;
	link[n] = 0;
	if (!strcmp(link, "anon_inode:[eventpoll]") ||
	    !strcmp(link, "anon_inode:[io_uring]"))
		return RW_NOWAIT_NONE;
	if (write && !strcmp(link, "anon_inode:[eventfd]"))
		return RW_NOWAIT_LOOP;
	return RW_NOWAIT_OK;
}

int nw_rw_init_file(struct nw_req *req, struct nw_rw *rw)
{
	unsigned int f = (unsigned int)rw->rw_flags;
	int fl = fcntl(req->fd, F_GETFL);
	struct stat st;

	if (!nw_rw_mode_ok(rw, fl))
		return -EBADF;
	if (f & ~NW_RWF_KNOWN)
		return -EOPNOTSUPP;
	if ((f & RWF_APPEND) && (f & RWF_NOAPPEND))
		return -EINVAL;
	if (f & RWF_NOWAIT) {
		int k = rw_nowait_kind(req->fd, rw->write, fl);

		if (k == RW_NOWAIT_NONE)
			return -EOPNOTSUPP;
		rw->nowait = (uint8_t)k;
	}
	if (f & (NW_RWF_ATOMIC | NW_RWF_DONTCACHE)) {
		bool file = !fstat(req->fd, &st) &&
			    (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));

		if ((f & NW_RWF_ATOMIC) &&
		    (!rw->write || !file || !(fl & O_DIRECT)))
			return -EOPNOTSUPP;
		if ((f & NW_RWF_DONTCACHE) && !file)
			return -EOPNOTSUPP;
	}
	if ((f & RWF_HIPRI) && !(req->ring->flags & IORING_SETUP_IOPOLL))
		return -EINVAL;
	if (rw->pi)
		return -EINVAL;
	rw->flags_ok = true;
	return 0;
}
