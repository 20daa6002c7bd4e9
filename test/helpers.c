/* SPDX-License-Identifier: MIT */
/*
 * Test helpers: engine selection, the three calls routed to nowait or to the
 * kernel, and a minimal raw ring (SQ index array, store-release of the tails
 * and heads we own) on the ring rawring.c maps, independent of liburing.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

/*
 * The engine's CQ writes reach us through another mapping of the same
 * memory, which ThreadSanitizer cannot pair with our acquire of the tail;
 * the engine releases a tag (src/internal.h) that we acquire here.
 */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
extern char nw_tsan_ring_tag;
#define T_TSAN_ACQUIRE() __tsan_acquire(&nw_tsan_ring_tag)
/* The SQ direction alike: the SQPOLL poller acquires what we release. */
#define T_TSAN_RELEASE() __tsan_release(&nw_tsan_ring_tag)
#else
#define T_TSAN_ACQUIRE() \
	do {             \
	} while (0)
#define T_TSAN_RELEASE() \
	do {             \
	} while (0)
#endif

/* Bounded number of empty GETEVENTS returns t_wait_cqe tolerates. */
#define T_WAIT_MAX_EMPTY 100000

enum t_engine t_engine(void)
{
	static int cached = -1;
	const char *e;

	if (cached >= 0)
		return cached;
	e = getenv("NOWAIT_TEST_ENGINE");
	if (!e || !*e || !strcmp(e, "user")) {
		cached = T_ENGINE_USER;
	} else if (!strcmp(e, "kernel")) {
		cached = T_ENGINE_KERNEL;
	} else {
		fprintf(stderr,
			"NOWAIT_TEST_ENGINE=%s: expected user or kernel\n", e);
		exit(T_EXIT_FAIL);
	}
	return cached;
}

const char *t_engine_name(void)
{
	return t_engine() == T_ENGINE_KERNEL ? "kernel" : "user";
}

/* The value of kernel.io_uring_disabled, or 0 when the sysctl is absent. */
static int t_io_uring_disabled(void)
{
	FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
	int v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

void t_require_engine(void)
{
	struct io_uring_params p;
	int fd;

	if (t_engine() != T_ENGINE_KERNEL)
		return;
	if (t_io_uring_disabled() == 2) {
		printf("skip: kernel.io_uring_disabled=2\n");
		exit(T_EXIT_SKIP);
	}
	memset(&p, 0, sizeof(p));
	fd = syscall(__NR_io_uring_setup, 1, &p);
	if (fd < 0) {
		if (errno == ENOSYS || errno == EPERM) {
			printf("skip: kernel io_uring_setup: %s\n",
			       strerror(errno));
			exit(T_EXIT_SKIP);
		}
		fprintf(stderr, "kernel io_uring_setup(1): %s\n",
			strerror(errno));
		exit(T_EXIT_FAIL);
	}
	close(fd);
}

static void t_watchdog_fire(int sig)
{
	static const char msg[] = "watchdog: the test took too long "
				  "(a wait that should return did not)\n";
	ssize_t ret = write(STDERR_FILENO, msg, sizeof(msg) - 1);

	(void)ret;
	(void)sig;
	_exit(T_EXIT_FAIL);
}

void t_watchdog(unsigned int seconds)
{
	signal(SIGALRM, t_watchdog_fire);
	alarm(seconds);
}

/* The selected engine's calls (rawring.h). */
static const struct t_calls *t_calls(void)
{
	return t_engine() == T_ENGINE_KERNEL ? &t_calls_kernel : &t_calls_user;
}

int t_setup(unsigned int entries, struct io_uring_params *p)
{
	return t_calls()->setup(entries, p);
}

int t_enter(int fd, unsigned int to_submit, unsigned int min_complete,
	    unsigned int flags, const void *arg, size_t argsz)
{
	return t_calls()->enter(fd, to_submit, min_complete, flags, arg, argsz);
}

int t_register(int fd, unsigned int opcode, void *arg, unsigned int nr_args)
{
	return t_calls()->reg(fd, opcode, arg, nr_args);
}

int t_ring_init(struct t_ring *r, unsigned int entries,
		struct io_uring_params *p)
{
	struct io_uring_params local;
	int fd, ret;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (!p) {
		memset(&local, 0, sizeof(local));
		p = &local;
	}
	fd = t_setup(entries, p);
	if (fd < 0)
		return fd;
	ret = t_ring_map(r, fd, p);
	if (ret)
		close(fd);
	return ret;
}

struct io_uring_sqe *t_get_sqe(struct t_ring *r)
{
	unsigned int head = __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
	struct io_uring_sqe *sqe;
	size_t sz = sizeof(*sqe) << t_sqe_shift(r);

	if (r->sqe_tail - head >= r->p.sq_entries)
		return NULL;
	sqe = &r->sqes[(r->sqe_tail & (r->p.sq_entries - 1)) << t_sqe_shift(r)];
	memset(sqe, 0, sz);
	r->sqe_tail++;
	return sqe;
}

void t_prep_nop(struct io_uring_sqe *sqe, uint64_t user_data)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_NOP;
	sqe->fd = -1;
	sqe->user_data = user_data;
}

