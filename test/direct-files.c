/* SPDX-License-Identifier: MIT */
/*
 * Direct descriptors and the second-generation registration calls against
 * the kernel: FILES2 (sparse, tags), FILES_UPDATE2, FILE_ALLOC_RANGE,
 * OPENAT/OPENAT2/SOCKET/ACCEPT into fixed slots (explicit and allocated),
 * CLOSE of a slot, IORING_OP_FILES_UPDATE (with index allocation), tag CQEs
 * on replace/remove/unregister, a slot kept open by a request in flight,
 * multishot ACCEPT (plain and into allocated slots), BUFFERS2 and
 * BUFFERS_UPDATE with tags (a buffer's tag waits for the READ_FIXED using
 * it), the allocation hint kept in its range, and the register error paths.
 */
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "helpers.h"

#define ALLOC	     IORING_FILE_INDEX_ALLOC
#define ACCEPT_MSHOT (1U << 0)
#define MSG_BODY     "direct"
#define MSG_BODY_LEN 6

static char path_a[64], path_b[64];

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

/* Submit what is queued, then the next CQE must be ud's with res. */
static unsigned int run(struct t_ring *r, uint64_t ud, int res)
{
	T_ASSERT_GE(t_submit(r), 1);
	return t_expect_cqe(r, ud, res);
}

static struct io_uring_sqe *prep_open(struct t_ring *r, const char *path,
				      int flags, uint32_t slot, uint64_t ud)
{
	struct io_uring_sqe *sqe = sqe_of(r, IORING_OP_OPENAT, AT_FDCWD, ud);

	sqe->addr = (uintptr_t)path;
	sqe->open_flags = (uint32_t)flags;
	sqe->file_index = slot;
	return sqe;
}

static void prep_close_slot(struct t_ring *r, uint32_t slot, uint64_t ud)
{
	sqe_of(r, IORING_OP_CLOSE, 0, ud)->file_index = slot;
}

/* Read from fixed slot idx; the result must be want bytes of text. */
static void read_slot(struct t_ring *r, int idx, const char *text, int want)
{
	char buf[32] = {0};
	struct io_uring_sqe *sqe = sqe_of(r, IORING_OP_READ, idx, 50);

	sqe->addr = (uintptr_t)buf;
	sqe->len = sizeof(buf);
	sqe->flags = IOSQE_FIXED_FILE;
	run(r, 50, want);
	if (want > 0)
		T_ASSERT_EQ(memcmp(buf, text, (size_t)want), 0);
}

static int alloc_range(struct t_ring *r, unsigned int off, unsigned int len)
{
	struct io_uring_file_index_range range = {.off = off, .len = len};

	return t_register(r->fd, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0);
}

/* Without a table: -ENXIO for a slot, -ENFILE for ALLOC, after the open. */
static void test_no_table(void)
{
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	prep_open(&r, path_a, O_RDONLY, 1, 1);
	run(&r, 1, -ENXIO);
	prep_open(&r, path_a, O_RDONLY, ALLOC, 2);
	run(&r, 2, -ENFILE);
	prep_close_slot(&r, 1, 3);
	run(&r, 3, -ENXIO);
	T_ASSERT_EQ(alloc_range(&r, 0, 1), -EINVAL);
	T_ASSERT_EQ(alloc_range(&r, 0, 0), 0);
	/* CLOSE of the ring's own fd. */
	sqe_of(&r, IORING_OP_CLOSE, r.fd, 4);
	run(&r, 4, -EBADF);
	t_ring_exit(&r);
}

