/* SPDX-License-Identifier: MIT */
/*
 * MSG_RING to another ring when the message cannot be allocated (this
 * program's calloc fails on demand; the user engine only, the kernel
 * runs the same requests with memory and must deliver them):
 * - MSG_DATA: the sender gets -ENOMEM and the target nothing, no
 *   overflow counted (io_msg_data_remote allocates the target's request
 *   first);
 * - MSG_SEND_FD: the file is installed, the target's CQE is lost the
 *   kernel's way (cq_overflow + 1, its next wait -EBADR) and the sender
 *   gets -EOVERFLOW (io_msg_install_complete). Never a silent loss.
 */
#include <dlfcn.h>
#include <unistd.h>
#include "helpers.h"

static void *(*real_calloc)(size_t, size_t);
static __thread int fail_calloc; /* > 0: fail calls on this thread */
static int failed;

/* dlsym may itself ask for memory: a little from here meanwhile. */
static char early[4096] __attribute__((aligned(16)));
static size_t early_used;

void *calloc(size_t n, size_t size);
void *calloc(size_t n, size_t size)
{
	static __thread int resolving;

	if (fail_calloc) {
		failed++;
		return NULL;
	}
	if (!real_calloc) {
		size_t len = (n * size + 15) & ~(size_t)15;

		if (resolving) {
			if (early_used + len > sizeof(early))
				return NULL;
			early_used += len;
			return early + early_used - len;
		}
		resolving = 1;
		real_calloc =
			(void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
		resolving = 0;
	}
	return real_calloc(n, size);
}

static struct io_uring_sqe *prep_msg(struct t_ring *r, int fd, unsigned int cmd,
				     uint64_t data, uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	sqe->opcode = IORING_OP_MSG_RING;
	sqe->fd = fd;
	sqe->addr = cmd;
	sqe->off = data;
	sqe->user_data = ud;
	return sqe;
}

/*
 * A message with memory, which also fills a's request cache: what fails
 * afterwards is the target's CQE, not the sender's request.
 */
static void warm_up(struct t_ring *a, struct t_ring *b)
{
	prep_msg(a, b->fd, IORING_MSG_DATA, 0x11, 9);
	T_ASSERT_EQ(t_submit(a), 1);
	t_expect_cqe(a, 9, 0);
	t_expect_cqe(b, 0x11, 0);
}

/* Submit r's SQEs with calloc failing (user engine) or not (kernel). */
static void submit_nomem(struct t_ring *r, bool nomem)
{
	failed = 0;
	fail_calloc = nomem;
	T_ASSERT_EQ(t_submit(r), 1);
	fail_calloc = 0;
	if (nomem)
		T_ASSERT_GT(failed, 0);
}

static int wait_one(struct t_ring *r)
{
	struct __kernel_timespec ts = {.tv_nsec = 50000000};
	struct io_uring_getevents_arg arg = {.ts = (uint64_t)(uintptr_t)&ts};

	return t_enter(r->fd, 0, 1,
		       IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg,
		       sizeof(arg));
}

static void test_data(bool nomem)
{
	struct t_ring a, b;

	T_ASSERT_EQ(t_ring_init(&a, 8, NULL), 0);
	T_ASSERT_EQ(t_ring_init(&b, 8, NULL), 0);
	warm_up(&a, &b);
	prep_msg(&a, b.fd, IORING_MSG_DATA, 0x55, 1);
	submit_nomem(&a, nomem);
	t_expect_cqe(&a, 1, nomem ? -ENOMEM : 0);
	if (nomem) {
		T_ASSERT_EQ(wait_one(&b), -ETIME);
		T_ASSERT_EQ(*b.cq_overflow, 0);
	} else {
		t_expect_cqe(&b, 0x55, 0);
	}
	/* With memory again, a message goes through. */
	prep_msg(&a, b.fd, IORING_MSG_DATA, 0x56, 2);
	T_ASSERT_EQ(t_submit(&a), 1);
	t_expect_cqe(&a, 2, 0);
	t_expect_cqe(&b, 0x56, 0);
	t_ring_exit(&a);
	t_ring_exit(&b);
}

static void test_send_fd(bool nomem)
{
	int fds[1], tfds[2] = {-1, -1}, p[2];
	struct io_uring_sqe *sqe;
	struct t_ring a, b;
	char buf[4];

	T_ASSERT_EQ(pipe(p), 0);
	fds[0] = p[1];
	T_ASSERT_EQ(t_ring_init(&a, 8, NULL), 0);
	T_ASSERT_EQ(t_ring_init(&b, 8, NULL), 0);
	T_ASSERT_EQ(t_register(a.fd, IORING_REGISTER_FILES, fds, 1), 0);
	T_ASSERT_EQ(t_register(b.fd, IORING_REGISTER_FILES, tfds, 2), 0);
	warm_up(&a, &b);
	sqe = prep_msg(&a, b.fd, IORING_MSG_SEND_FD, 0x77, 1);
	sqe->addr3 = 0;
	sqe->file_index = 2; /* slot 1 */
	submit_nomem(&a, nomem);
	t_expect_cqe(&a, 1, nomem ? -EOVERFLOW : 0);
	if (nomem) {
		T_ASSERT_EQ(*b.cq_overflow, 0); /* not yet: at b's wait */
		T_ASSERT_EQ(wait_one(&b), -EBADR);
		T_ASSERT_EQ(*b.cq_overflow, 1);
		T_ASSERT_EQ(wait_one(&b), -ETIME);
	} else {
		t_expect_cqe(&b, 0x77, 0);
	}
	/* The file is in b's slot 1 either way. */
	sqe = t_get_sqe(&b);
	t_prep_rw(sqe, IORING_OP_WRITE, 1, "wxyz", 4, 0, 50);
	sqe->flags |= IOSQE_FIXED_FILE;
	T_ASSERT_EQ(t_submit(&b), 1);
	t_expect_cqe(&b, 50, 4);
	T_ASSERT_EQ(read(p[0], buf, 4), 4);
	t_ring_exit(&a);
	t_ring_exit(&b);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	bool nomem;

	t_require_engine();
	t_watchdog(30);
	nomem = t_engine() == T_ENGINE_USER;
	test_data(nomem);
	test_send_fd(nomem);
	return T_EXIT_PASS;
}
