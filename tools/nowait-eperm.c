/* SPDX-License-Identifier: MIT */
/*
 * nowait-eperm PROGRAM ARGS...: runs PROGRAM with io_uring blocked the way
 * Docker's and containerd's default seccomp profiles block it: the three
 * io_uring calls fail with EPERM. For tests of the fallback.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "uring-filter.h"

int main(int argc, char **argv)
{
	struct sock_filter f[] = NW_URING_FILTER(SECCOMP_RET_ERRNO | EPERM);
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};

	if (argc < 2) {
		fprintf(stderr, "usage: nowait-eperm PROGRAM [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		perror("nowait-eperm: seccomp");
		return 126;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