/* Explicit slots, allocation within the range, CLOSE of a slot. */
static void test_open_direct(void)
{
	struct io_uring_sqe *sqe;
	struct open_how how;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(
		t_reg_files2(&r, 8, NULL, NULL, IORING_RSRC_REGISTER_SPARSE),
		0);
	prep_open(&r, path_a, O_RDONLY, 1, 1);
	run(&r, 1, 0);
	read_slot(&r, 0, "aaaa", 4);
	/* Replacing an occupied slot closes the old file. */
	prep_open(&r, path_b, O_RDONLY, 1, 2);
	run(&r, 2, 0);
	read_slot(&r, 0, "bb", 2);
	/* The rules: O_CLOEXEC, out of range, FIXED_FILE, fd with slot. */
	prep_open(&r, path_a, O_RDONLY | O_CLOEXEC, 1, 3);
	run(&r, 3, -EINVAL);
	prep_open(&r, path_a, O_RDONLY, 9, 4);
	run(&r, 4, -EINVAL);
	prep_close_slot(&r, 9, 5);
	run(&r, 5, -EINVAL);
	sqe_of(&r, IORING_OP_CLOSE, 3, 6)->file_index = 1;
	run(&r, 6, -EINVAL);

	/* Allocation stays in [5, 7); freed slots are found again. */
	T_ASSERT_EQ(alloc_range(&r, 5, 2), 0);
	prep_open(&r, path_a, O_RDONLY, ALLOC, 10);
	run(&r, 10, 5);
	prep_open(&r, path_a, O_RDONLY, ALLOC, 11);
	run(&r, 11, 6);
	prep_open(&r, path_a, O_RDONLY, ALLOC, 12);
	run(&r, 12, -ENFILE);
	prep_close_slot(&r, 6, 13);
	run(&r, 13, 0);
	prep_close_slot(&r, 6, 14);
	run(&r, 14, -EBADF);
	prep_open(&r, path_b, O_RDONLY, ALLOC, 15);
	run(&r, 15, 5);
	read_slot(&r, 5, "bb", 2);

	/* OPENAT2 into a slot. */
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY;
	sqe = sqe_of(&r, IORING_OP_OPENAT2, AT_FDCWD, 16);
	sqe->addr = (uintptr_t)path_a;
	sqe->addr2 = (uintptr_t)&how;
	sqe->len = sizeof(how);
	sqe->file_index = 3;
	run(&r, 16, 0);
	read_slot(&r, 2, "aaaa", 4);
	how.flags = O_RDONLY | O_CLOEXEC;
	sqe = sqe_of(&r, IORING_OP_OPENAT2, AT_FDCWD, 17);
	sqe->addr = (uintptr_t)path_a;
	sqe->addr2 = (uintptr_t)&how;
	sqe->len = sizeof(how);
	sqe->file_index = 3;
	run(&r, 17, -EINVAL);

	/* An open linked to a read and a close of the same slot. */
	prep_open(&r, path_a, O_RDONLY, 8, 20)->flags = IOSQE_IO_LINK;
	{
		static char buf[8];

		sqe = sqe_of(&r, IORING_OP_READ, 7, 21);
		sqe->addr = (uintptr_t)buf;
		sqe->len = 4; /* a short read would break the link */
		sqe->flags = IOSQE_FIXED_FILE | IOSQE_IO_LINK;
	}
	prep_close_slot(&r, 8, 22);
	T_ASSERT_EQ(t_submit(&r), 3);
	t_expect_cqe(&r, 20, 0);
	t_expect_cqe(&r, 21, 4);
	t_expect_cqe(&r, 22, 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_FILES, NULL, 0), 0);
	prep_open(&r, path_a, O_RDONLY, ALLOC, 23);
	run(&r, 23, -ENFILE);
	t_ring_exit(&r);
}

