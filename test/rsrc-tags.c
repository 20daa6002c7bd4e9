/* SPDX-License-Identifier: MIT */
/*
 * Resource tags and references, against the kernel:
 * - the tag CQE of a slot that an operation empties or replaces (CLOSE of
 *   a slot, IORING_OP_FILES_UPDATE, OPENAT/SOCKET/ACCEPT into an occupied
 *   slot) comes before the operation's own CQE, inline, in a worker
 *   (IOSQE_ASYNC), in a link, and on a DEFER_TASKRUN ring at submit;
 * - register-side updates post theirs before the call returns;
 * - SPLICE_F_FD_IN_FIXED keeps its input slot's file while it waits: a
 *   slot emptied meanwhile still feeds the splice, and its tag comes after;
 * - registered buffers: an unmapped page, a read-only mapping and a
 *   writable shared mapping of a disk file are -EFAULT; anonymous, shared
 *   anonymous and memfd memory are fine;
 * - multishot ACCEPT: nothing for it after its final CQE, whatever the
 *   timing of a cancel.
 */
#include <fcntl.h>
#include <grp.h>
#include <arpa/inet.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

#define ACCEPT_MSHOT (1U << 0)

static char path_a[64];

static struct io_uring_sqe *sqe_of(struct t_ring *r, int op, int fd,
				   uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	sqe->opcode = (uint8_t)op;
	sqe->fd = fd;
	sqe->user_data = ud;
	return sqe;
}

/* Put fd into slot (register side) with tag. */
static void set_slot(struct t_ring *r, unsigned int slot, int fd, uint64_t tag)
{
	T_ASSERT_EQ(t_rsrc_update2(r, IORING_REGISTER_FILES_UPDATE2, slot, 1,
				   &fd, &tag),
		    1);
}

/* The next CQEs, in this order: ud[i] with res[i]. */
static void expect_seq(struct t_ring *r, const uint64_t *ud, const int *res,
		       int n)
{
	struct io_uring_cqe cqe;

	for (int i = 0; i < n; i++) {
		T_ASSERT_EQ(t_wait_cqe_timeout(r, &cqe, 2000), 0);
		if (cqe.user_data != ud[i])
			fprintf(stderr, "[%s] CQE %d: ud %llu res %d\n",
				t_engine_name(), i,
				(unsigned long long)cqe.user_data, cqe.res);
		T_ASSERT_EQ(cqe.user_data, ud[i]);
		T_ASSERT_EQ(cqe.res, res[i]);
	}
}

/*
 * Operations that empty or replace a tagged slot: the tag first. With
 * async, each goes through a worker (IOSQE_ASYNC).
 */
