/* SPDX-License-Identifier: MIT */
/*
 * nowait-run [--user | --kernel | --auto] [--log] -- PROGRAM ARGS...
 * Runs PROGRAM with libnowait-preload.so preloaded, so its io_uring calls
 * run on nowait where the kernel's io_uring is blocked (auto, the
 * default), or always (--user). The preload is the one beside this binary
 * (a build tree), else the installed one (NOWAIT_PRELOADDIR, set at build
 * time from the Makefile's PRELOADDIR: $(LIBDIR)/nowait). A set-id
 * PROGRAM, or one with file capabilities, gets a warning: the loader
 * ignores LD_PRELOAD for it.
 */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include "nowait.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

static const char usage_text[] =
	"usage: nowait-run [--user | --kernel | --auto] [--log] [--]"
	" PROGRAM [ARGS...]\n"
	"Run PROGRAM with its io_uring calls on nowait, io_uring in user "
	"space.\n"
	"  --auto     the kernel's io_uring when it works, else nowait "
	"(default)\n"
	"  --user     always nowait's engine\n"
	"  --kernel   always the kernel's io_uring (the preload stays loaded)\n"
	"  --log      say on stderr which engine runs, and why (NOWAIT_LOG=1)\n"
	"  --trace[=FILE|OPS]  a line per request as it completes, on stderr\n"
	"             or in FILE (a name with a / or a .); OPS: read,recv,...\n"
	"             keeps those opcodes only (NOWAIT_TRACE, "
	"NOWAIT_TRACE_OPS)\n"
	"  --stats[=json]  per-ring request statistics at exit and on "
	"SIGUSR2,\n"
	"             on stderr (NOWAIT_STATS; NOWAIT_STATS_FILE)\n"
	"  --help     this text; --version: the version\n"
	"Environment: NOWAIT_MODE, NOWAIT_LOG, NOWAIT_TRACE, NOWAIT_SPIN_US,"
	" NOWAIT_PIPE_SPIN_US; see nowait(7).\n";

/*
 * --trace=X: a file when X has a / or a . in it (truncated now, then
 * appended to by every process of the program), stderr for "-", else a
 * list of opcodes traced on stderr.
 */
static void set_trace(const char *x)
{
	int fd;

	if (!x || !*x || !strcmp(x, "-")) {
		setenv("NOWAIT_TRACE", "stderr", 1);
		return;
	}
	if (!strchr(x, '/') && !strchr(x, '.')) {
		setenv("NOWAIT_TRACE", "stderr", 1);
		setenv("NOWAIT_TRACE_OPS", x, 1);
		return;
	}
	fd = open(x, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(x);
		exit(127);
	}
	close(fd);
	setenv("NOWAIT_TRACE", x, 1);
}

static void usage(int status)
{
	fputs(usage_text, status ? stderr : stdout);
	exit(status);
}

#ifndef NOWAIT_PRELOADDIR
#define NOWAIT_PRELOADDIR "/usr/local/lib/nowait"
#endif
#define PRELOAD_NAME "libnowait-preload.so"

/* The preload beside this binary, else the installed one, in lib. */
static void find_preload(const char *argv0, char *lib, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		snprintf(self, sizeof(self), "%s", argv0);
		n = (ssize_t)strlen(self);
	}
	self[n] = '\0';
	snprintf(lib, size, "%s/" PRELOAD_NAME, dirname(self));
	if (!access(lib, R_OK))
		return;
	snprintf(lib, size, "%s/" PRELOAD_NAME, NOWAIT_PRELOADDIR);
	if (!access(lib, R_OK))
		return;
	fprintf(stderr,
		"nowait-run: " PRELOAD_NAME " not found beside %s nor in %s\n",
		self, NOWAIT_PRELOADDIR);
	exit(127);
}

/* LD_PRELOAD=<the preload>[:existing]. */
static void set_preload(const char *argv0)
{
	char lib[PATH_MAX + 32], *old, *val;

	find_preload(argv0, lib, sizeof(lib));
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

/* PROGRAM's file as execvp finds it (PATH), into path: false if none. */
static bool find_program(const char *prog, char *path, size_t len)
{
	const char *dirs = getenv("PATH"), *end;

	if (strchr(prog, '/')) {
		snprintf(path, len, "%s", prog);
		return access(path, X_OK) == 0;
	}
	for (dirs = dirs ? dirs : "/usr/local/bin:/usr/bin:/bin"; *dirs;
	     dirs = *end ? end + 1 : end) {
		end = strchrnul(dirs, ':');
		snprintf(path, len, "%.*s/%s", (int)(end - dirs), dirs, prog);
		if (access(path, X_OK) == 0)
			return true;
	}
	return false;
}

/*
 * The loader ignores LD_PRELOAD paths for a set-id program or one with
 * file capabilities (secure-execution mode), and the preload's
 * no_new_privs would drop its privileges anyway: say so, do not fail.
 */
static void warn_setid(const char *prog)
{
	char path[PATH_MAX];
	struct stat st;

	if (!find_program(prog, path, sizeof(path)) || stat(path, &st))
		return;
	if (st.st_mode & (S_ISUID | S_ISGID))
		fprintf(stderr,
			"nowait-run: warning: %s is set-%s-ID: the loader "
			"ignores LD_PRELOAD for it, so its io_uring calls go "
			"to the kernel (see README: system-wide use)\n",
			path, (st.st_mode & S_ISUID) ? "user" : "group");
	else if (getxattr(path, "security.capability", NULL, 0) > 0)
		fprintf(stderr,
			"nowait-run: warning: %s has file capabilities: the "
			"loader ignores LD_PRELOAD for it, so its io_uring "
			"calls go to the kernel (see README: system-wide "
			"use)\n",
			path);
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
		else if (!strcmp(argv[i], "--trace"))
			set_trace(NULL);
		else if (!strncmp(argv[i], "--trace=", 8))
			set_trace(argv[i] + 8);
		else if (!strcmp(argv[i], "--stats"))
			setenv("NOWAIT_STATS", "table", 1);
		else if (!strcmp(argv[i], "--stats=json"))
			setenv("NOWAIT_STATS", "json", 1);
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			usage(0);
		else if (!strcmp(argv[i], "--version")) {
			printf("nowait-run %s.%s.%s\n",
			       STR(NOWAIT_VERSION_MAJOR),
			       STR(NOWAIT_VERSION_MINOR),
			       STR(NOWAIT_VERSION_PATCH));
			return 0;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (argv[i][0] == '-')
			usage(2);
		else
			break;
	}
	if (i >= argc)
		usage(2);
	if (mode)
		setenv("NOWAIT_MODE", mode, 1);
	/* One program, run on purpose: decide at load (nowait(7)). */
	setenv("NOWAIT_PROBE", "load", 0);
	set_preload(argv[0]);
	warn_setid(argv[i]);
	execvp(argv[i], argv + i);
	perror(argv[i]);
	return 127;
}
