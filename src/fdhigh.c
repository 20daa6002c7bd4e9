/* SPDX-License-Identifier: MIT */
/*
 * Where the engine's fds live. The kernel's io_uring gives the program one
 * fd, the ring's; everything else it keeps is a file reference with no
 * number. Here the epoll sets, eventfds, timerfds, registered-file copies
 * and the like are fds of the process, and left at the lowest free number
 * they would shift every number the program gets afterwards, and a program
 * that closes an fd twice (a bug the kernel forgives) could close one of
 * ours in between. So each is moved to the lowest free number at or above
 * half the RLIMIT_NOFILE soft limit (at most 65536), with FD_CLOEXEC. The
 * base is read once; a limit too low for a high range (or lowered since)
 * leaves the fd where it is. A program that closes or dup2()s over fds it
 * did not open (say close_range(3, ~0U)) closes ours too, as it would a
 * library's.
 *
 * The ring fd itself is the program's: setup returns the lowest free fd,
 * as the kernel does.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
#include "fdhigh.h"

#define NW_FD_HIGH_MAX 65536

/* The first number of the engine's range; 0 when there is none. */
static int high_base(void)
{
	static int base = -1;
	int b = __atomic_load_n(&base, __ATOMIC_RELAXED);
	struct rlimit rl;

	if (b >= 0)
		return b;
	b = 0;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur / 2 > 3)
		b = rl.rlim_cur / 2 > NW_FD_HIGH_MAX ? NW_FD_HIGH_MAX
						     : (int)(rl.rlim_cur / 2);
	__atomic_store_n(&base, b, __ATOMIC_RELAXED);
	return b;
}

int nw_fd_hide(int fd)
{
	int b, nfd, err;

	if (fd < 0)
		return fd;
	b = high_base();
	if (!b || fd >= b)
		return fd;
	err = errno;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, b);
	if (nfd < 0) {
		errno = err;
		return fd;
	}
	close(fd);
	return nfd;
}

int nw_fd_dup_high(int fd)
{
	int b = high_base(), nfd = -1;

	if (b)
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, b);
	if (nfd < 0)
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	return nfd < 0 ? -errno : nfd;
}
