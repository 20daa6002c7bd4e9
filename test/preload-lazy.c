/* SPDX-License-Identifier: MIT */
/*
 * The preload in every process (an image's /etc/ld.so.preload or ENV
 * LD_PRELOAD): a process that never calls io_uring is left alone, no
 * kernel probe (no io_uring_setup at all, checked with strace where it
 * runs) and no line on stderr even with NOWAIT_LOG=1; the probe and the
 * line come with the first io_uring call (auto mode), through libc's
 * syscall() or an inline syscall instruction, which then work (the
 * kernel's io_uring, or the engine where the kernel's is blocked). An
 * image exec'd after that decision inherits the filter and the mode
 * (NOWAIT_MODE) and its inline calls work too: in kernel mode they pass
 * through the preload's trampoline. nowait-run warns when its target is
 * set-id (the loader ignores LD_PRELOAD for it).
 */
#include <limits.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "helpers.h"

#define CHILD_ENV "NOWAIT_TEST_LAZY_CHILD"

static char self[PATH_MAX], so[PATH_MAX + 32];

/* io_uring_setup by the syscall instruction itself, as liburing does. */
static long inline_setup(struct io_uring_params *p)
{
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long)__NR_io_uring_setup), "D"(4L), "S"(p)
			 : "rcx", "r11", "memory");
	return r;
}

/* This process's seccomp mode (/proc/self/status): 0 none, 2 filter. */
static int seccomp_mode(void)
{
	char line[256];
	int m = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 100;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &m) == 1)
			break;
	fclose(f);
	return m < 0 ? 101 : m;
}

static const char *probe_env; /* NOWAIT_PROBE for run(), or NULL */

static int child(const char *what)
{
	struct io_uring_params p;
	long fd;

	if (!strcmp(what, "idle"))
		return 0;
	if (!strcmp(what, "seccomp"))
		return seccomp_mode();
	memset(&p, 0, sizeof(p));
	fd = !strcmp(what, "libc") ? syscall(__NR_io_uring_setup, 4, &p)
				   : inline_setup(&p);
	if (fd < 0)
		return 3;
	close((int)fd);
	if (!strcmp(what, "libc-exec")) {
		/* Decided: the next image inherits the filter and the mode. */
		setenv(CHILD_ENV, "inline", 1);
		execl(self, self, (char *)NULL);
		return 4;
	}
	return 0;
}

