/* SPDX-License-Identifier: MIT */
/*
 * The preload library's pipe spin (NOWAIT_PIPE_SPIN_US) is transparent:
 * the same checks run plainly, then in this program re-executed under
 * LD_PRELOAD=libnowait-preload.so with NOWAIT_PIPE_SPIN_US=5, =adaptive
 * and =50: reads that block until another thread writes, readv, EOF,
 * EPIPE with SIGPIPE ignored and with a handler, O_NONBLOCK pipes (EAGAIN
 * at once, also when set after the fd was seen blocking), regular files,
 * FIFOs, writes larger than the pipe drained by a reader, PIPE_BUF
 * atomicity between two writers, errno kept on success, bad fds.
 * The io_uring engine is not involved: both engine runs do the same.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

#define CHILD_ENV "NOWAIT_TEST_PIPESPIN_CHILD"

static volatile sig_atomic_t sigpipe_count;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipe_count++;
}

struct closer {
	pthread_t thread;
	int fd;
	unsigned int delay_us;
};

static void *closer_fn(void *arg)
{
	struct closer *c = arg;

	usleep(c->delay_us);
	close(c->fd);
	return NULL;
}

/* A read on an empty pipe blocks (and spins) until a thread writes. */
static void test_read_blocks(void)
{
	struct t_writer w;
	char buf[64];
	int p[2], i;

	T_ASSERT_EQ(pipe(p), 0);
	for (i = 0; i < 20; i++) {
		memset(buf, 0, sizeof(buf));
		t_writer_start(&w, p[1], "hello", 5, i & 1 ? 20000 : 0);
		T_ASSERT_EQ(read(p[0], buf, sizeof(buf)), 5);
		T_ASSERT_EQ(memcmp(buf, "hello", 5), 0);
		T_ASSERT_EQ(t_writer_join(&w), 5);
	}
	close(p[0]);
	close(p[1]);
}

static void test_readv_blocks(void)
{
	char a[3], b[8];
	struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
	struct t_writer w;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	t_writer_start(&w, p[1], "abcdefgh", 8, 10000);
	T_ASSERT_EQ(readv(p[0], iov, 2), 8);
	T_ASSERT_EQ(memcmp(a, "abc", 3), 0);
	T_ASSERT_EQ(memcmp(b, "defgh", 5), 0);
	T_ASSERT_EQ(t_writer_join(&w), 8);
	close(p[0]);
	close(p[1]);
}

/* EOF at once, and EOF while blocked. */
static void test_eof(void)
{
	struct closer c;
	char buf[8];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	close(p[1]);
	T_ASSERT_EQ(read(p[0], buf, sizeof(buf)), 0);
	close(p[0]);

	T_ASSERT_EQ(pipe(p), 0);
	c.fd = p[1];
	c.delay_us = 20000;
	T_ASSERT_EQ(pthread_create(&c.thread, NULL, closer_fn, &c), 0);
	T_ASSERT_EQ(read(p[0], buf, sizeof(buf)), 0);
	pthread_join(c.thread, NULL);
	close(p[0]);
}