/* IORING_OP_FILES_UPDATE, at an offset and with index allocation. */
static void test_files_update_op(void)
{
	struct io_uring_sqe *sqe;
	int p[2], fds[3];
	struct t_ring r;

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	sqe = sqe_of(&r, IORING_OP_FILES_UPDATE, -1, 1);
	fds[0] = p[0];
	sqe->addr = (uintptr_t)fds;
	sqe->len = 1;
	run(&r, 1, -ENXIO);
	T_ASSERT_EQ(
		t_reg_files2(&r, 4, NULL, NULL, IORING_RSRC_REGISTER_SPARSE),
		0);
	/* Offset 1: slots 1 and 2; -2 skips, -1 empties. */
	fds[0] = p[0];
	fds[1] = p[1];
	sqe = sqe_of(&r, IORING_OP_FILES_UPDATE, -1, 2);
	sqe->addr = (uintptr_t)fds;
	sqe->len = 2;
	sqe->off = 1;
	run(&r, 2, 2);
	T_ASSERT_EQ(write(p[1], "aaaa", 4), 4);
	read_slot(&r, 1, "aaaa", 4);
	sqe = sqe_of(&r, IORING_OP_FILES_UPDATE, -1, 3);
	sqe->addr = (uintptr_t)fds;
	sqe->len = 2;
	sqe->off = 3;
	run(&r, 3, -EINVAL);
	sqe = sqe_of(&r, IORING_OP_FILES_UPDATE, -1, 4);
	sqe->addr = (uintptr_t)fds;
	sqe->len = 0;
	run(&r, 4, -EINVAL);
	/* ALLOC: free slots are 0 and 3; indexes are written back. */
	fds[0] = p[1];
	fds[1] = p[0];
	fds[2] = p[0];
	sqe = sqe_of(&r, IORING_OP_FILES_UPDATE, -1, 5);
	sqe->addr = (uintptr_t)fds;
	sqe->len = 3;
	sqe->off = ALLOC;
	run(&r, 5, 2);
	T_ASSERT_EQ(fds[0], 3);
	T_ASSERT_EQ(fds[1], 0);
	T_ASSERT_EQ(fds[2], p[0]);
	/* A bad fd first: the error. */
	fds[0] = -5;
	sqe = sqe_of(&r, IORING_OP_FILES_UPDATE, -1, 6);
	sqe->addr = (uintptr_t)fds;
	sqe->len = 1;
	sqe->off = 2;
	run(&r, 6, -EBADF); /* slot 2 was emptied before the fd was seen */
	read_slot(&r, 2, NULL, -EBADF);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* Tags: CQEs on replace, remove, close and unregister. */
static void test_tags(void)
{
	uint64_t tags[4] = {10, 11, 0, 13}, tag;
	struct io_uring_cqe cqe;
	int p[2], fds[4], fd;
	struct t_ring r;

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	fds[0] = fds[1] = fds[3] = p[0];
	fds[2] = -1;
	/* A tag on an empty slot: -EINVAL, and no CQE for the others. */
	tags[2] = 5;
	T_ASSERT_EQ(t_reg_files2(&r, 4, fds, tags, 0), -EINVAL);
	t_expect_no_cqe(&r, 20);
	tags[2] = 0;
	T_ASSERT_EQ(t_reg_files2(&r, 4, fds, tags, 0), 0);
	/* Replace slot 0 with tag 20: tag 10 comes. */
	fd = p[1];
	tag = 20;
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 0, 1, &fd,
				   &tag),
		    1);
	t_expect_cqe(&r, 10, 0);
	/* Empty it: tag 20. Empty again: nothing. */
	fd = -1;
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 0, 1, &fd,
				   NULL),
		    1);
	t_expect_cqe(&r, 20, 0);
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 0, 1, &fd,
				   NULL),
		    1);
	t_expect_no_cqe(&r, 20);
	/* -1 or SKIP with a tag: -EINVAL. */
	tag = 1;
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 2, 1, &fd,
				   &tag),
		    -EINVAL);
	fd = IORING_REGISTER_FILES_SKIP;
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 2, 1, &fd,
				   &tag),
		    -EINVAL);
	/* CLOSE of slot 1: its CQE and tag 11's, in either order. */
	prep_close_slot(&r, 2, 30);
	T_ASSERT_EQ(t_submit_and_wait(&r, 1), 1);
	{
		bool seen_close = false, seen_tag = false;

		for (int i = 0; i < 2; i++) {
			T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
			T_ASSERT_EQ(cqe.res, 0);
			T_ASSERT_EQ(cqe.flags, 0);
			if (cqe.user_data == 30)
				seen_close = true;
			else if (cqe.user_data == 11)
				seen_tag = true;
		}
		T_ASSERT(seen_close && seen_tag);
	}
	/* Unregister: tag 13. */
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_FILES, NULL, 0), 0);
	t_expect_cqe(&r, 13, 0);
	t_expect_no_cqe(&r, 20);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* A request in flight keeps its slot's file: the tag comes after it. */