static void ops_before(unsigned int setup_flags, bool async)
{
	struct io_uring_params p = {.flags = setup_flags};
	uint8_t fl = async ? IOSQE_ASYNC : 0;
	struct io_uring_sqe *sqe;
	struct sockaddr_in addr;
	struct t_ring r;
	int pfd[2], lfd, c, fd;

	T_ASSERT_EQ(pipe(pfd), 0);
	T_ASSERT_EQ(t_ring_init(&r, 16, &p), 0);
	T_ASSERT_EQ(
		t_reg_files2(&r, 4, NULL, NULL, IORING_RSRC_REGISTER_SPARSE),
		0);

	/* CLOSE of slot 0. */
	set_slot(&r, 0, pfd[0], 100);
	sqe = sqe_of(&r, IORING_OP_CLOSE, 0, 1);
	sqe->file_index = 1;
	sqe->flags = fl;
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_seq(&r, (uint64_t[]){100, 1}, (int[]){0, 0}, 2);

	/* IORING_OP_FILES_UPDATE over slots 0..1: both tags, then it. */
	set_slot(&r, 0, pfd[0], 101);
	set_slot(&r, 1, pfd[1], 102);
	{
		static int fds[2] = {-1, -1};

		sqe = sqe_of(&r, IORING_OP_FILES_UPDATE, -1, 2);
		sqe->addr = (uintptr_t)fds;
		sqe->len = 2;
		sqe->off = 0;
		sqe->flags = fl;
	}
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_seq(&r, (uint64_t[]){101, 102, 2}, (int[]){0, 0, 2}, 3);

	/* OPENAT into an occupied slot. */
	set_slot(&r, 2, pfd[0], 103);
	sqe = sqe_of(&r, IORING_OP_OPENAT, AT_FDCWD, 3);
	sqe->addr = (uintptr_t)path_a;
	sqe->file_index = 3;
	sqe->flags = fl;
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_seq(&r, (uint64_t[]){103, 3}, (int[]){0, 0}, 2);

	/* SOCKET into it again: the opened file had no tag. */
	set_slot(&r, 2, pfd[0], 104);
	sqe = sqe_of(&r, IORING_OP_SOCKET, AF_INET, 4);
	sqe->off = SOCK_STREAM;
	sqe->file_index = 3;
	sqe->flags = fl;
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_seq(&r, (uint64_t[]){104, 4}, (int[]){0, 0}, 2);

	/* ACCEPT into an occupied slot. */
	lfd = t_tcp_listener(&addr, 64);
	c = t_tcp_connect(&addr);
	set_slot(&r, 3, pfd[1], 105);
	sqe = sqe_of(&r, IORING_OP_ACCEPT, lfd, 5);
	sqe->file_index = 4;
	sqe->flags = fl;
	T_ASSERT_EQ(t_submit(&r), 1);
	expect_seq(&r, (uint64_t[]){105, 5}, (int[]){0, 0}, 2);

	/* In a link: tag, CLOSE, then the NOP after it. */
	set_slot(&r, 3, pfd[1], 106);
	sqe = sqe_of(&r, IORING_OP_CLOSE, 0, 6);
	sqe->file_index = 4;
	sqe->flags = fl | IOSQE_IO_LINK;
	sqe_of(&r, IORING_OP_NOP, 0, 7);
	T_ASSERT_EQ(t_submit(&r), 2);
	expect_seq(&r, (uint64_t[]){106, 6, 7}, (int[]){0, 0, 0}, 3);

	/* Register side: a NOP's CQE, then the tag of the update after it. */
	set_slot(&r, 0, pfd[0], 107);
	sqe_of(&r, IORING_OP_NOP, 0, 8);
	T_ASSERT_EQ(t_submit(&r), 1);
	fd = -1;
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 0, 1, &fd,
				   NULL),
		    1);
	T_ASSERT_EQ(t_cq_ready(&r), 2);
	expect_seq(&r, (uint64_t[]){8, 107}, (int[]){0, 0}, 2);
	t_expect_no_cqe(&r, 10);
	t_ring_exit(&r);
	close(c);
	close(lfd);
	close(pfd[0]);
	close(pfd[1]);
}

/* On a DEFER_TASKRUN ring the CLOSE and its tag are there after submit. */
static void defer_taskrun_at_submit(void)
{
	struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER |
					     IORING_SETUP_DEFER_TASKRUN};
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int pfd[2];

	T_ASSERT_EQ(pipe(pfd), 0);
	if (t_ring_init(&r, 8, &p) == -EINVAL)
		return; /* no DEFER_TASKRUN */
	T_ASSERT_EQ(
		t_reg_files2(&r, 1, NULL, NULL, IORING_RSRC_REGISTER_SPARSE),
		0);
	set_slot(&r, 0, pfd[0], 200);
	sqe = sqe_of(&r, IORING_OP_CLOSE, 0, 1);
	sqe->file_index = 1;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_cq_ready(&r), 2);
	expect_seq(&r, (uint64_t[]){200, 1}, (int[]){0, 0}, 2);
	t_ring_exit(&r);
	close(pfd[0]);
	close(pfd[1]);
}

/*
 * A SPLICE from a fixed input slot waits for data; the program empties the
 * slot meanwhile. The splice keeps the pipe (it moves the data written
 * after), and the slot's tag comes after the splice's CQE.
 */
