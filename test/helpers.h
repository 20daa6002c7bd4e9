/* SPDX-License-Identifier: MIT */
/*
 * Test helpers: the t_ protocol of every test program.
 *
 * Tests are differential by construction: t_setup/t_enter/t_register go to
 * nowait, or to the kernel's io_uring when NOWAIT_TEST_ENGINE=kernel. The
 * runner runs each test program once per engine and expects the same
 * verdict; a kernel run where io_uring is unavailable skips.
 */
#ifndef NW_TEST_HELPERS_H
#define NW_TEST_HELPERS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/types.h>
#include <linux/io_uring.h>
#include "nowait-abi.h"
#include "rawring.h"

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

/* Built under ThreadSanitizer, which defers signal handlers. */
#if defined(__SANITIZE_THREAD__)
#define T_TSAN 1
#else
#define T_TSAN 0
#endif

/* Assertions print both operands and the location, then abort. */
#define T_ASSERT_OP(a, op, b)                                                 \
	do {                                                                  \
		long long _a = (long long)(a), _b = (long long)(b);           \
		if (!(_a op _b)) {                                            \
			fprintf(stderr,                                       \
				"%s:%d: [%s] %s %s %s (%lld vs %lld)\n",      \
				__FILE__, __LINE__, t_engine_name(), #a, #op, \
				#b, _a, _b);                                  \
			abort();                                              \
		}                                                             \
	} while (0)
#define T_ASSERT_EQ(a, b) T_ASSERT_OP(a, ==, b)
#define T_ASSERT_NE(a, b) T_ASSERT_OP(a, !=, b)
#define T_ASSERT_LT(a, b) T_ASSERT_OP(a, <, b)
#define T_ASSERT_LE(a, b) T_ASSERT_OP(a, <=, b)
#define T_ASSERT_GT(a, b) T_ASSERT_OP(a, >, b)
#define T_ASSERT_GE(a, b) T_ASSERT_OP(a, >=, b)
#define T_ASSERT(c)	  T_ASSERT_OP(!!(c), ==, 1)

enum t_engine { T_ENGINE_USER, T_ENGINE_KERNEL };

/* The engine this run tests (from NOWAIT_TEST_ENGINE, default user). */
enum t_engine t_engine(void);
const char *t_engine_name(void);
/* Exit with T_EXIT_SKIP when the selected engine is not available here. */
void t_require_engine(void);
/* Fail (exit 1, with a message) if the test runs longer than seconds. */
void t_watchdog(unsigned int seconds);

/* The three calls, routed to the selected engine; -errno on failure. */
int t_setup(unsigned int entries, struct io_uring_params *p);
int t_enter(int fd, unsigned int to_submit, unsigned int min_complete,
	    unsigned int flags, const void *arg, size_t argsz);
int t_register(int fd, unsigned int opcode, void *arg, unsigned int nr_args);

/*
 * The raw ring (struct t_ring, t_ring_map, t_ring_exit) is rawring.h's.
 * Set up (on the selected engine) and map a ring; returns 0 or -errno
 * (setup's error).
 */
int t_ring_init(struct t_ring *r, unsigned int entries,
		struct io_uring_params *p);
/* Next free SQE, zeroed, or NULL when the SQ is full. */
struct io_uring_sqe *t_get_sqe(struct t_ring *r);
/* Fill an SQE as io_uring_prep_nop would, with user_data. */
void t_prep_nop(struct io_uring_sqe *sqe, uint64_t user_data);
/* Publish the local SQ tail; returns how many SQEs are pending. */
unsigned int t_ring_flush(struct t_ring *r);
/* Publish and enter with to_submit = pending; returns enter's result. */
int t_submit(struct t_ring *r);
int t_submit_and_wait(struct t_ring *r, unsigned int want);
/* Take the next CQE into *out without blocking: 0, or -EAGAIN when empty. */
int t_peek_cqe(struct t_ring *r, struct io_uring_cqe *out);
/* Wait (GETEVENTS, min_complete 1) for one CQE and take it: 0 or -errno. */
int t_wait_cqe(struct t_ring *r, struct io_uring_cqe *out);
/* Number of CQEs the ring holds. */
unsigned int t_cq_ready(struct t_ring *r);

/*
 * Submit what is queued, wait for one CQE, check that it is user_data's and
 * return its res (for tests that run one request at a time).
 */
int t_run(struct t_ring *r, uint64_t user_data);

/* Fill an SQE for READ, WRITE, READV or WRITEV (addr/len as the op takes). */
void t_prep_rw(struct io_uring_sqe *sqe, int opcode, int fd, const void *addr,
	       unsigned int len, uint64_t off, uint64_t user_data);
/* The next SQE (asserted there) filled by t_prep_rw. */
struct io_uring_sqe *t_queue_rw(struct t_ring *r, int opcode, int fd,
				const void *addr, unsigned int len,
				uint64_t off, uint64_t user_data);
/* POLL_ADD on fd for the poll32 events mask, len = flags (MULTI, LEVEL). */
void t_prep_poll_add(struct io_uring_sqe *sqe, int fd, unsigned int events,
		     unsigned int flags, uint64_t user_data);
/* POLL_REMOVE of the request whose user_data is target. */
void t_prep_poll_remove(struct io_uring_sqe *sqe, uint64_t target,
			uint64_t user_data);
/* Wait at most ms for one CQE (EXT_ARG timeout): 0, -ETIME or -errno. */
int t_wait_cqe_timeout(struct t_ring *r, struct io_uring_cqe *out,
		       unsigned int ms);
/* Wait for one CQE, check its user_data and res; returns its flags. */
#define t_expect_cqe(r, user_data, res) \
	t_expect_cqe_at(r, user_data, res, __FILE__, __LINE__)
unsigned int t_expect_cqe_at(struct t_ring *r, uint64_t user_data, int res,
			     const char *file, int line);
/*
 * A read of an empty pipe parks: submit what is queued (one read, of
 * user_data ud, into buf), expect no CQE within ms, write data (a string)
 * to the pipe's write end wfd, then expect ud's CQE with data's length
 * and buf holding it.
 */
#define t_expect_read_parked(r, ud, wfd, data, buf, ms) \
	t_expect_read_parked_at(r, ud, wfd, data, buf, ms, __FILE__, __LINE__)
void t_expect_read_parked_at(struct t_ring *r, uint64_t ud, int wfd,
			     const char *data, const void *buf, unsigned int ms,
			     const char *file, int line);
/* Assert that no CQE arrives within ms. */
#define t_expect_no_cqe(r, ms) t_expect_no_cqe_at(r, ms, __FILE__, __LINE__)
void t_expect_no_cqe_at(struct t_ring *r, unsigned int ms, const char *file,
			int line);
/* IORING_REGISTER_FILES2 of nr slots (fds may be NULL with SPARSE). */
int t_reg_files2(struct t_ring *r, unsigned int nr, const int *fds,
		 const uint64_t *tags, unsigned int flags);
/* A register op taking struct io_uring_rsrc_update2 (FILES_UPDATE2...). */
int t_rsrc_update2(struct t_ring *r, unsigned int op, unsigned int off,
		   unsigned int nr, const void *data, const uint64_t *tags);

/* A connected TCP pair over 127.0.0.1: s[0] client, s[1] accepted. */
void t_tcp_pair(int s[2]);
/* A TCP listener on 127.0.0.1 (an ephemeral port); *addr gets its address. */
struct sockaddr_in;
int t_tcp_listener(struct sockaddr_in *addr, int backlog);
/* A blocking TCP socket connected to addr. */
int t_tcp_connect(const struct sockaddr_in *addr);
/*
 * Read the file at path (a /proc file) into buf, NUL-terminated, at most
 * size - 1 bytes: the bytes read (> 0), or -1 (no such file, or empty).
 */
ssize_t t_read_text(const char *path, char *buf, size_t size);
/* Monotonic time in microseconds. */
uint64_t t_now_us(void);

/* A thread that writes buf to fd after delay_us (delayed or racing peer). */
struct t_writer {
	pthread_t thread;
	int fd;
	const void *buf;
	size_t len;
	unsigned int delay_us;
	ssize_t ret; /* write's result, or -errno */
};
void t_writer_start(struct t_writer *w, int fd, const void *buf, size_t len,
		    unsigned int delay_us);
ssize_t t_writer_join(struct t_writer *w);

/*
 * Wait at most ms for the child pid; on timeout kill it (SIGKILL), reap it
 * and return -ETIME. Otherwise return the wait status.
 */
int t_waitpid_timeout(pid_t pid, unsigned int ms);

/*
 * The preload library beside the test programs (build/libnowait-preload.so)
 * into buf: false when it is not there.
 */
bool t_preload_path(char *buf, size_t len);
/* Is fd a ring of nowait's engine (its memfd's name), not the kernel's? */
bool t_fd_is_nowait_ring(int fd);
/* Is a ring set up here nowait's (the check of a preloaded run)? */
bool t_ring_is_nowait(void);
/*
 * Run this program again with LD_PRELOAD=so and the environment env (name,
 * value pairs, NULL-terminated); wait at most ms for it and assert that it
 * exited 0 (what failed is printed with what).
 */
void t_run_self(const char *so, const char *const *env, unsigned int ms);
/*
 * The usual preloaded rerun: this program again under the preload, its
 * io_uring calls trapped into the engine (NOWAIT_MODE=user,
 * NOWAIT_TEST_ENGINE=kernel) and child_env set to 1; skipped, and said,
 * under the sanitizers (an instrumented preload needs its runtime first)
 * and when the preload is not built.
 */
void t_rerun_preloaded(const char *child_env, unsigned int ms);
/*
 * A test's main after its watchdog: checks() on the engine under test,
 * then, on the user engine, once more in a child under the preload
 * (t_rerun_preloaded, 40 s), where the child first asserts that its ring
 * really is nowait's. Returns the exit status.
 */
int t_run_also_preloaded(const char *child_env, void (*checks)(void));

/* IORING_(UN)REGISTER_PBUF_RING on ring fd: flags go in the reg's pad. */
int t_pbuf_ring_reg(int fd, uint16_t bgid, unsigned int entries,
		    unsigned int flags, uint64_t addr);
int t_pbuf_ring_unreg(int fd, uint16_t bgid, unsigned int flags);
/* Add a buffer at the tail of a provided-buffer ring of entries (2^n). */
void t_buf_ring_publish(struct io_uring_buf_ring *br, unsigned int entries,
			void *addr, uint32_t len, uint16_t bid);
/* A READ of fd with a buffer from group bgid: its CQE's flags (res: want). */
unsigned int t_read_select(struct t_ring *r, int fd, uint16_t bgid, int want);

#endif