static void test_tag_in_flight(void)
{
	uint64_t tag = 77;
	struct io_uring_sqe *sqe;
	struct t_ring r;
	char buf[8];
	int p[2], fd;

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(t_reg_files2(&r, 1, &p[0], &tag, 0), 0);
	close(p[0]);
	sqe = sqe_of(&r, IORING_OP_READ, 0, 1);
	sqe->addr = (uintptr_t)buf;
	sqe->len = sizeof(buf);
	sqe->flags = IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	fd = -1;
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 0, 1, &fd,
				   NULL),
		    1);
	t_expect_no_cqe(&r, 30);
	/* The read still has the pipe: it gets the data. */
	T_ASSERT_EQ(write(p[1], "abc", 3), 3);
	t_expect_cqe(&r, 1, 3);
	t_expect_cqe(&r, 77, 0);
	t_ring_exit(&r);
	close(p[1]);
}

/* A SEND on fixed slot idx reaches the peer. */
static void send_slot(struct t_ring *r, int idx, int peer)
{
	struct io_uring_sqe *sqe = sqe_of(r, IORING_OP_SEND, idx, 60);
	char buf[16] = {0};

	sqe->addr = (uintptr_t)MSG_BODY;
	sqe->len = MSG_BODY_LEN;
	sqe->flags = IOSQE_FIXED_FILE;
	run(r, 60, MSG_BODY_LEN);
	T_ASSERT_EQ(recv(peer, buf, sizeof(buf), 0), MSG_BODY_LEN);
	T_ASSERT_EQ(memcmp(buf, MSG_BODY, MSG_BODY_LEN), 0);
}

/* SOCKET and ACCEPT into slots; multishot ACCEPT into allocated slots. */
static void test_net_direct(void)
{
	struct io_uring_sqe *sqe;
	struct sockaddr_in addr;
	struct io_uring_cqe cqe;
	int lfd, c[6], got[8];
	unsigned int flags;
	struct t_ring r;

	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	T_ASSERT_EQ(
		t_reg_files2(&r, 8, NULL, NULL, IORING_RSRC_REGISTER_SPARSE),
		0);
	sqe = sqe_of(&r, IORING_OP_SOCKET, AF_INET, 1);
	sqe->off = SOCK_STREAM;
	sqe->file_index = 1;
	run(&r, 1, 0);
	sqe = sqe_of(&r, IORING_OP_SOCKET, AF_INET, 2);
	sqe->off = SOCK_STREAM;
	sqe->file_index = ALLOC;
	run(&r, 2, 1);
	sqe = sqe_of(&r, IORING_OP_SOCKET, AF_INET, 3);
	sqe->off = SOCK_STREAM | SOCK_CLOEXEC;
	sqe->file_index = 1;
	run(&r, 3, -EINVAL);

	lfd = t_tcp_listener(&addr, 16);
	/* Single-shot ACCEPT into slot 4, then a SEND through it. */
	c[0] = t_tcp_connect(&addr);
	sqe_of(&r, IORING_OP_ACCEPT, lfd, 4)->file_index = 5;
	run(&r, 4, 0);
	send_slot(&r, 4, c[0]);
	sqe = sqe_of(&r, IORING_OP_ACCEPT, lfd, 5);
	sqe->file_index = 5;
	sqe->accept_flags = SOCK_CLOEXEC;
	run(&r, 5, -EINVAL);
	/* Multishot needs ALLOC when direct. */
	sqe = sqe_of(&r, IORING_OP_ACCEPT, lfd, 6);
	sqe->ioprio = ACCEPT_MSHOT;
	sqe->file_index = 3;
	run(&r, 6, -EINVAL);
	close(c[0]);

	/*
	 * Multishot into allocated slots. The explicit install of slot 4 left
	 * the hint at 5: slots 5, 6, 7, then 2 and 3 after the wrap; the
	 * sixth connection finds none (-ENFILE ends it).
	 */
	sqe = sqe_of(&r, IORING_OP_ACCEPT, lfd, 7);
	sqe->ioprio = ACCEPT_MSHOT;
	sqe->file_index = ALLOC;
	T_ASSERT_EQ(t_submit(&r), 1);
	t_expect_no_cqe(&r, 20);
	for (int i = 0; i < 5; i++) {
		c[i] = t_tcp_connect(&addr);
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, 7);
		T_ASSERT(cqe.flags & IORING_CQE_F_MORE);
		got[i] = cqe.res;
	}
	T_ASSERT_EQ(got[0], 5);
	T_ASSERT_EQ(got[1], 6);
	T_ASSERT_EQ(got[2], 7);
	T_ASSERT_EQ(got[3], 2);
	T_ASSERT_EQ(got[4], 3);
	send_slot(&r, 6, c[1]);
	c[5] = t_tcp_connect(&addr);
	flags = t_expect_cqe(&r, 7, -ENFILE);
	T_ASSERT(!(flags & IORING_CQE_F_MORE));
	t_expect_no_cqe(&r, 20);
	for (int i = 0; i < 6; i++)
		close(c[i]);
	close(lfd);
	t_ring_exit(&r);
}

