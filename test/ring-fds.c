/* SPDX-License-Identifier: MIT */
/*
 * Registered ring fds: IORING_REGISTER_RING_FDS / UNREGISTER_RING_FDS
 * (io_uring/tctx.c), IORING_ENTER_REGISTERED_RING and
 * IORING_REGISTER_USE_REGISTERED_RING, the table's limits and errors, and
 * its life: per thread, empty in a new thread and in a forked child,
 * dropped when its thread exits. Then liburing's io_uring_register_ring_fd
 * and its submits through the registered index, run as a program of its
 * own ("liburing"): under nowait-run --user for the user engine (liburing's
 * system calls reach the engine only through the preload), directly for
 * the kernel.
 */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "helpers.h"

#define REG_MAX 16U

static int rsrc_call(int fd, unsigned int op, unsigned int offset,
		     uint64_t data)
{
	struct io_uring_rsrc_update up = {.offset = offset, .data = data};

	return t_register(fd, op, &up, 1);
}

/* Register ring_fd through fd's register call: the slot, or -errno. */
static int reg_one(int fd, int ring_fd, unsigned int offset)
{
	struct io_uring_rsrc_update up = {.offset = offset,
					  .data = (uint64_t)ring_fd};
	int ret = t_register(fd, IORING_REGISTER_RING_FDS, &up, 1);

	if (ret < 0)
		return ret;
	T_ASSERT_EQ(ret, 1);
	T_ASSERT_EQ(up.data, ring_fd);
	T_ASSERT_EQ(up.resv, 0);
	return (int)up.offset;
}

static int unreg_one(int fd, unsigned int offset)
{
	return rsrc_call(fd, IORING_UNREGISTER_RING_FDS, offset, 0);
}

