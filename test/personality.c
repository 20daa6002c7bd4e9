/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_PERSONALITY, UNREGISTER_PERSONALITY, sqe->personality
 * (io_uring/register.c, io_init_req): ids allocated cyclically from 1,
 * unregistering an unknown id (-EINVAL), arg or nr_args set (-EINVAL), an
 * unknown personality in an SQE (-EINVAL), FIXED_FD_INSTALL refusing one
 * (-EPERM); and, as root, a request run with its personality's
 * credentials rather than the submitting thread's: a thread that took
 * nobody's uid (raw setresuid: only that thread) opens a root-only file
 * through a root personality, and a root thread fails to through a
 * nobody personality.
 */
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "helpers.h"

#define NOBODY 65534

static struct io_uring_sqe *nop_sqe(struct t_ring *r, uint16_t pers)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	T_ASSERT(sqe != NULL);
	t_prep_nop(sqe, 1);
	sqe->personality = pers;
	return sqe;
}

static void test_ids(void)
{
	struct t_ring r;
	int a, b, c, p[2];
	char dummy;
	struct io_uring_sqe *sqe;

	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PERSONALITY, &dummy, 0),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PERSONALITY, NULL, 1),
		    -EINVAL);
	a = t_register(r.fd, IORING_REGISTER_PERSONALITY, NULL, 0);
	b = t_register(r.fd, IORING_REGISTER_PERSONALITY, NULL, 0);
	T_ASSERT_EQ(a, 1);
	T_ASSERT_EQ(b, 2);
	nop_sqe(&r, (uint16_t)b);
	T_ASSERT_EQ(t_run(&r, 1), 0);
	nop_sqe(&r, 99);
	T_ASSERT_EQ(t_run(&r, 1), -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_PERSONALITY, NULL, a),
		    0);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_PERSONALITY, NULL, a),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_PERSONALITY, NULL, 0),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_PERSONALITY, &dummy, b),
		    -EINVAL);
	nop_sqe(&r, (uint16_t)a);
	T_ASSERT_EQ(t_run(&r, 1), -EINVAL);
	/* Cyclic: a freed id is not taken again at once. */
	c = t_register(r.fd, IORING_REGISTER_PERSONALITY, NULL, 0);
	T_ASSERT_EQ(c, 3);

	/* FIXED_FD_INSTALL installs with the task's creds only. */
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_FILES, p, 1), 0);
	sqe = t_get_sqe(&r);
	sqe->opcode = NW_OP_FIXED_FD_INSTALL;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->user_data = 1;
	sqe->personality = (uint16_t)c;
	T_ASSERT_EQ(t_run(&r, 1), -EPERM);
	sqe = t_get_sqe(&r);
	sqe->opcode = NW_OP_FIXED_FD_INSTALL;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->user_data = 1;
	a = t_run(&r, 1);
	T_ASSERT_GE(a, 0);
	close(a);
	close(p[0]);
	close(p[1]);
	t_ring_exit(&r);
}

static char path[64];

static int open_as(struct t_ring *r, uint16_t pers)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);
	int ret;

	T_ASSERT(sqe != NULL);
	sqe->opcode = IORING_OP_OPENAT;
	sqe->fd = AT_FDCWD;
	sqe->addr = (uintptr_t)path;
	sqe->open_flags = O_RDONLY;
	sqe->user_data = 1;
	sqe->personality = pers;
	ret = t_run(r, 1);
	if (ret >= 0)
		close(ret);
	return ret < 0 ? ret : 0;
}

/* This thread alone becomes nobody (saved uid 0 keeps the way back). */
static void thread_setuid(uid_t uid)
{
	T_ASSERT_EQ(syscall(SYS_setresuid, uid, uid, 0), 0);
}

static void *cred_thread(void *arg)
{
	struct t_ring *r = arg;
	int root, nobody;

	root = t_register(r->fd, IORING_REGISTER_PERSONALITY, NULL, 0);
	T_ASSERT_GT(root, 0);
	thread_setuid(NOBODY);
	T_ASSERT_EQ(open(path, O_RDONLY), -1);
	nobody = t_register(r->fd, IORING_REGISTER_PERSONALITY, NULL, 0);
	T_ASSERT_GT(nobody, 0);
	/* Nobody's thread, root's personality: opens. */
	T_ASSERT_EQ(open_as(r, (uint16_t)root), 0);
	thread_setuid(0);
	/* Root's thread, nobody's personality: refused. */
	T_ASSERT_EQ(open_as(r, (uint16_t)nobody), -EACCES);
	T_ASSERT_EQ(open_as(r, 0), 0);
	T_ASSERT_EQ(open_as(r, (uint16_t)root), 0);
	return NULL;
}

static void test_switch(void)
{
	struct t_ring r;
	pthread_t t;
	int fd;

	if (geteuid() != 0) {
		printf("not root: no credential switch test\n");
		return;
	}
	snprintf(path, sizeof(path), "/tmp/nw-pers-%d", (int)getpid());
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	T_ASSERT_GE(fd, 0);
	close(fd);
	T_ASSERT_EQ(t_ring_init(&r, 8, NULL), 0);
	T_ASSERT_EQ(pthread_create(&t, NULL, cred_thread, &r), 0);
	T_ASSERT_EQ(pthread_join(t, NULL), 0);
	t_ring_exit(&r);
	unlink(path);
}

int main(void)
{
	t_require_engine();
	t_watchdog(60);
	test_ids();
	test_switch();
	return T_EXIT_PASS;
}