static void splice_fixed_ref(void)
{
	struct io_uring_sqe *sqe;
	int in[2], out[2], fd;
	uint64_t tag = 300;
	struct t_ring r;
	char buf[8];

	T_ASSERT_EQ(pipe(in), 0);
	T_ASSERT_EQ(pipe(out), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(t_reg_files2(&r, 1, &in[0], &tag, 0), 0);
	close(in[0]);
	sqe = sqe_of(&r, IORING_OP_SPLICE, out[1], 1);
	sqe->splice_fd_in = 0;
	sqe->splice_flags = SPLICE_F_FD_IN_FIXED;
	sqe->splice_off_in = (uint64_t)-1;
	sqe->off = (uint64_t)-1;
	sqe->len = 4;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 30);
	fd = -1;
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 0, 1, &fd,
				   NULL),
		    1);
	t_expect_no_cqe(&r, 30);
	/* Numbers the engine may reuse for another file meanwhile. */
	for (int i = 0; i < 4; i++)
		T_ASSERT_GE(open("/dev/null", O_RDONLY), 0);
	T_ASSERT_EQ(write(in[1], "wxyz", 4), 4);
	expect_seq(&r, (uint64_t[]){1, 300}, (int[]){4, 0}, 2);
	T_ASSERT_EQ(read(out[0], buf, sizeof(buf)), 4);
	T_ASSERT_EQ(memcmp(buf, "wxyz", 4), 0);
	t_ring_exit(&r);
	close(in[1]);
	close(out[0]);
	close(out[1]);
}

/*
 * ASYNC_CANCEL by fixed fd: the slot's file; an empty slot is -EBADF;
 * FD_FIXED without FD is ignored (a cancel by user_data).
 */
static void cancel_fixed_fd(void)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	bool seen[2] = {false, false};
	int p[2], fds[2];
	struct t_ring r;
	char buf[8];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	fds[0] = p[0];
	fds[1] = -1;
	T_ASSERT_EQ(t_reg_files2(&r, 2, fds, NULL, 0), 0);
	sqe = sqe_of(&r, IORING_OP_READ, 0, 1);
	sqe->addr = (uintptr_t)buf;
	sqe->len = sizeof(buf);
	sqe->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	sqe = sqe_of(&r, IORING_OP_ASYNC_CANCEL, 1, 2);
	sqe->cancel_flags =
		IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_FD_FIXED;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 2, -EBADF);
	sqe = sqe_of(&r, IORING_OP_ASYNC_CANCEL, 0, 3);
	sqe->addr = 999;
	sqe->cancel_flags = IORING_ASYNC_CANCEL_FD_FIXED;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_cqe(&r, 3, -ENOENT);
	sqe = sqe_of(&r, IORING_OP_ASYNC_CANCEL, 0, 4);
	sqe->cancel_flags =
		IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_FD_FIXED;
	T_ASSERT_EQ(t_submit(&r), 1);
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe_timeout(&r, &cqe, 2000), 0);
		T_ASSERT(cqe.user_data == 1 || cqe.user_data == 4);
		T_ASSERT_EQ(cqe.res, cqe.user_data == 1 ? -ECANCELED : 0);
		seen[cqe.user_data == 4] = true;
	}
	T_ASSERT(seen[0] && seen[1]);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

static int reg_buf(struct t_ring *r, void *base, size_t len)
{
	struct iovec iov = {.iov_base = base, .iov_len = len};
	int ret = t_register(r->fd, IORING_REGISTER_BUFFERS, &iov, 1);

	if (!ret)
		T_ASSERT_EQ(
			t_register(r->fd, IORING_UNREGISTER_BUFFERS, NULL, 0),
			0);
	return ret;
}

/* Is fd's file on tmpfs (where shared mappings are fine)? */
static bool on_shmem(int fd)
{
	struct statfs sf;

	T_ASSERT_EQ(fstatfs(fd, &sf), 0);
	return sf.f_type == TMPFS_MAGIC;
}

