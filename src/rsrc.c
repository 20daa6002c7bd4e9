/* SPDX-License-Identifier: MIT */
/*
 * Registered files (IOSQE_FIXED_FILE) and registered buffers (READ_FIXED,
 * WRITE_FIXED). The file table holds the engine's own duplicate of each
 * fd, so that the program closing its fd leaves the slot working, as the
 * kernel's file reference does. Tables change on the submit side (the
 * register calls take it), so the submit path reads them without a lock.
 * Semantics: kernel io_uring/rsrc.c, filetable.c, register.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include "rsrc.h"

#define NW_MAX_FIXED_FILES (1U << 20)
#define NW_MAX_REG_BUFFERS (1U << 14)
#define NW_MAX_BUF_LEN	   (1ULL << 30)

static void close_files(int *files, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		if (files[i] >= 0)
			close(files[i]);
}

/* Our own reference to fd for a slot: -1 stays empty; rings refused. */
static int slot_fd(int fd, int *out)
{
	struct nw_ring *ring;

	*out = -1;
	if (fd == -1)
		return 0;
	if (fd < 0 || nw_ring_lookup(fd, &ring) == 0)
		return -EBADF;
	*out = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	return *out < 0 ? -EBADF : 0;
}

int nw_rsrc_register_files(struct nw_ring *ring, void *arg,
			   unsigned int nr_args)
{
	struct rlimit rl;
	int *fds, *files;
	int ret = 0;

	if (ring->files)
		return -EBUSY;
	if (!nr_args)
		return -EINVAL;
	if (nr_args > NW_MAX_FIXED_FILES ||
	    (!getrlimit(RLIMIT_NOFILE, &rl) && nr_args > rl.rlim_cur))
		return -EMFILE;
	fds = malloc(nr_args * sizeof(int));
	files = malloc(nr_args * sizeof(int));
	if (!fds || !files) {
		ret = -ENOMEM;
		goto out;
	}
	if (arg && nw_copy_from_user(fds, arg, nr_args * sizeof(int))) {
		ret = -EFAULT;
		goto out;
	}
	for (unsigned int i = 0; i < nr_args; i++) {
		ret = slot_fd(arg ? fds[i] : -1, &files[i]);
		if (ret) {
			close_files(files, i);
			goto out;
		}
	}
	nw_submit_lock(ring);
	ring->files = files;
	ring->nr_files = nr_args;
	nw_submit_unlock(ring);
	files = NULL;
out:
	free(fds);
	free(files);
	return ret;
}

int nw_rsrc_unregister_files(struct nw_ring *ring, void *arg,
			     unsigned int nr_args)
{
	int *files;
	unsigned int nr;

	if (arg || nr_args)
		return -EINVAL;
	nw_submit_lock(ring);
	files = ring->files;
	nr = ring->nr_files;
	ring->files = NULL;
	ring->nr_files = 0;
	nw_submit_unlock(ring);
	if (!files)
		return -ENXIO;
	close_files(files, nr);
	free(files);
	return 0;
}

/* IORING_REGISTER_FILES_UPDATE: returns the number of slots updated. */
int nw_rsrc_update_files(struct nw_ring *ring, void *arg, unsigned int nr_args)
{
	struct io_uring_files_update up;
	int ret = 0, fd, nfd;
	unsigned int done;

	if (!ring->files)
		return -ENXIO;
	if (!nr_args)
		return -EINVAL;
	if (nw_copy_from_user(&up, arg, sizeof(up)))
		return -EFAULT;
	if (up.resv)
		return -EINVAL;
	if (up.offset + nr_args < up.offset ||
	    up.offset + nr_args > ring->nr_files)
		return -EINVAL;
	for (done = 0; done < nr_args; done++) {
		const int *ufds = (const int *)(uintptr_t)up.fds;

		if (nw_copy_from_user(&fd, ufds + done, sizeof(fd))) {
			ret = -EFAULT;
			break;
		}
		if (fd == IORING_REGISTER_FILES_SKIP)
			continue;
		ret = slot_fd(fd, &nfd);
		if (ret)
			break;
		nw_submit_lock(ring);
		if (ring->files[up.offset + done] >= 0)
			close(ring->files[up.offset + done]);
		ring->files[up.offset + done] = nfd;
		nw_submit_unlock(ring);
	}
	return done ? (int)done : ret;
}

int nw_rsrc_file(struct nw_ring *ring, unsigned int idx)
{
	if (!ring->files || idx >= ring->nr_files || ring->files[idx] < 0)
		return -EBADF;
	return ring->files[idx];
}

/* io_buffer_validate: a NULL base needs length 0; at most 1 GiB. */
static int buffer_validate(const struct iovec *iov)
{
	if (!iov->iov_base)
		return iov->iov_len ? -EFAULT : 0;
	if (!iov->iov_len || iov->iov_len > NW_MAX_BUF_LEN)
		return -EFAULT;
	return 0;
}

int nw_rsrc_register_buffers(struct nw_ring *ring, void *arg,
			     unsigned int nr_args)
{
	struct iovec *bufs;
	int ret = 0;

	if (ring->bufs)
		return -EBUSY;
	if (!nr_args || nr_args > NW_MAX_REG_BUFFERS)
		return -EINVAL;
	bufs = malloc(nr_args * sizeof(*bufs));
	if (!bufs)
		return -ENOMEM;
	if (nw_copy_from_user(bufs, arg, nr_args * sizeof(*bufs))) {
		free(bufs);
		return -EFAULT;
	}
	for (unsigned int i = 0; i < nr_args && !ret; i++)
		ret = buffer_validate(&bufs[i]);
	if (ret) {
		free(bufs);
		return ret;
	}
	nw_submit_lock(ring);
	ring->bufs = bufs;
	ring->nr_bufs = nr_args;
	nw_submit_unlock(ring);
	return 0;
}

int nw_rsrc_unregister_buffers(struct nw_ring *ring, void *arg,
			       unsigned int nr_args)
{
	struct iovec *bufs;

	if (arg || nr_args)
		return -EINVAL;
	nw_submit_lock(ring);
	bufs = ring->bufs;
	ring->bufs = NULL;
	ring->nr_bufs = 0;
	nw_submit_unlock(ring);
	if (!bufs)
		return -ENXIO;
	free(bufs);
	return 0;
}

int nw_rsrc_buffer_check(struct nw_ring *ring, unsigned int idx, uint64_t addr,
			 uint64_t len)
{
	const struct iovec *b;
	uint64_t base;

	if (!ring->bufs || idx >= ring->nr_bufs)
		return -EFAULT;
	b = &ring->bufs[idx];
	base = (uintptr_t)b->iov_base;
	if (addr < base || addr + len < addr || addr + len > base + b->iov_len)
		return -EFAULT;
	return 0;
}