/* EPIPE: SIGPIPE ignored, then with a handler (raised once per write). */
static void test_epipe(void)
{
	struct iovec iov = {(void *)"x", 1};
	int p[2];

	T_ASSERT(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
	T_ASSERT_EQ(pipe(p), 0);
	close(p[0]);
	errno = 0;
	T_ASSERT_EQ(write(p[1], "x", 1), -1);
	T_ASSERT_EQ(errno, EPIPE);
	errno = 0;
	T_ASSERT_EQ(writev(p[1], &iov, 1), -1);
	T_ASSERT_EQ(errno, EPIPE);

	T_ASSERT(signal(SIGPIPE, on_sigpipe) != SIG_ERR);
	sigpipe_count = 0;
	errno = 0;
	T_ASSERT_EQ(write(p[1], "x", 1), -1);
	T_ASSERT_EQ(errno, EPIPE);
	T_ASSERT_EQ(sigpipe_count, 1);
	close(p[1]);
	T_ASSERT(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
}

/* O_NONBLOCK pipes: EAGAIN at once, never a spin's worth of delay. */
static void test_nonblock(void)
{
	static char big[65536];
	uint64_t t0;
	ssize_t n;
	char buf[8];
	int p[2], i;

	T_ASSERT_EQ(pipe2(p, O_NONBLOCK), 0);
	t0 = t_now_us();
	for (i = 0; i < 100; i++) {
		errno = 0;
		T_ASSERT_EQ(read(p[0], buf, sizeof(buf)), -1);
		T_ASSERT_EQ(errno, EAGAIN);
	}
	/* 100 spins of >= 5 us would be >= 500 us; allow for a slow VM */
	T_ASSERT_LT(t_now_us() - t0, 100000);
	do {
		n = write(p[1], big, sizeof(big));
	} while (n > 0);
	T_ASSERT_EQ(n, -1);
	T_ASSERT_EQ(errno, EAGAIN);
	close(p[0]);
	close(p[1]);

	/* seen blocking first, then O_NONBLOCK set behind its back */
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(write(p[1], "ab", 2), 2);
	T_ASSERT_EQ(read(p[0], buf, sizeof(buf)), 2);
	T_ASSERT_EQ(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	for (i = 0; i < 3; i++) {
		errno = 0;
		T_ASSERT_EQ(read(p[0], buf, sizeof(buf)), -1);
		T_ASSERT_EQ(errno, EAGAIN);
	}
	close(p[0]);
	close(p[1]);
}

static void test_regular_file(void)
{
	char path[] = "/tmp/nowait-pipespin-XXXXXX", buf[16];
	int fd = mkstemp(path);

	T_ASSERT_GE(fd, 0);
	unlink(path);
	T_ASSERT_EQ(write(fd, "0123456789", 10), 10);
	T_ASSERT_EQ(lseek(fd, 2, SEEK_SET), 2);
	T_ASSERT_EQ(read(fd, buf, 4), 4);
	T_ASSERT_EQ(memcmp(buf, "2345", 4), 0);
	T_ASSERT_EQ(lseek(fd, 0, SEEK_CUR), 6);
	T_ASSERT_EQ(read(fd, buf, sizeof(buf)), 4);
	T_ASSERT_EQ(read(fd, buf, sizeof(buf)), 0);
	close(fd);
}

static void test_fifo(void)
{
	char path[64], buf[16];
	struct t_writer w;
	int fd;

	snprintf(path, sizeof(path), "/tmp/nowait-pipespin-fifo-%d",
		 (int)getpid());
	unlink(path);
	T_ASSERT_EQ(mkfifo(path, 0600), 0);
	fd = open(path, O_RDWR);
	T_ASSERT_GE(fd, 0);
	unlink(path);
	t_writer_start(&w, fd, "fifo!", 5, 20000);
	T_ASSERT_EQ(read(fd, buf, sizeof(buf)), 5);
	T_ASSERT_EQ(memcmp(buf, "fifo!", 5), 0);
	T_ASSERT_EQ(t_writer_join(&w), 5);
	t_writer_start(&w, fd, "again", 5, 0);
	T_ASSERT_EQ(read(fd, buf, sizeof(buf)), 5);
	T_ASSERT_EQ(t_writer_join(&w), 5);
	close(fd);
}

/* A reader that drains a pipe slowly and checks the byte pattern. */
struct drainer {
	pthread_t thread;
	int fd;
	size_t want, got;
	int bad;
};

static void *drainer_fn(void *arg)
{
	struct drainer *d = arg;
	unsigned char buf[3000];
	ssize_t n, i;

	while (d->got < d->want) {
		n = read(d->fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (i = 0; i < n; i++)
			if (buf[i] != (unsigned char)((d->got + i) % 251))
				d->bad = 1;
		d->got += (size_t)n;
		if ((d->got / sizeof(buf)) % 16 == 0)
			usleep(100);
	}
	return NULL;
}

static void test_large_write(void)
{
	size_t len = 1u << 20, i;
	unsigned char *buf = malloc(len);
	struct iovec iov[3];
	struct drainer d;
	int p[2];

	T_ASSERT(buf != NULL);
	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(i % 251);
	T_ASSERT_EQ(pipe(p), 0);

	memset(&d, 0, sizeof(d));
	d.fd = p[0];
	d.want = len;
	T_ASSERT_EQ(pthread_create(&d.thread, NULL, drainer_fn, &d), 0);
	T_ASSERT_EQ(write(p[1], buf, len), (ssize_t)len);
	pthread_join(d.thread, NULL);
	T_ASSERT_EQ(d.got, len);
	T_ASSERT_EQ(d.bad, 0);

	/* writev, split unevenly */
	memset(&d, 0, sizeof(d));
	d.fd = p[0];
	d.want = len;
	iov[0].iov_base = buf;
	iov[0].iov_len = 1;
	iov[1].iov_base = buf + 1;
	iov[1].iov_len = 300000;
	iov[2].iov_base = buf + 300001;
	iov[2].iov_len = len - 300001;
	T_ASSERT_EQ(pthread_create(&d.thread, NULL, drainer_fn, &d), 0);
	T_ASSERT_EQ(writev(p[1], iov, 3), (ssize_t)len);
	pthread_join(d.thread, NULL);
	T_ASSERT_EQ(d.got, len);
	T_ASSERT_EQ(d.bad, 0);
	close(p[0]);
	close(p[1]);
	free(buf);
}

/* Writes of PIPE_BUF bytes from two threads into a full pipe never mix. */
struct chunk_writer {
	pthread_t thread;
	int fd;
	unsigned char tag;
	int count, fails;
};

static void *chunk_writer_fn(void *arg)
{
	struct chunk_writer *c = arg;
	unsigned char buf[PIPE_BUF];
	int i;

	memset(buf, c->tag, sizeof(buf));
	for (i = 0; i < c->count; i++)
		if (write(c->fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			c->fails++;
	return NULL;
}

static void test_atomic_writes(void)
{
	struct chunk_writer a = {.tag = 'a', .count = 64};
	struct chunk_writer b = {.tag = 'b', .count = 64};
	unsigned char buf[PIPE_BUF];
	size_t got, i;
	ssize_t n;
	int p[2], k;

	T_ASSERT_EQ(pipe(p), 0);
	a.fd = b.fd = p[1];
	T_ASSERT_EQ(pthread_create(&a.thread, NULL, chunk_writer_fn, &a), 0);
	T_ASSERT_EQ(pthread_create(&b.thread, NULL, chunk_writer_fn, &b), 0);
	usleep(10000); /* let the pipe fill: the writers block */
	for (k = 0; k < a.count + b.count; k++) {
		for (got = 0; got < sizeof(buf); got += (size_t)n) {
			n = read(p[0], buf + got, sizeof(buf) - got);
			T_ASSERT_GT(n, 0);
		}
		for (i = 1; i < sizeof(buf); i++)
			T_ASSERT_EQ(buf[i], buf[0]);
	}
	pthread_join(a.thread, NULL);
	pthread_join(b.thread, NULL);
	T_ASSERT_EQ(a.fails + b.fails, 0);
	close(p[0]);
	close(p[1]);
}

/* errno is left alone on success; bad fds fail as plainly. */
static void test_errno(void)
{
	char buf[4];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(write(p[1], "ok", 2), 2);
	errno = 4321;
	T_ASSERT_EQ(read(p[0], buf, sizeof(buf)), 2);
	T_ASSERT_EQ(errno, 4321);
	errno = 0;
	T_ASSERT_EQ(read(-1, buf, 1), -1);
	T_ASSERT_EQ(errno, EBADF);
	close(p[0]);
	errno = 0;
	T_ASSERT_EQ(read(p[0], buf, 1), -1); /* closed: forgotten */
	T_ASSERT_EQ(errno, EBADF);
	/* a dup2 onto a cached number: the new file is what is read */
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(write(p[1], "zz", 2), 2);
	close(p[1]);
	T_ASSERT_EQ(read(p[0], buf, 1), 1);
	T_ASSERT_EQ(dup2(STDIN_FILENO, p[0]), p[0]);
	close(p[0]);
}

static void run_checks(void)
{
	test_read_blocks();
	test_readv_blocks();
	test_eof();
	test_epipe();
	test_nonblock();
	test_regular_file();
	test_fifo();
	test_large_write();
	test_atomic_writes();
	test_errno();
}

/* Is read() the preload's? (dladdr names the object that defines it.) */
static bool read_is_preloaded(void)
{
	void *sym = dlsym(RTLD_DEFAULT, "read");
	Dl_info info;

	return sym && dladdr(sym, &info) && info.dli_fname &&
	       strstr(info.dli_fname, "libnowait-preload.so");
}

static void run_preloaded(const char *so, const char *spin)
{
	const char *const env[] = {"NOWAIT_PIPE_SPIN_US",
				   spin,
				   "NOWAIT_MODE",
				   "kernel",
				   CHILD_ENV,
				   spin,
				   NULL};

	printf("preloaded run, NOWAIT_PIPE_SPIN_US=%s\n", spin);
	t_run_self(so, env, 20000);
}

int main(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* LD_PRELOAD of an instrumented library needs the sanitizer first. */
	printf("skip: the preload library is tested in the plain build\n");
	return T_EXIT_SKIP;
#endif
	static const char *const spins[] = {"5", "adaptive", "50"};
	char so[PATH_MAX + 32];
	const char *child = getenv(CHILD_ENV);
	size_t i;

	t_watchdog(50);
	if (child) {
		/* the preloaded run: make sure the spin is really in place */
		T_ASSERT(read_is_preloaded());
		run_checks();
		return T_EXIT_PASS;
	}
	run_checks(); /* plain */
	if (!t_preload_path(so, sizeof(so))) {
		printf("skip: no %s\n", so);
		return T_EXIT_SKIP;
	}
	for (i = 0; i < sizeof(spins) / sizeof(spins[0]); i++)
		run_preloaded(so, spins[i]);
	return T_EXIT_PASS;
}