/* Multishot ACCEPT to plain fds, then cancelled. */
static void test_mshot_cancel(void)
{
	struct io_uring_sqe *sqe;
	struct sockaddr_in addr;
	struct io_uring_cqe cqe;
	struct t_ring r;
	int lfd, c[2];

	T_ASSERT_EQ(t_ring_init(&r, 16, NULL), 0);
	lfd = t_tcp_listener(&addr, 16);
	c[0] = t_tcp_connect(&addr);
	c[1] = t_tcp_connect(&addr);
	sqe = sqe_of(&r, IORING_OP_ACCEPT, lfd, 1);
	sqe->ioprio = ACCEPT_MSHOT;
	T_ASSERT_EQ(t_submit(&r), 1);
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.user_data, 1);
		T_ASSERT_GE(cqe.res, 0);
		T_ASSERT(cqe.flags & IORING_CQE_F_MORE);
		T_ASSERT_EQ(write(cqe.res, "x", 1), 1);
		close(cqe.res);
	}
	t_expect_no_cqe(&r, 20);
	sqe = sqe_of(&r, IORING_OP_ASYNC_CANCEL, -1, 2);
	sqe->addr = 1;
	T_ASSERT_EQ(t_submit(&r), 1);
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		if (cqe.user_data == 1) {
			T_ASSERT_EQ(cqe.res, -ECANCELED);
			T_ASSERT(!(cqe.flags & IORING_CQE_F_MORE));
		} else {
			T_ASSERT_EQ(cqe.user_data, 2);
			T_ASSERT_EQ(cqe.res, 0);
		}
	}
	close(c[0]);
	close(c[1]);
	close(lfd);
	t_ring_exit(&r);
}

