/* SPDX-License-Identifier: MIT */
/*
 * nowait-run [--user | --kernel | --auto] [--log] -- PROGRAM ARGS...
 * Runs PROGRAM with libnowait-preload.so (from this binary's directory)
 * preloaded, so its io_uring calls run on nowait where the kernel's
 * io_uring is blocked (auto, the default), or always (--user).
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(void)
{
	fprintf(stderr, "usage: nowait-run [--user | --kernel | --auto] "
			"[--log] -- PROGRAM [ARGS...]\n");
	exit(2);
}

/* LD_PRELOAD=<dir of this binary>/libnowait-preload.so[:existing]. */
static void set_preload(const char *argv0)
{
	char self[PATH_MAX], lib[PATH_MAX + 32], *old, *val;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		snprintf(self, sizeof(self), "%s", argv0);
		n = (ssize_t)strlen(self);
	}
	self[n] = '\0';
	snprintf(lib, sizeof(lib), "%s/libnowait-preload.so", dirname(self));
	if (access(lib, R_OK)) {
		fprintf(stderr, "nowait-run: %s: not found\n", lib);
		exit(127);
	}
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		val = malloc(strlen(lib) + strlen(old) + 2);
		if (!val)
			exit(127);
		sprintf(val, "%s:%s", lib, old);
	} else {
		val = lib;
	}
	setenv("LD_PRELOAD", val, 1);
}

int main(int argc, char **argv)
{
	const char *mode = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--user"))
			mode = "user";
		else if (!strcmp(argv[i], "--kernel"))
			mode = "kernel";
		else if (!strcmp(argv[i], "--auto"))
			mode = "auto";
		else if (!strcmp(argv[i], "--log"))
			setenv("NOWAIT_LOG", "1", 1);
		else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (argv[i][0] == '-')
			usage();
		else
			break;
	}
	if (i >= argc)
		usage();
	if (mode)
		setenv("NOWAIT_MODE", mode, 1);
	set_preload(argv[0]);
	execvp(argv[i], argv + i);
	perror(argv[i]);
	return 127;
}