/* Which memory a buffer may be registered over (FOLL_LONGTERM pins). */
static void buffer_memory(void)
{
	const size_t pg = (size_t)getpagesize();
	struct iovec iov[2];
	struct t_ring r;
	char *m;
	int fd;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	/* Anonymous private: fine, even never touched. */
	m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(m != MAP_FAILED);
	T_ASSERT_EQ(reg_buf(&r, m + 5, 3 * pg), 0);
	/* A hole in the middle, at the end, at the start. */
	T_ASSERT_EQ(munmap(m + 2 * pg, pg), 0);
	T_ASSERT_EQ(reg_buf(&r, m, 4 * pg), -EFAULT);
	T_ASSERT_EQ(reg_buf(&r, m, 2 * pg + 1), -EFAULT);
	T_ASSERT_EQ(reg_buf(&r, m + 2 * pg, pg), -EFAULT);
	T_ASSERT_EQ(reg_buf(&r, m + pg, pg), 0);
	/* The second of two fails: nothing stays registered. */
	iov[0].iov_base = m;
	iov[0].iov_len = pg;
	iov[1].iov_base = m + 2 * pg - 1;
	iov[1].iov_len = 2;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_BUFFERS, iov, 2), -EFAULT);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_BUFFERS, NULL, 0),
		    -ENXIO);
	/* Read-only and PROT_NONE: -EFAULT (the pin asks for write). */
	T_ASSERT_EQ(mprotect(m, pg, PROT_READ), 0);
	T_ASSERT_EQ(reg_buf(&r, m, pg), -EFAULT);
	T_ASSERT_EQ(mprotect(m, pg, PROT_NONE), 0);
	T_ASSERT_EQ(reg_buf(&r, m, pg), -EFAULT);
	munmap(m, 4 * pg);

	/* Shared anonymous and memfd (shmem): fine. */
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(m != MAP_FAILED);
	T_ASSERT_EQ(reg_buf(&r, m, 2 * pg), 0);
	munmap(m, 2 * pg);
	fd = memfd_create("nw-rsrc-tags", 0);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(ftruncate(fd, (off_t)(2 * pg)), 0);
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T_ASSERT(m != MAP_FAILED);
	T_ASSERT_EQ(reg_buf(&r, m, 2 * pg), 0);
	munmap(m, 2 * pg);
	close(fd);

	/* A disk file: shared writable -EFAULT, private (COW) fine. */
	fd = open(path_a, O_RDWR);
	T_ASSERT_GE(fd, 0);
	if (on_shmem(fd)) {
		close(fd);
		t_ring_exit(&r);
		return;
	}
	T_ASSERT_EQ(ftruncate(fd, (off_t)(2 * pg)), 0);
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T_ASSERT(m != MAP_FAILED);
	T_ASSERT_EQ(reg_buf(&r, m, 2 * pg), -EFAULT);
	/* BUFFERS_UPDATE over it fails too; the slot keeps its buffer. */
	{
		static char keep[64];
		uint64_t tag = 400;
		struct io_uring_rsrc_register rr = {.nr = 1,
						    .data = (uintptr_t)&iov[0],
						    .tags = (uintptr_t)&tag};

		iov[0].iov_base = keep;
		iov[0].iov_len = sizeof(keep);
		T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_BUFFERS2, &rr,
				       sizeof(rr)),
			    0);
		iov[0].iov_base = m;
		iov[0].iov_len = pg;
		T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_BUFFERS_UPDATE,
					   0, 1, iov, NULL),
			    -EFAULT);
		t_expect_no_cqe(&r, 10);
		T_ASSERT_EQ(
			t_register(r.fd, IORING_UNREGISTER_BUFFERS, NULL, 0),
			0);
		expect_seq(&r, (uint64_t[]){400}, (int[]){0}, 1);
	}
	munmap(m, 2 * pg);
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	T_ASSERT(m != MAP_FAILED);
	T_ASSERT_EQ(reg_buf(&r, m, 2 * pg), 0);
	munmap(m, 2 * pg);
	close(fd);
	t_ring_exit(&r);
}

/*
 * RLIMIT_MEMLOCK: without CAP_IPC_LOCK the pinned pages (and the rings'
 * own) count against it. Run in a child as a uid nobody else uses, so the
 * kernel's per-user count starts from this ring alone.
 */
static void memlock_child(void)
{
	const size_t pg = (size_t)getpagesize();
	struct rlimit rl = {64 * pg, 64 * pg};
	struct t_ring r;
	char *m;

	T_ASSERT_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	if (setgroups(0, NULL) || setresgid(54321, 54321, 54321) ||
	    setresuid(54321, 54321, 54321))
		_exit(T_EXIT_SKIP);
	T_ASSERT_EQ(t_ring_init(&r, 1, NULL), 0);
	m = mmap(NULL, 128 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(m != MAP_FAILED);
	/* The ring's two pages are counted: 62 fit, 63 do not. */
	T_ASSERT_EQ(reg_buf(&r, m, 63 * pg), -ENOMEM);
	T_ASSERT_EQ(reg_buf(&r, m, 62 * pg), 0);
	T_ASSERT_EQ(reg_buf(&r, m + 1, 61 * pg), 0); /* 62 pages */
	T_ASSERT_EQ(reg_buf(&r, m + 1, 62 * pg), -ENOMEM);
	/* Two buffers over the same pages count twice. */
	{
		struct iovec iov[2] = {{m, 31 * pg}, {m, 31 * pg}};

		T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_BUFFERS, iov, 2),
			    0);
		T_ASSERT_EQ(
			t_register(r.fd, IORING_UNREGISTER_BUFFERS, NULL, 0),
			0);
		iov[1].iov_len = 32 * pg;
		T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_BUFFERS, iov, 2),
			    -ENOMEM);
		/* The failed register gave its first buffer's pages back. */
		T_ASSERT_EQ(reg_buf(&r, m, 62 * pg), 0);
	}
	t_ring_exit(&r);
	munmap(m, 128 * pg);
	_exit(T_EXIT_PASS);
}

