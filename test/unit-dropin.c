/* SPDX-License-Identifier: MIT */
/*
 * The drop-in route: an unmodified liburing program (this test, run with
 * "child") and fio fail under nowait-eperm, which blocks io_uring the way
 * container profiles do, and work under nowait-run --auto inside it, which
 * says that it fell back. Also --user, and a program that forks and execs.
 */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

#ifdef HAVE_LIBURING
#include <liburing.h>

static char bindir[PATH_MAX / 2];

/* The liburing program: NOPs, then a pipe read that parks. */
static int child(void)
{
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	char buf[8] = {0};
	int p[2], ret, i;

	ret = io_uring_queue_init(8, &ring, 0);
	if (ret) {
		fprintf(stderr, "queue_init: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < 4; i++)
		io_uring_prep_nop(io_uring_get_sqe(&ring));
	if (io_uring_submit_and_wait(&ring, 4) != 4)
		return 1;
	io_uring_cq_advance(&ring, 4);
	if (pipe(p))
		return 1;
	io_uring_prep_read(io_uring_get_sqe(&ring), p[0], buf, 5, 0);
	if (io_uring_submit(&ring) != 1 || write(p[1], "hello", 5) != 5)
		return 1;
	if (io_uring_wait_cqe(&ring, &cqe) || cqe->res != 5 ||
	    memcmp(buf, "hello", 5))
		return 1;
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	return 0;
}

/* Run argv with stderr captured into err; returns the exit status. */
static int run(char *const argv[], char *err, size_t errsz)
{
	int pfd[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	T_ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (pid == 0) {
		dup2(pfd[1], 2);
		dup2(open("/dev/null", O_WRONLY), 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], err + got, errsz - 1 - got)) > 0)
		got += n;
	err[got] = '\0';
	close(pfd[0]);
	T_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void path(char *out, const char *name)
{
	snprintf(out, PATH_MAX, "%s/%s", bindir, name);
}

static void test_liburing(const char *self)
{
	char eperm[PATH_MAX], run_[PATH_MAX], err[4096];
	char *blocked[] = {eperm, (char *)self, "child", NULL};
	char *fallback[] = {eperm,	  run_,	   "--auto", "--",
			    (char *)self, "child", NULL};
	char *user[] = {run_, "--user", "--", (char *)self, "child", NULL};

	path(eperm, "nowait-eperm");
	path(run_, "nowait-run");
	T_ASSERT_EQ(run(blocked, err, sizeof(err)), 1);
	T_ASSERT(strstr(err, "Operation not permitted") != NULL);
	T_ASSERT_EQ(run(fallback, err, sizeof(err)), 0);
	T_ASSERT(strstr(err, "nowait: user-space engine") != NULL);
	T_ASSERT_EQ(run(user, err, sizeof(err)), 0);
}

/* A parent that forks and execs the liburing program, all under --user. */
static void test_fork_exec(const char *self)
{
	char run_[PATH_MAX], err[4096];
	char *argv[] = {run_, "--user", "--", (char *)self, "forker", NULL};

	path(run_, "nowait-run");
	T_ASSERT_EQ(run(argv, err, sizeof(err)), 0);
}

static int forker(const char *self)
{
	char *argv[] = {(char *)self, "child", NULL};
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execv(self, argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status) || child();
}

static void test_fio(void)
{
	char eperm[PATH_MAX], run_[PATH_MAX], err[4096];
	char *common[] = {"--name=dropin",
			  "--ioengine=io_uring",
			  "--filename=/tmp/nowait-dropin-fio.dat",
			  "--size=4M",
			  "--rw=randwrite",
			  "--verify=crc32c",
			  "--iodepth=16",
			  "--verify_state_save=0"};
	char *blocked[20] = {eperm, "/usr/bin/fio"};
	char *fallback[20] = {eperm, run_, "--auto", "--", "/usr/bin/fio"};
	unsigned int i;

	if (access("/usr/bin/fio", X_OK)) {
		printf("fio not installed: fio cases skipped\n");
		return;
	}
	path(eperm, "nowait-eperm");
	path(run_, "nowait-run");
	for (i = 0; i < sizeof(common) / sizeof(common[0]); i++) {
		blocked[2 + i] = common[i];
		fallback[5 + i] = common[i];
	}
	T_ASSERT_NE(run(blocked, err, sizeof(err)), 0);
	T_ASSERT_EQ(run(fallback, err, sizeof(err)), 0);
	T_ASSERT(strstr(err, "nowait: user-space engine") != NULL);
	unlink("/tmp/nowait-dropin-fio.dat");
}

int main(int argc, char **argv)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* LD_PRELOAD of an instrumented library needs the sanitizer first. */
	printf("skip: the preload library is tested in the plain build\n");
	return T_EXIT_SKIP;
#endif
	char self[PATH_MAX];
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	T_ASSERT_GT(n, 0);
	self[n] = '\0';
	if (argc > 1 && !strcmp(argv[1], "forker"))
		return forker(self);
	snprintf(bindir, sizeof(bindir), "%s/..", dirname(strdup(self)));
	t_watchdog(120);
	test_liburing(self);
	test_fork_exec(self);
	test_fio();
	return T_EXIT_PASS;
}
#else
int main(void)
{
	printf("skip: built without liburing\n");
	return T_EXIT_SKIP;
}
#endif