/* Run self as what under the preload: its exit status, its stderr. */
static int run(const char *what, char *err, size_t len)
{
	int pfd[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	T_ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (pid == 0) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		setenv(CHILD_ENV, what, 1);
		setenv("NOWAIT_LOG", "1", 1);
		unsetenv("NOWAIT_MODE");
		if (probe_env)
			setenv("NOWAIT_PROBE", probe_env, 1);
		else
			unsetenv("NOWAIT_PROBE");
		setenv("LD_PRELOAD", so, 1);
		execl(self, self, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (got < (ssize_t)len - 1 &&
	       (n = read(pfd[0], err + got, len - 1 - (size_t)got)) > 0)
		got += n;
	err[got] = 0;
	close(pfd[0]);
	status = t_waitpid_timeout(pid, 20000);
	T_ASSERT(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static unsigned int count(const char *text, const char *word)
{
	unsigned int n = 0;

	for (const char *p = text; (p = strstr(p, word)); p++)
		n++;
	return n;
}

/*
 * NOWAIT_PROBE=load (what nowait-run sets): the probe at load, so where
 * the kernel's io_uring works no filter is installed (Seccomp: 0) and the
 * line is said at once; where it does not, the filter is there (2) and
 * the line waits for the first call. The lazy default installs it either
 * way.
 */
static void probe_at_load(void)
{
	struct io_uring_params p;
	char err[4096];
	long fd;
	bool works;

	memset(&p, 0, sizeof(p));
	fd = syscall(__NR_io_uring_setup, 4, &p); /* not preloaded here */
	works = fd >= 0;
	if (works)
		close((int)fd);
	probe_env = "load";
	T_ASSERT_EQ(run("seccomp", err, sizeof(err)), works ? 0 : 2);
	/* Said at load when the kernel is chosen, else at the first call. */
	T_ASSERT_EQ(count(err, "nowait:"), works ? 1 : 0);
	probe_env = NULL;
	T_ASSERT_EQ(run("seccomp", err, sizeof(err)), 2);
	T_ASSERT_EQ(count(err, "nowait:"), 0);
}

/* strace, if it can trace here: no io_uring_setup in an idle process. */
static void strace_idle(void)
{
	char out[] = "/tmp/nowait-lazy-XXXXXX", cmd[PATH_MAX * 2 + 200];
	char buf[4096];
	int fd = mkstemp(out), status;
	ssize_t n;

	T_ASSERT_GE(fd, 0);
	snprintf(cmd, sizeof(cmd),
		 "strace -f -qq -o %s -e trace=io_uring_setup env "
		 "LD_PRELOAD=%s %s=idle %s >/dev/null 2>&1",
		 out, so, CHILD_ENV, self);
	status = system(cmd);
	if (status != 0) {
		printf("no strace here (status %d): the log check stands\n",
		       status);
	} else {
		n = read(fd, buf, sizeof(buf) - 1);
		T_ASSERT_GE(n, 0);
		buf[n] = 0;
		T_ASSERT_EQ(count(buf, "io_uring_setup"), 0);
		/* It can fail: the same run that calls io_uring shows it. */
		snprintf(cmd, sizeof(cmd),
			 "strace -f -qq -o %s -e trace=io_uring_setup env "
			 "LD_PRELOAD=%s %s=libc %s >/dev/null 2>&1",
			 out, so, CHILD_ENV, self);
		T_ASSERT_EQ(system(cmd), 0);
		n = pread(fd, buf, sizeof(buf) - 1, 0);
		T_ASSERT_GT(n, 0);
		buf[n] = 0;
		T_ASSERT_GE(count(buf, "io_uring_setup"), 1);
	}
	close(fd);
	unlink(out);
}

/* nowait-run warns when its target is set-id, and only then. */
static void run_warns(void)
{
	char prog[] = "/tmp/nowait-setid-XXXXXX", cmd[PATH_MAX * 2 + 100];
	char run[PATH_MAX + 32], out[512];
	int fd = mkstemp(prog);
	FILE *f;
	size_t n;

	T_ASSERT_GE(fd, 0);
	close(fd);
	snprintf(run, sizeof(run), "%s", so);
	strcpy(strrchr(run, '/'), "/nowait-run");
	for (int setid = 0; setid < 2; setid++) {
		snprintf(cmd, sizeof(cmd),
			 "cp /bin/true %s && chmod %s %s && %s -- %s 2>&1",
			 prog, setid ? "4755" : "755", prog, run, prog);
		f = popen(cmd, "r");
		T_ASSERT(f != NULL);
		n = fread(out, 1, sizeof(out) - 1, f);
		out[n] = 0;
		T_ASSERT_EQ(pclose(f), 0);
		T_ASSERT_EQ(count(out, "is set-user-ID"), setid);
	}
	unlink(prog);
}

int main(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("skip: the preload library is tested in the plain build\n");
	return T_EXIT_SKIP;
#endif
	const char *what = getenv(CHILD_ENV);
	char err[4096], *slash;
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	T_ASSERT_GT(n, 0);
	self[n] = 0;
	if (what)
		return child(what);
	t_watchdog(50);
	snprintf(so, sizeof(so), "%s", self);
	slash = strrchr(so, '/');
	T_ASSERT(slash != NULL);
	strcpy(slash, "/../libnowait-preload.so");
	if (access(so, R_OK)) {
		printf("skip: no %s\n", so);
		return T_EXIT_SKIP;
	}
	/* Idle: nothing said (NOWAIT_LOG=1), nothing probed. */
	T_ASSERT_EQ(run("idle", err, sizeof(err)), 0);
	T_ASSERT_EQ(count(err, "nowait:"), 0);
	/* The first call decides, once, and says so; the calls work. */
	T_ASSERT_EQ(run("libc", err, sizeof(err)), 0);
	T_ASSERT_EQ(count(err, "nowait:"), 1);
	T_ASSERT_EQ(run("inline", err, sizeof(err)), 0);
	T_ASSERT_EQ(count(err, "nowait:"), 1);
	/* Decided, then exec'd: the inherited filter does not kill it. */
	T_ASSERT_EQ(run("libc-exec", err, sizeof(err)), 0);
	T_ASSERT_GE(count(err, "nowait:"), 1);
	strace_idle();
	probe_at_load();
	run_warns();
	return T_EXIT_PASS;
}