static void buffer_memlock(void)
{
	int status;
	pid_t pid;

	if (geteuid() != 0)
		return; /* needs a fresh uid */
	pid = fork();
	T_ASSERT_GE(pid, 0);
	if (!pid)
		memlock_child();
	status = t_waitpid_timeout(pid, 20000);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT(WEXITSTATUS(status) == T_EXIT_PASS ||
		 WEXITSTATUS(status) == T_EXIT_SKIP);
}

/*
 * Multishot ACCEPT cancelled while connections arrive: for its user_data,
 * every CQE but the last has F_MORE, and nothing follows the last.
 */
static void mshot_accept_cancel_order(void)
{
	struct sockaddr_in addr;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	struct t_ring r;
	int lfd, c[8];

	T_ASSERT_EQ(t_ring_init(&r, 64, NULL), 0);
	lfd = t_tcp_listener(&addr, 64);
	for (int round = 0; round < 50; round++) {
		bool done = false, cancel_seen = false;

		sqe = sqe_of(&r, IORING_OP_ACCEPT, lfd, 1);
		sqe->ioprio = ACCEPT_MSHOT;
		T_ASSERT_EQ(t_submit(&r), 1);
		for (int i = 0; i < 8; i++)
			c[i] = t_tcp_connect(&addr);
		sqe = sqe_of(&r, IORING_OP_ASYNC_CANCEL, -1, 2);
		sqe->addr = 1;
		T_ASSERT_EQ(t_submit(&r), 1);
		while (!done || !cancel_seen) {
			int ret = t_wait_cqe_timeout(&r, &cqe, 2000);

			if (ret)
				fprintf(stderr, "round %d done %d cancel %d\n",
					round, done, cancel_seen);
			T_ASSERT_EQ(ret, 0);
			if (cqe.user_data == 2) {
				if (cqe.res)
					fprintf(stderr, "cancel res %d\n",
						cqe.res);
				T_ASSERT(cqe.res == 0 || cqe.res == -ENOENT);
				cancel_seen = true;
				continue;
			}
			T_ASSERT_EQ(cqe.user_data, 1);
			T_ASSERT(!done);
			if (cqe.res >= 0)
				close(cqe.res);
			if (!(cqe.flags & IORING_CQE_F_MORE))
				done = true;
		}
		t_expect_no_cqe(&r, 1);
		for (int i = 0; i < 8; i++)
			close(c[i]);
		/* Connections left in the backlog: take them off. */
		T_ASSERT_EQ(fcntl(lfd, F_SETFL, O_NONBLOCK), 0);
		for (int fd; (fd = accept(lfd, NULL, NULL)) >= 0;)
			close(fd);
		T_ASSERT_EQ(fcntl(lfd, F_SETFL, 0), 0);
	}
	close(lfd);
	t_ring_exit(&r);
}

int main(void)
{
	int fd;

	t_require_engine();
	t_watchdog(90);
	snprintf(path_a, sizeof(path_a), "/var/tmp/nw-rsrc-tags-%d",
		 (int)getpid());
	fd = open(path_a, O_CREAT | O_TRUNC | O_RDWR, 0600);
	T_ASSERT_GE(fd, 0);
	close(fd);
	ops_before(0, false);
	ops_before(0, true);
	ops_before(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		   false);
	defer_taskrun_at_submit();
	splice_fixed_ref();
	cancel_fixed_fd();
	buffer_memory();
	buffer_memlock();
	mshot_accept_cancel_order();
	unlink(path_a);
	return T_EXIT_PASS;
}