unsigned int t_ring_flush(struct t_ring *r)
{
	unsigned int mask = r->p.sq_entries - 1;
	unsigned int tail = __atomic_load_n(r->sq_tail, __ATOMIC_RELAXED);

	/* Identity index array: slot i of the ring names SQE i. */
	for (; r->sq_array && tail != r->sqe_tail; tail++)
		r->sq_array[tail & mask] = tail & mask;
	T_TSAN_RELEASE();
	__atomic_store_n(r->sq_tail, r->sqe_tail, __ATOMIC_RELEASE);
	return r->sqe_tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
}

int t_submit(struct t_ring *r)
{
	return t_enter(r->fd, t_ring_flush(r), 0, 0, NULL, 0);
}

int t_submit_and_wait(struct t_ring *r, unsigned int want)
{
	unsigned int pending = t_ring_flush(r);

	return t_enter(r->fd, pending, want, want ? IORING_ENTER_GETEVENTS : 0,
		       NULL, 0);
}

int t_peek_cqe(struct t_ring *r, struct io_uring_cqe *out)
{
	unsigned int head = __atomic_load_n(r->cq_head, __ATOMIC_RELAXED);
	unsigned int tail = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
	unsigned int idx;

	T_TSAN_ACQUIRE();
	if (head == tail)
		return -EAGAIN;
	idx = (head & (r->p.cq_entries - 1)) << t_cqe_shift(r);
	*out = r->cqes[idx];
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return 0;
}

int t_wait_cqe(struct t_ring *r, struct io_uring_cqe *out)
{
	int i, ret;

	for (i = 0; i < T_WAIT_MAX_EMPTY; i++) {
		if (!t_peek_cqe(r, out))
			return 0;
		ret = t_enter(r->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0);
		if (ret < 0)
			return ret;
	}
	return -ETIME;
}

unsigned int t_cq_ready(struct t_ring *r)
{
	T_TSAN_ACQUIRE();
	return __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(r->cq_head, __ATOMIC_RELAXED);
}

void t_prep_rw(struct io_uring_sqe *sqe, int opcode, int fd, const void *addr,
	       unsigned int len, uint64_t off, uint64_t user_data)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = opcode;
	sqe->fd = fd;
	sqe->addr = (uint64_t)(uintptr_t)addr;
	sqe->len = len;
	sqe->off = off;
	sqe->user_data = user_data;
}

void t_prep_poll_add(struct io_uring_sqe *sqe, int fd, unsigned int events,
		     unsigned int flags, uint64_t user_data)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_POLL_ADD;
	sqe->fd = fd;
	sqe->poll32_events = events;
	sqe->len = flags;
	sqe->user_data = user_data;
}

void t_prep_poll_remove(struct io_uring_sqe *sqe, uint64_t target,
			uint64_t user_data)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_POLL_REMOVE;
	sqe->fd = -1;
	sqe->addr = target;
	sqe->user_data = user_data;
}

int t_wait_cqe_timeout(struct t_ring *r, struct io_uring_cqe *out,
		       unsigned int ms)
{
	struct __kernel_timespec ts;
	struct io_uring_getevents_arg arg;
	uint64_t deadline = t_now_us() + (uint64_t)ms * 1000, now;
	int ret;

	for (;;) {
		if (!t_peek_cqe(r, out))
			return 0;
		now = t_now_us();
		if (now >= deadline)
			return -ETIME;
		ts.tv_sec = (deadline - now) / 1000000;
		ts.tv_nsec = ((deadline - now) % 1000000) * 1000;
		memset(&arg, 0, sizeof(arg));
		arg.ts = (uint64_t)(uintptr_t)&ts;
		ret = t_enter(r->fd, 0, 1,
			      IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
			      &arg, sizeof(arg));
		if (ret < 0 && ret != -ETIME && ret != -EINTR)
			return ret;
	}
}

unsigned int t_expect_cqe_at(struct t_ring *r, uint64_t user_data, int res,
			     const char *file, int line)
{
	struct io_uring_cqe cqe;
	int ret = t_wait_cqe(r, &cqe);

	if (ret) {
		fprintf(stderr, "%s:%d: [%s] waiting for CQE %llu: %d\n", file,
			line, t_engine_name(), (unsigned long long)user_data,
			ret);
		abort();
	}
	if (cqe.user_data != user_data || cqe.res != res) {
		fprintf(stderr,
			"%s:%d: [%s] expected CQE user_data %llu res %d, "
			"got user_data %llu res %d flags 0x%x\n",
			file, line, t_engine_name(),
			(unsigned long long)user_data, res,
			(unsigned long long)cqe.user_data, cqe.res, cqe.flags);
		abort();
	}
	return cqe.flags;
}