/* n NOPs on r, submitted and waited for through enter_fd with flags. */
static int nops_via(struct t_ring *r, int enter_fd, unsigned int flags,
		    unsigned int n)
{
	struct io_uring_cqe cqe;
	int ret;

	for (unsigned int i = 0; i < n; i++)
		t_prep_nop(t_get_sqe(r), 100 + i);
	ret = t_enter(enter_fd, t_ring_flush(r), n,
		      flags | IORING_ENTER_GETEVENTS, NULL, 0);
	if (ret < 0)
		return ret;
	T_ASSERT_EQ(ret, n);
	for (unsigned int i = 0; i < n; i++) {
		T_ASSERT_EQ(t_peek_cqe(r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, 100 + i);
		T_ASSERT_EQ(cqe.res, 0);
	}
	T_ASSERT_EQ(t_peek_cqe(r, &cqe), -EAGAIN);
	return ret;
}

static unsigned int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	T_ASSERT(d != NULL);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Register, enter and register through the index, unregister. */
static void test_basic(void)
{
	struct io_uring_rsrc_update up = {.offset = 0};
	unsigned int reg_flag = IORING_REGISTER_USE_REGISTERED_RING;
	struct t_ring r;
	int slot;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT(r.p.features & IORING_FEAT_REG_REG_RING);
	slot = reg_one(r.fd, r.fd, -1U);
	T_ASSERT_EQ(slot, 0); /* the first free slot of a fresh table */
	T_ASSERT_EQ(nops_via(&r, slot, IORING_ENTER_REGISTERED_RING, 4), 4);
	/* The fd path still works beside it. */
	T_ASSERT_EQ(nops_via(&r, r.fd, 0, 3), 3);
	/* The same ring in a chosen slot too. */
	T_ASSERT_EQ(reg_one(r.fd, r.fd, 7), 7);
	T_ASSERT_EQ(nops_via(&r, 7, IORING_ENTER_REGISTERED_RING, 2), 2);

	/* io_uring_register through the index reaches the ring's handler. */
	T_ASSERT_EQ(t_register(7, IORING_REGISTER_PROBE | reg_flag, NULL, 0),
		    -EINVAL); /* PROBE's own NULL check */
	up.offset = 7;
	T_ASSERT_EQ(
		t_register(7, IORING_UNREGISTER_RING_FDS | reg_flag, &up, 1),
		1);
	T_ASSERT_EQ(
		t_register(7, IORING_UNREGISTER_RING_FDS | reg_flag, &up, 1),
		-EBADF);
	T_ASSERT_EQ(t_enter(7, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		    -EBADF);
	/* An empty slot is no error for unregister. */
	T_ASSERT_EQ(unreg_one(r.fd, 7), 1);

	/* The ring outlives its fd while a slot holds it. */
	close(r.fd);
	T_ASSERT_EQ(nops_via(&r, slot, IORING_ENTER_REGISTERED_RING, 5), 5);
	up.offset = (unsigned int)slot;
	T_ASSERT_EQ(
		t_register(slot, IORING_UNREGISTER_RING_FDS | reg_flag, &up, 1),
		1);
	T_ASSERT_EQ(t_enter(slot, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		    -EBADF);
	r.fd = -1;
	t_ring_unmap(&r);
}

/* A slot may hold any ring, not only the one whose register call it is. */
static void test_other_ring(void)
{
	struct t_ring a, b;

	T_ASSERT_EQ(t_ring_init(&a, 4, NULL), 0);
	T_ASSERT_EQ(t_ring_init(&b, 4, NULL), 0);
	T_ASSERT_EQ(reg_one(a.fd, b.fd, 5), 5);
	T_ASSERT_EQ(nops_via(&b, 5, IORING_ENTER_REGISTERED_RING, 3), 3);
	T_ASSERT_EQ(t_cq_ready(&a), 0);
	T_ASSERT_EQ(unreg_one(b.fd, 5), 1);
	t_ring_exit(&a);
	t_ring_exit(&b);
}

/* An SQPOLL ring and a DEFER_TASKRUN ring through their indexes. */
static void test_ring_kinds(void)
{
	struct io_uring_params p;
	struct t_ring sq, dt;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	p.sq_thread_idle = 10;
	T_ASSERT_EQ(t_ring_init(&sq, 8, &p), 0);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	T_ASSERT_EQ(t_ring_init(&dt, 8, &p), 0);
	T_ASSERT_EQ(reg_one(sq.fd, sq.fd, 2), 2);
	T_ASSERT_EQ(reg_one(sq.fd, dt.fd, 3), 3);
	T_ASSERT_EQ(
		nops_via(&sq, 2,
			 IORING_ENTER_REGISTERED_RING | IORING_ENTER_SQ_WAKEUP,
			 4),
		4);
	T_ASSERT_EQ(nops_via(&dt, 3, IORING_ENTER_REGISTERED_RING, 4), 4);
	T_ASSERT_EQ(unreg_one(dt.fd, 2), 1);
	T_ASSERT_EQ(unreg_one(dt.fd, 3), 1);
	t_ring_exit(&sq);
	t_ring_exit(&dt);
}

/* RING_FDS's checks, entry by entry, and what it returns. */
static void test_register_errors(void)
{
	struct io_uring_rsrc_update ups[REG_MAX + 1];
	struct io_uring_rsrc_update *ro;
	struct t_ring r;
	int p[2], i, closed;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	T_ASSERT_EQ(pipe(p), 0);
	closed = dup(p[0]);
	T_ASSERT_GE(closed, 0);
	close(closed);
	memset(ups, 0, sizeof(ups));
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RING_FDS, ups, 0),
		    -EINVAL);
	T_ASSERT_EQ(
		t_register(r.fd, IORING_REGISTER_RING_FDS, ups, REG_MAX + 1),
		-EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RING_FDS, (void *)8, 1),
		    -EFAULT);
	T_ASSERT_EQ(reg_one(r.fd, r.fd, REG_MAX), -EINVAL);
	T_ASSERT_EQ(reg_one(r.fd, p[0], -1U), -EOPNOTSUPP);
	T_ASSERT_EQ(reg_one(r.fd, closed, -1U), -EBADF);
	T_ASSERT_EQ(reg_one(r.fd, -1, -1U), -EBADF);
	ups[0] = (struct io_uring_rsrc_update){
		.offset = -1U, .resv = 1, .data = (uint64_t)r.fd};
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RING_FDS, ups, 1),
		    -EINVAL);

	/* A slot taken is -EBUSY; the entries before an error count. */
	T_ASSERT_EQ(reg_one(r.fd, r.fd, 3), 3);
	T_ASSERT_EQ(reg_one(r.fd, r.fd, 3), -EBUSY);
	ups[0] = (struct io_uring_rsrc_update){.offset = 4,
					       .data = (uint64_t)r.fd};
	ups[1] = (struct io_uring_rsrc_update){.offset = 3,
					       .data = (uint64_t)r.fd};
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RING_FDS, ups, 2), 1);
	T_ASSERT_EQ(ups[0].offset, 4);
	T_ASSERT_EQ(nops_via(&r, 4, IORING_ENTER_REGISTERED_RING, 1), 1);

	/* The offset cannot be written back: the slot is given back. */
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(ro != MAP_FAILED);
	ro->offset = 9;
	ro->data = (uint64_t)r.fd;
	T_ASSERT_EQ(mprotect(ro, 4096, PROT_READ), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RING_FDS, ro, 1), -EFAULT);
	T_ASSERT_EQ(t_enter(9, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		    -EBADF);
	munmap(ro, 4096);

	/* Fill the table with -1U (any slot): 14 are free, then -EBUSY. */
	for (i = 0; i < (int)REG_MAX; i++)
		ups[i] = (struct io_uring_rsrc_update){.offset = -1U,
						       .data = (uint64_t)r.fd};
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RING_FDS, ups, REG_MAX),
		    REG_MAX - 2);
	T_ASSERT_EQ(ups[0].offset, 0);
	T_ASSERT_EQ(ups[3].offset, 5); /* 3 and 4 were taken */
	T_ASSERT_EQ(ups[REG_MAX - 3].offset, REG_MAX - 1);
	T_ASSERT_EQ(reg_one(r.fd, r.fd, -1U), -EBUSY);

	/* Unregister: its checks, then all sixteen at once. */
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_RING_FDS, ups, 0),
		    -EINVAL);
	T_ASSERT_EQ(
		t_register(r.fd, IORING_UNREGISTER_RING_FDS, ups, REG_MAX + 1),
		-EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_RING_FDS, (void *)8, 1),
		    -EFAULT);
	T_ASSERT_EQ(rsrc_call(r.fd, IORING_UNREGISTER_RING_FDS, 0, 1),
		    -EINVAL); /* data must be 0 */
	T_ASSERT_EQ(unreg_one(r.fd, REG_MAX), -EINVAL);
	ups[0] = (struct io_uring_rsrc_update){.offset = 0, .resv = 1};
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_RING_FDS, ups, 1),
		    -EINVAL);
	for (i = 0; i < (int)REG_MAX; i++)
		ups[i] = (struct io_uring_rsrc_update){.offset = (unsigned)i};
	ups[2].data = 1; /* stops there */
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_RING_FDS, ups, REG_MAX),
		    2);
	T_ASSERT_EQ(t_enter(1, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		    -EBADF);
	T_ASSERT_EQ(t_enter(2, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0), 0);
	ups[2].data = 0;
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_RING_FDS, ups, REG_MAX),
		    REG_MAX);
	for (i = 0; i < (int)REG_MAX; i++)
		T_ASSERT_EQ(
			t_enter(i, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
			-EBADF);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

/* A bad index: -EINVAL out of range, -EBADF for an empty slot. */
static void test_bad_index(void)
{
	unsigned int reg_flag = IORING_REGISTER_USE_REGISTERED_RING;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	T_ASSERT_EQ(
		t_enter(REG_MAX, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		-EINVAL);
	T_ASSERT_EQ(t_enter(-2, 1, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		    -EINVAL);
	T_ASSERT_EQ(t_enter(0, 1, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		    -EBADF);
	/* A real ring fd number is no index. */
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		    r.fd < (int)REG_MAX ? -EBADF : -EINVAL);
	T_ASSERT_EQ(
		t_register(REG_MAX, IORING_REGISTER_PROBE | reg_flag, NULL, 0),
		-EINVAL);
	T_ASSERT_EQ(t_register(3, IORING_REGISTER_PROBE | reg_flag, NULL, 0),
		    -EBADF);
	T_ASSERT_EQ(t_register(3, 0x7fffffffU | reg_flag, NULL, 0), -EINVAL);
	t_ring_exit(&r);
}

struct thread_arg {
	int ring_fd;
	struct t_ring *ring;
	unsigned int fds_before, fds_after;
};

/* A new thread: no table of its own until it uses io_uring. */
static void *thread_fn(void *p)
{
	struct thread_arg *a = p;
	struct io_uring_rsrc_update up = {.offset = 0};

	/* No io_uring use yet: not even an empty table (-EINVAL). */
	T_ASSERT_EQ(t_enter(0, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		    -EINVAL);
	T_ASSERT_EQ(t_register(a->ring_fd, IORING_UNREGISTER_RING_FDS, &up, 1),
		    0);
	/* A submit makes it an io_uring task: now the slot is empty. */
	T_ASSERT_EQ(nops_via(a->ring, a->ring_fd, 0, 1), 1);
	T_ASSERT_EQ(t_enter(0, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0),
		    -EBADF);
	T_ASSERT_EQ(t_register(a->ring_fd, IORING_UNREGISTER_RING_FDS, &up, 1),
		    1);
	/* Its own table: slot 0 is free here though the creator holds it. */
	a->fds_before = count_fds();
	T_ASSERT_EQ(reg_one(a->ring_fd, a->ring_fd, -1U), 0);
	T_ASSERT_EQ(reg_one(a->ring_fd, a->ring_fd, -1U), 1);
	T_ASSERT_EQ(nops_via(a->ring, 1, IORING_ENTER_REGISTERED_RING, 2), 2);
	return NULL; /* exits holding two slots */
}

static void test_threads(void)
{
	struct thread_arg a;
	struct t_ring r;
	pthread_t th;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(reg_one(r.fd, r.fd, 0), 0);
	a.ring_fd = r.fd;
	a.ring = &r;
	T_ASSERT_EQ(pthread_create(&th, NULL, thread_fn, &a), 0);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	/* Its slots went with it; the creator's slot 0 is still there. */
	T_ASSERT_EQ(count_fds(), a.fds_before);
	T_ASSERT_EQ(nops_via(&r, 0, IORING_ENTER_REGISTERED_RING, 2), 2);
	T_ASSERT_EQ(unreg_one(r.fd, 0), 1);
	t_ring_exit(&r);
}

/* A forked child is a new task: no table, and no fds held for one. */
static void test_fork(void)
{
	unsigned int before;
	struct t_ring r;
	int status;
	pid_t pid;

	T_ASSERT_EQ(t_ring_init(&r, 4, NULL), 0);
	before = count_fds();
	T_ASSERT_EQ(reg_one(r.fd, r.fd, 0), 0);
	T_ASSERT_EQ(reg_one(r.fd, r.fd, 1), 1);
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (t_enter(0, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0) !=
		    -EINVAL)
			_exit(2);
		_exit(count_fds() == before ? 0 : 3);
	}
	status = t_waitpid_timeout(pid, 10000);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), 0);
	/* The parent's table is untouched. */
	T_ASSERT_EQ(nops_via(&r, 1, IORING_ENTER_REGISTERED_RING, 1), 1);
	T_ASSERT_EQ(unreg_one(r.fd, 0), 1);
	T_ASSERT_EQ(unreg_one(r.fd, 1), 1);
	t_ring_exit(&r);
}

/*
 * REGISTERED_FD_ONLY: without NO_MMAP -EINVAL (6.5's rule); with it, setup
 * returns an index into this thread's registered rings, and a NOP goes
 * through it with IORING_ENTER_REGISTERED_RING, the rings in our memory.
 */
static void test_fd_only(void)
{
	size_t len = 1 << 16;
	char *rings = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *sqes = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned int *tail, *ctail;
	int idx;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_REGISTERED_FD_ONLY;
	T_ASSERT_EQ(t_setup(4, &p), -EINVAL);
	T_ASSERT(rings != MAP_FAILED && sqes != MAP_FAILED);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_REGISTERED_FD_ONLY | IORING_SETUP_NO_MMAP |
		  IORING_SETUP_NO_SQARRAY;
	NW_OFF_USER_ADDR(p.cq_off) = (uintptr_t)rings;
	NW_OFF_USER_ADDR(p.sq_off) = (uintptr_t)sqes;
	idx = t_setup(4, &p);
	T_ASSERT_GE(idx, 0);
	T_ASSERT_LT(idx, 16);
	sqe = (struct io_uring_sqe *)sqes;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_NOP;
	sqe->user_data = 0x5eed;
	tail = (unsigned int *)(rings + p.sq_off.tail);
	__atomic_store_n(tail, 1, __ATOMIC_RELEASE);
	T_ASSERT_EQ(
		t_enter(idx, 1, 1,
			IORING_ENTER_GETEVENTS | IORING_ENTER_REGISTERED_RING,
			NULL, 0),
		1);
	ctail = (unsigned int *)(rings + p.cq_off.tail);
	T_ASSERT_EQ(__atomic_load_n(ctail, __ATOMIC_ACQUIRE), 1);
	cqe = (struct io_uring_cqe *)(rings + p.cq_off.cqes);
	T_ASSERT_EQ(cqe->user_data, 0x5eed);
	T_ASSERT_EQ(cqe->res, 0);
	/* A plain fd of that number is not the ring (none was made). */
	T_ASSERT_NE(t_enter(idx, 0, 0, 0, NULL, 0), 0);
	munmap(rings, len);
	munmap(sqes, len);
}

#ifdef HAVE_LIBURING
#include <liburing.h>

/* The liburing program: register the ring fd, submit through it. */
static void *liburing_thread(void *p)
{
	struct io_uring *ring = p;

	/* The index is the creator's: this thread has no table (-EINVAL). */
	io_uring_prep_nop(io_uring_get_sqe(ring));
	T_ASSERT_EQ(io_uring_submit(ring), -EINVAL);
	return NULL;
}

static int liburing_main(void)
{
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	char buf[8] = {0};
	pthread_t th;
	int p[2], i;

	T_ASSERT_EQ(io_uring_queue_init(8, &ring, 0), 0);
	T_ASSERT_EQ(io_uring_register_ring_fd(&ring), 1);
	T_ASSERT_EQ(ring.enter_ring_fd, 0);
	for (i = 0; i < 4; i++)
		io_uring_prep_nop(io_uring_get_sqe(&ring));
	T_ASSERT_EQ(io_uring_submit_and_wait(&ring, 4), 4);
	io_uring_cq_advance(&ring, 4);

	/* A read that parks, completed by a later write. */
	T_ASSERT_EQ(pipe(p), 0);
	io_uring_prep_read(io_uring_get_sqe(&ring), p[0], buf, 5, 0);
	T_ASSERT_EQ(io_uring_submit(&ring), 1);
	T_ASSERT_EQ(write(p[1], "hello", 5), 5);
	T_ASSERT_EQ(io_uring_wait_cqe(&ring, &cqe), 0);
	T_ASSERT_EQ(cqe->res, 5);
	T_ASSERT(!memcmp(buf, "hello", 5));
	io_uring_cqe_seen(&ring, cqe);

	T_ASSERT_EQ(pthread_create(&th, NULL, liburing_thread, &ring), 0);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	/* The thread's NOP is still in the SQ: submitted from here. */
	T_ASSERT_EQ(io_uring_submit_and_wait(&ring, 1), 1);
	io_uring_cq_advance(&ring, 1);

	T_ASSERT_EQ(io_uring_unregister_ring_fd(&ring), 1);
	T_ASSERT_EQ(ring.enter_ring_fd, ring.ring_fd);
	io_uring_prep_nop(io_uring_get_sqe(&ring));
	T_ASSERT_EQ(io_uring_submit_and_wait(&ring, 1), 1);
	io_uring_cq_advance(&ring, 1);
	/* Registered again, and left for queue_exit to unregister. */
	T_ASSERT_EQ(io_uring_register_ring_fd(&ring), 1);
	io_uring_queue_exit(&ring);
	close(p[0]);
	close(p[1]);
	return T_EXIT_PASS;
}

/* Run this program's liburing part, on the engine under test. */
static void test_liburing(const char *self)
{
	char run[PATH_MAX], dir[PATH_MAX];
	int status;
	pid_t pid;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* LD_PRELOAD of an instrumented library needs the sanitizer first. */
	if (t_engine() == T_ENGINE_USER) {
		printf("liburing part skipped: the preload is not "
		       "instrumented\n");
		return;
	}
#endif
	snprintf(dir, sizeof(dir), "%s", self);
	snprintf(run, sizeof(run), "%s/../nowait-run", dirname(dir));
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (t_engine() == T_ENGINE_USER)
			execl(run, run, "--user", "--", self, "liburing",
			      (char *)NULL);
		else
			execl(self, self, "liburing", (char *)NULL);
		_exit(127);
	}
	status = t_waitpid_timeout(pid, 20000);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_EQ(WEXITSTATUS(status), 0);
}
#endif

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	ssize_t n;

#ifdef HAVE_LIBURING
	if (argc > 1 && !strcmp(argv[1], "liburing"))
		return liburing_main();
#endif
	t_require_engine();
	t_watchdog(60);
	test_basic();
	test_other_ring();
	test_ring_kinds();
	test_register_errors();
	test_bad_index();
	test_threads();
	test_fork();
	test_fd_only();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	T_ASSERT_GT(n, 0);
	self[n] = '\0';
#ifdef HAVE_LIBURING
	test_liburing(self);
#else
	printf("liburing part skipped: built without liburing\n");
#endif
	return T_EXIT_PASS;
}