/* BUFFERS2 sparse, BUFFERS_UPDATE with tags, READ_FIXED on an empty slot. */
static void test_buffers(void)
{
	static char mem[2][64];
	struct io_uring_rsrc_register rr;
	struct iovec iov[2];
	struct io_uring_sqe *sqe;
	struct t_ring r;
	uint64_t tags[2];
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	memset(&rr, 0, sizeof(rr));
	rr.nr = 2;
	rr.flags = IORING_RSRC_REGISTER_SPARSE;
	T_ASSERT_EQ(
		t_register(r.fd, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr) - 1),
		-EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)),
		    0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)),
		    -EBUSY);
	sqe = sqe_of(&r, IORING_OP_READ_FIXED, p[0], 1);
	sqe->addr = (uintptr_t)mem[0];
	sqe->len = 4;
	sqe->buf_index = 0;
	run(&r, 1, -EFAULT);
	iov[0].iov_base = mem[0];
	iov[0].iov_len = sizeof(mem[0]);
	tags[0] = 40;
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_BUFFERS_UPDATE, 0, 1,
				   iov, tags),
		    1);
	T_ASSERT_EQ(write(p[1], "buf", 3), 3);
	sqe = sqe_of(&r, IORING_OP_READ_FIXED, p[0], 2);
	sqe->addr = (uintptr_t)mem[0];
	sqe->len = 3;
	run(&r, 2, 3);
	T_ASSERT_EQ(memcmp(mem[0], "buf", 3), 0);
	/* A tag on an empty buffer: -EINVAL; a replace posts tag 40. */
	iov[1].iov_base = NULL;
	iov[1].iov_len = 0;
	tags[1] = 41;
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_BUFFERS_UPDATE, 1, 1,
				   &iov[1], &tags[1]),
		    -EINVAL);
	iov[1].iov_base = mem[1];
	iov[1].iov_len = sizeof(mem[1]);
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_BUFFERS_UPDATE, 0, 1,
				   &iov[1], &tags[1]),
		    1);
	t_expect_cqe(&r, 40, 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_BUFFERS, NULL, 0), 0);
	t_expect_cqe(&r, 41, 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/*
 * A slot set or cleared outside the allocation range moves the kernel's
 * hint out of it; IORING_FILE_INDEX_ALLOC still allocates inside the range
 * (liburing 2.15's file-alloc-range-hint).
 */
static void test_alloc_hint_range(void)
{
	struct io_uring_sqe *sqe;
	struct t_ring r;
	int p[2], fd;

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(
		t_reg_files2(&r, 20, NULL, NULL, IORING_RSRC_REGISTER_SPARSE),
		0);
	T_ASSERT_EQ(alloc_range(&r, 10, 10), 0);
	/* Below the range: set then clear slot 2. */
	fd = p[0];
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 2, 1, &fd,
				   NULL),
		    1);
	fd = -1;
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 2, 1, &fd,
				   NULL),
		    1);
	fd = p[1];
	sqe = sqe_of(&r, IORING_OP_FILES_UPDATE, -1, 60);
	sqe->addr = (uintptr_t)&fd;
	sqe->len = 1;
	sqe->off = ALLOC;
	run(&r, 60, 1);
	T_ASSERT_EQ(fd, 10);
	/* Above the range end: the range [0, 4) after slot 15 is set. */
	T_ASSERT_EQ(alloc_range(&r, 0, 4), 0);
	fd = p[0];
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 15, 1,
				   &fd, NULL),
		    1);
	for (int i = 0; i < 5; i++) {
		fd = p[0];
		sqe = sqe_of(&r, IORING_OP_FILES_UPDATE, -1, 61);
		sqe->addr = (uintptr_t)&fd;
		sqe->len = 1;
		sqe->off = ALLOC;
		/* Four slots in [0, 4), then the range is full. */
		run(&r, 61, i < 4 ? 1 : -ENFILE);
		if (i < 4)
			T_ASSERT_EQ(fd, i);
	}
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/*
 * A READ_FIXED parked on an empty pipe holds its buffer: replacing the
 * buffer posts the old tag only after the read's CQE (liburing 2.15's
 * rsrc_tags), and unregistering while a read is parked too.
 */
static void test_buffer_tag_in_flight(void)
{
	static char mem[2][64];
	struct iovec iov[2] = {{mem[0], 64}, {mem[1], 64}};
	struct io_uring_rsrc_register rr;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	uint64_t tags[2] = {70, 71};
	struct t_ring r;
	int p[2];

	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	memset(&rr, 0, sizeof(rr));
	rr.nr = 1;
	rr.data = (uintptr_t)iov;
	rr.tags = (uintptr_t)tags;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr)),
		    0);
	sqe = sqe_of(&r, IORING_OP_READ_FIXED, p[0], 1);
	sqe->addr = (uintptr_t)mem[0];
	sqe->len = 8;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_BUFFERS_UPDATE, 0, 1,
				   &iov[1], &tags[1]),
		    1);
	t_expect_no_cqe(&r, 50);
	/* The new buffer serves new reads meanwhile; the old range does not. */
	sqe = sqe_of(&r, IORING_OP_READ_FIXED, p[0], 2);
	sqe->addr = (uintptr_t)mem[0];
	sqe->len = 8;
	run(&r, 2, -EFAULT);
	T_ASSERT_EQ(write(p[1], "12345678", 8), 8);
	t_expect_cqe(&r, 1, 8);
	t_expect_cqe(&r, 70, 0);
	/* Unregister with a read in flight: tag 71 after the read's CQE. */
	sqe = sqe_of(&r, IORING_OP_READ_FIXED, p[0], 3);
	sqe->addr = (uintptr_t)mem[1];
	sqe->len = 4;
	T_ASSERT_EQ(t_submit(&r), 1);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_BUFFERS, NULL, 0), 0);
	T_ASSERT_EQ(t_peek_cqe(&r, &cqe), -EAGAIN);
	T_ASSERT_EQ(write(p[1], "abcd", 4), 4);
	t_expect_cqe(&r, 3, 4);
	t_expect_cqe(&r, 71, 0);
	T_ASSERT_EQ(memcmp(mem[1], "abcd", 4), 0);
	t_ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* The register calls' own checks. */