void t_expect_no_cqe_at(struct t_ring *r, unsigned int ms, const char *file,
			int line)
{
	struct io_uring_cqe cqe;
	int ret = t_wait_cqe_timeout(r, &cqe, ms);

	if (ret == -ETIME)
		return;
	if (ret == 0)
		fprintf(stderr,
			"%s:%d: [%s] expected no CQE within %u ms, got "
			"user_data %llu res %d flags 0x%x\n",
			file, line, t_engine_name(), ms,
			(unsigned long long)cqe.user_data, cqe.res, cqe.flags);
	else
		fprintf(stderr, "%s:%d: [%s] waiting for no CQE: %d\n", file,
			line, t_engine_name(), ret);
	abort();
}

void t_expect_read_parked_at(struct t_ring *r, uint64_t ud, int wfd,
			     const char *data, const void *buf, unsigned int ms,
			     const char *file, int line)
{
	int n = (int)strlen(data), ret = t_submit(r);

	if (ret != 1) {
		fprintf(stderr, "%s:%d: [%s] submit of the read: %d\n", file,
			line, t_engine_name(), ret);
		abort();
	}
	t_expect_no_cqe_at(r, ms, file, line);
	if (write(wfd, data, (size_t)n) != n) {
		fprintf(stderr, "%s:%d: [%s] write to the pipe: %s\n", file,
			line, t_engine_name(), strerror(errno));
		abort();
	}
	t_expect_cqe_at(r, ud, n, file, line);
	if (memcmp(buf, data, (size_t)n)) {
		fprintf(stderr, "%s:%d: [%s] the read's data is not \"%s\"\n",
			file, line, t_engine_name(), data);
		abort();
	}
}

ssize_t t_read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

struct io_uring_sqe *t_queue_rw(struct t_ring *r, int opcode, int fd,
				const void *addr, unsigned int len,
				uint64_t off, uint64_t user_data)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, opcode, fd, addr, len, off, user_data);
	return sqe;
}

uint64_t t_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void *t_writer_fn(void *arg)
{
	struct t_writer *w = arg;

	if (w->delay_us)
		usleep(w->delay_us);
	w->ret = write(w->fd, w->buf, w->len);
	if (w->ret < 0)
		w->ret = -errno;
	return NULL;
}

void t_writer_start(struct t_writer *w, int fd, const void *buf, size_t len,
		    unsigned int delay_us)
{
	w->fd = fd;
	w->buf = buf;
	w->len = len;
	w->delay_us = delay_us;
	w->ret = 0;
	T_ASSERT_EQ(pthread_create(&w->thread, NULL, t_writer_fn, w), 0);
}

ssize_t t_writer_join(struct t_writer *w)
{
	T_ASSERT_EQ(pthread_join(w->thread, NULL), 0);
	return w->ret;
}

int t_waitpid_timeout(pid_t pid, unsigned int ms)
{
	uint64_t deadline = t_now_us() + (uint64_t)ms * 1000;
	int status;
	pid_t ret;

	for (;;) {
		ret = waitpid(pid, &status, WNOHANG);
		if (ret == pid)
			return status;
		if (ret < 0)
			return -errno;
		if (t_now_us() >= deadline)
			break;
		usleep(1000);
	}
	fprintf(stderr, "[%s] child %d did not exit within %u ms: killed\n",
		t_engine_name(), (int)pid, ms);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -ETIME;
}

int t_run(struct t_ring *r, uint64_t user_data)
{
	struct io_uring_cqe cqe;

	T_ASSERT_EQ(t_submit_and_wait(r, 1), 1);
	T_ASSERT_EQ(t_wait_cqe(r, &cqe), 0);
	T_ASSERT_EQ(cqe.user_data, user_data);
	return cqe.res;
}

int t_tcp_listener(struct sockaddr_in *addr, int backlog)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	T_ASSERT_GE(fd, 0);
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_ASSERT_EQ(bind(fd, (struct sockaddr *)addr, sizeof(*addr)), 0);
	T_ASSERT_EQ(listen(fd, backlog), 0);
	T_ASSERT_EQ(getsockname(fd, (struct sockaddr *)addr, &len), 0);
	return fd;
}

int t_tcp_connect(const struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(connect(fd, (const struct sockaddr *)addr, sizeof(*addr)),
		    0);
	return fd;
}