static void test_register_errors(void)
{
	struct io_uring_rsrc_register rr;
	struct io_uring_rsrc_update2 up;
	struct t_ring r;
	int fds[2] = {-1, -1};

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	memset(&rr, 0, sizeof(rr));
	rr.nr = 2;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES2, &rr, 16), -EINVAL);
	rr.resv2 = 1;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES2, &rr, sizeof(rr)),
		    -EINVAL);
	rr.resv2 = 0;
	rr.flags = 2;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES2, &rr, sizeof(rr)),
		    -EINVAL);
	rr.flags = IORING_RSRC_REGISTER_SPARSE;
	rr.data = (uintptr_t)fds;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES2, &rr, sizeof(rr)),
		    -EINVAL);
	rr.data = 0;
	rr.nr = 0;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES2, &rr, sizeof(rr)),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES2, NULL, sizeof(rr)),
		    -EFAULT);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, NULL, 2), -EFAULT);
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 0, 1, fds,
				   NULL),
		    -ENXIO);
	/* A plain array without fds: all sparse (rr.data 0, no flag). */
	rr.nr = 4;
	rr.flags = 0;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES2, &rr, sizeof(rr)),
		    0);
	memset(&up, 0, sizeof(up));
	up.nr = 1;
	up.data = (uintptr_t)fds;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES_UPDATE2, &up, 16),
		    -EINVAL);
	up.resv = 1;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES_UPDATE2, &up,
			       sizeof(up)),
		    -EINVAL);
	up.resv = 0;
	up.nr = 0;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES_UPDATE2, &up,
			       sizeof(up)),
		    -EINVAL);
	up.nr = 2;
	up.offset = ~0U;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES_UPDATE2, &up,
			       sizeof(up)),
		    -EOVERFLOW);
	up.offset = 3;
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES_UPDATE2, &up,
			       sizeof(up)),
		    -EINVAL);
	fds[0] = r.fd;
	T_ASSERT_EQ(t_rsrc_update2(&r, IORING_REGISTER_FILES_UPDATE2, 0, 1, fds,
				   NULL),
		    -EBADF);
	/* FILE_ALLOC_RANGE. */
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILE_ALLOC_RANGE, NULL, 0),
		    -EINVAL);
	T_ASSERT_EQ(alloc_range(&r, 2, 3), -EINVAL);
	T_ASSERT_EQ(alloc_range(&r, ~0U, 2), -EOVERFLOW);
	{
		struct io_uring_file_index_range range = {.off = 0, .len = 1};

		T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILE_ALLOC_RANGE,
				       &range, 1),
			    -EINVAL);
		range.resv = 1;
		T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILE_ALLOC_RANGE,
				       &range, 0),
			    -EINVAL);
	}
	T_ASSERT_EQ(alloc_range(&r, 1, 3), 0);
	t_ring_exit(&r);
}

static void make_file(char *path, const char *name, const char *text)
{
	int fd;

	snprintf(path, 64, "/tmp/nw-direct-%d-%s", (int)getpid(), name);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	T_ASSERT_GE(fd, 0);
	T_ASSERT_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	make_file(path_a, "a", "aaaa");
	make_file(path_b, "b", "bb");
	test_no_table();
	test_open_direct();
	test_files_update_op();
	test_tags();
	test_tag_in_flight();
	test_net_direct();
	test_mshot_cancel();
	test_buffers();
	test_alloc_hint_range();
	test_buffer_tag_in_flight();
	test_register_errors();
	unlink(path_a);
	unlink(path_b);
	return T_EXIT_PASS;
}