void t_tcp_pair(int s[2])
{
	struct sockaddr_in addr;
	int lfd = t_tcp_listener(&addr, 1), one = 1;

	s[0] = t_tcp_connect(&addr);
	s[1] = accept(lfd, NULL, NULL);
	T_ASSERT_GE(s[1], 0);
	setsockopt(s[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(s[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	close(lfd);
}

int t_reg_files2(struct t_ring *r, unsigned int nr, const int *fds,
		 const uint64_t *tags, unsigned int flags)
{
	struct io_uring_rsrc_register rr;

	memset(&rr, 0, sizeof(rr));
	rr.nr = nr;
	rr.flags = flags;
	rr.data = (uintptr_t)fds;
	rr.tags = (uintptr_t)tags;
	return t_register(r->fd, IORING_REGISTER_FILES2, &rr, sizeof(rr));
}

int t_rsrc_update2(struct t_ring *r, unsigned int op, unsigned int off,
		   unsigned int nr, const void *data, const uint64_t *tags)
{
	struct io_uring_rsrc_update2 up;

	memset(&up, 0, sizeof(up));
	up.offset = off;
	up.nr = nr;
	up.data = (uintptr_t)data;
	up.tags = (uintptr_t)tags;
	return t_register(r->fd, op, &up, sizeof(up));
}

bool t_preload_path(char *buf, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	T_ASSERT_GT(n, 0);
	exe[n] = 0;
	slash = strrchr(exe, '/');
	T_ASSERT(slash != NULL);
	*slash = 0;
	snprintf(buf, len, "%s/../libnowait-preload.so", exe);
	return access(buf, R_OK) == 0;
}

bool t_fd_is_nowait_ring(int fd)
{
	char path[64], target[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = 0;
	return strstr(target, "memfd:nowait-ring:") != NULL;
}

bool t_ring_is_nowait(void)
{
	struct t_ring r;
	bool yes;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	yes = t_fd_is_nowait_ring(r.fd);
	t_ring_exit(&r);
	return yes;
}

void t_run_self(const char *so, const char *const *env, unsigned int ms)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int status;
	pid_t pid;

	T_ASSERT_GT(n, 0);
	self[n] = 0;
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (pid == 0) {
		setenv("LD_PRELOAD", so, 1);
		for (; env[0] && env[1]; env += 2)
			setenv(env[0], env[1], 1);
		execl(self, self, (char *)NULL);
		_exit(127);
	}
	status = t_waitpid_timeout(pid, ms);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "%s under %s failed (status %#x)\n", self, so,
			status);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), 0);
}

void t_rerun_preloaded(const char *child_env, unsigned int ms)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	(void)child_env;
	(void)ms;
	printf("preload part skipped: tested in the plain build\n");
#else
	const char *const env[] = {
		"NOWAIT_MODE", "user",	  "NOWAIT_TEST_ENGINE",
		"kernel",      child_env, "1",
		NULL};
	char so[PATH_MAX + 32];

	if (!t_preload_path(so, sizeof(so))) {
		printf("preload part skipped: no %s\n", so);
		return;
	}
	t_run_self(so, env, ms);
#endif
}

int t_run_also_preloaded(const char *child_env, void (*checks)(void))
{
	if (getenv(child_env)) {
		T_ASSERT(t_ring_is_nowait()); /* really the preload's engine */
		checks();
		return T_EXIT_PASS;
	}
	t_require_engine();
	checks();
	if (t_engine() == T_ENGINE_USER)
		t_rerun_preloaded(child_env, 40000);
	return T_EXIT_PASS;
}

int t_pbuf_ring_reg(int fd, uint16_t bgid, unsigned int entries,
		    unsigned int flags, uint64_t addr)
{
	struct io_uring_buf_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = addr;
	reg.ring_entries = entries;
	reg.bgid = bgid;
	reg.pad = (uint16_t)flags;
	return t_register(fd, IORING_REGISTER_PBUF_RING, &reg, 1);
}

int t_pbuf_ring_unreg(int fd, uint16_t bgid, unsigned int flags)
{
	struct io_uring_buf_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.bgid = bgid;
	reg.pad = (uint16_t)flags;
	return t_register(fd, IORING_UNREGISTER_PBUF_RING, &reg, 1);
}

void t_buf_ring_publish(struct io_uring_buf_ring *br, unsigned int entries,
			void *addr, uint32_t len, uint16_t bid)
{
	uint16_t tail = br->tail;
	struct io_uring_buf *e = &br->bufs[tail & (entries - 1)];

	e->addr = (uintptr_t)addr;
	e->len = len;
	e->bid = bid;
	__atomic_store_n(&br->tail, (uint16_t)(tail + 1), __ATOMIC_RELEASE);
}

unsigned int t_read_select(struct t_ring *r, int fd, uint16_t bgid, int want)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_rw(sqe, IORING_OP_READ, fd, NULL, 0, 0, 0x77);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	T_ASSERT_EQ(t_submit_and_wait(r, 1), 1);
	return t_expect_cqe(r, 0x77, want);
}
