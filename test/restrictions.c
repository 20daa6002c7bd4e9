/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_RESTRICTIONS on an IORING_SETUP_R_DISABLED ring, and
 * IORING_REGISTER_ENABLE_RINGS: what may be registered and when, and the
 * -EACCES a restricted ring gives a register opcode or an SQE it does not
 * allow. Semantics: io_uring/register.c io_parse_restrictions,
 * io_register_restrictions, io_register_enable_rings; io_uring.c
 * io_check_restriction.
 */
#include <sys/mman.h>
#include <unistd.h>
#include "helpers.h"

#define RES_REG	  IORING_RESTRICTION_REGISTER_OP
#define RES_SQE	  IORING_RESTRICTION_SQE_OP
#define RES_ALLOW IORING_RESTRICTION_SQE_FLAGS_ALLOWED
#define RES_REQ	  IORING_RESTRICTION_SQE_FLAGS_REQUIRED

static struct io_uring_restriction res_of(unsigned int opcode, unsigned int arg)
{
	struct io_uring_restriction r;

	memset(&r, 0, sizeof(r));
	r.opcode = opcode;
	if (opcode == RES_REG)
		r.register_op = arg;
	else if (opcode == RES_SQE)
		r.sqe_op = arg;
	else
		r.sqe_flags = arg;
	return r;
}

static void ring_disabled(struct t_ring *r)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_R_DISABLED;
	T_ASSERT_EQ(t_ring_init(r, 8, &p), 0);
}

static int enable(struct t_ring *r)
{
	return t_register(r->fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
}

/* One SQE: a NOP, or a POLL_REMOVE of nothing, with flags. */
static int run_one(struct t_ring *r, unsigned int opcode, unsigned int flags,
		   uint64_t ud)
{
	struct io_uring_sqe *sqe = t_get_sqe(r);

	t_prep_nop(sqe, ud);
	sqe->opcode = opcode;
	sqe->flags = flags;
	if (opcode == IORING_OP_POLL_REMOVE)
		sqe->addr = 0x1234;
	return t_run(r, ud);
}

/* Registering: only while disabled, once, and the entries' errors. */
static void test_register_errors(void)
{
	struct io_uring_restriction res[4];
	struct t_ring r;
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	T_ASSERT_EQ(t_ring_init(&r, 8, &p), 0);
	res[0] = res_of(RES_SQE, IORING_OP_NOP);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, res, 1),
		    -EBADFD);
	t_ring_exit(&r);

	ring_disabled(&r);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, NULL, 1),
		    -EINVAL);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, res, 1000),
		    -EINVAL);
	T_ASSERT_EQ(
		t_register(r.fd, IORING_REGISTER_RESTRICTIONS, (void *)8, 1),
		-EFAULT);
	/* Unknown restriction, register opcode past 6.18's last. */
	res[0] = res_of(IORING_RESTRICTION_LAST, 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, res, 1),
		    -EINVAL);
	res[0] = res_of(RES_REG, IORING_REGISTER_PROBE);
	res[1] = res_of(RES_REG, 36);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, res, 2),
		    -EINVAL);
	/* A failed registration left nothing behind: ENABLE is not allowed
	 * by it, and a second try may register. */
	res[1] = res_of(RES_REG, IORING_REGISTER_ENABLE_RINGS);
	res[2] = res_of(RES_SQE, IORING_OP_NOP);
	res[3] = res_of(RES_SQE, 62); /* 6.18's last SQE opcode */
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, res, 4), 0);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, res, 4),
		    -EBUSY);
	/* Not restricted yet: every register opcode still works. */
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_FILES, NULL, 0), -ENXIO);
	T_ASSERT_EQ(t_enter(r.fd, 0, 0, 0, NULL, 0), -EBADFD);
	T_ASSERT_EQ(enable(&r), 0);
	T_ASSERT_EQ(enable(&r), -EBADFD);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, res, 4),
		    -EACCES);
	t_ring_exit(&r);

	/* sqe_op past 6.18's IORING_OP_LAST. */
	ring_disabled(&r);
	res[0] = res_of(RES_SQE, 63);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, res, 1),
		    -EINVAL);
	/* nr_args 0 registers an empty set: nothing allowed afterwards. */
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, res, 0), 0);
	T_ASSERT_EQ(enable(&r), 0);
	T_ASSERT_EQ(run_one(&r, IORING_OP_NOP, 0, 1), -EACCES);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, NULL, 0), -EACCES);
	T_ASSERT_EQ(t_register(r.fd, 36, NULL, 0), -EINVAL);
	t_ring_exit(&r);
}

/* A restricted ring: register opcodes and SQE opcodes outside the sets. */
static void test_restricted_ops(void)
{
	struct io_uring_restriction res[3];
	struct {
		struct io_uring_probe hdr;
		struct io_uring_probe_op ops[4];
	} probe;
	struct t_ring r;

	ring_disabled(&r);
	res[0] = res_of(RES_REG, IORING_REGISTER_PROBE);
	res[1] = res_of(RES_SQE, IORING_OP_NOP);
	res[2] = res_of(RES_REG, 29); /* CLOCK: allowed, known or not */
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, res, 3), 0);
	T_ASSERT_EQ(enable(&r), 0);
	memset(&probe, 0, sizeof(probe));
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_PROBE, &probe, 4), 0);
	T_ASSERT_EQ(probe.ops[0].flags & IO_URING_OP_SUPPORTED,
		    IO_URING_OP_SUPPORTED);
	T_ASSERT_EQ(t_register(r.fd, IORING_UNREGISTER_FILES, NULL, 0),
		    -EACCES);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0),
		    -EACCES);
	T_ASSERT_EQ(t_register(r.fd, 29, NULL, 1), -EINVAL);
	T_ASSERT_EQ(run_one(&r, IORING_OP_NOP, 0, 1), 0);
	T_ASSERT_EQ(run_one(&r, IORING_OP_POLL_REMOVE, 0, 2), -EACCES);
	/* No flags allowed: any flag is refused. */
	T_ASSERT_EQ(run_one(&r, IORING_OP_NOP, IOSQE_ASYNC, 3), -EACCES);
	/* An unknown opcode or flag is -EINVAL before the restriction. */
	T_ASSERT_EQ(run_one(&r, 200, 0, 4), -EINVAL);
	T_ASSERT_EQ(run_one(&r, IORING_OP_NOP, 1U << 7, 5), -EINVAL);
	t_ring_exit(&r);
}

/* Allowed and required SQE flags. */
static void test_flags(void)
{
	struct io_uring_restriction res[4];
	struct io_uring_sqe *sqe;
	struct t_ring r;

	ring_disabled(&r);
	res[0] = res_of(RES_SQE, IORING_OP_NOP);
	res[1] = res_of(RES_ALLOW, IOSQE_IO_LINK | IOSQE_ASYNC);
	res[2] = res_of(RES_REQ, IOSQE_IO_DRAIN);
	res[3] = res_of(RES_SQE, IORING_OP_POLL_REMOVE);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, res, 4), 0);
	T_ASSERT_EQ(enable(&r), 0);
	T_ASSERT_EQ(run_one(&r, IORING_OP_NOP, 0, 1), -EACCES);
	T_ASSERT_EQ(run_one(&r, IORING_OP_NOP, IOSQE_IO_DRAIN, 2), 0);
	T_ASSERT_EQ(run_one(&r, IORING_OP_NOP, IOSQE_IO_DRAIN | IOSQE_ASYNC, 3),
		    0);
	T_ASSERT_EQ(run_one(&r, IORING_OP_NOP,
			    IOSQE_IO_DRAIN | IOSQE_FIXED_FILE, 4),
		    -EACCES);
	T_ASSERT_EQ(run_one(&r, IORING_OP_POLL_REMOVE, IOSQE_IO_DRAIN, 5),
		    -ENOENT);
	/* A refused request in a link fails the whole chain. */
	sqe = t_get_sqe(&r);
	t_prep_nop(sqe, 6);
	sqe->flags = IOSQE_IO_DRAIN | IOSQE_IO_LINK;
	sqe = t_get_sqe(&r);
	t_prep_nop(sqe, 7);
	sqe->flags = IOSQE_IO_LINK;
	sqe = t_get_sqe(&r);
	t_prep_nop(sqe, 8);
	sqe->flags = IOSQE_IO_DRAIN;
	T_ASSERT_EQ(t_submit(&r), 3);
	t_expect_cqe(&r, 6, -ECANCELED);
	t_expect_cqe(&r, 7, -EACCES);
	t_expect_cqe(&r, 8, -ECANCELED);
	T_ASSERT_EQ(run_one(&r, IORING_OP_NOP, IOSQE_IO_DRAIN, 9), 0);
	t_ring_exit(&r);
}

/* Wait (at most 2 s) until the poller sleeps: IORING_SQ_NEED_WAKEUP. */
static void wait_poller_asleep(struct t_ring *r)
{
	for (int i = 0; i < 2000; i++) {
		if (__atomic_load_n(r->sq_flags, __ATOMIC_SEQ_CST) &
		    IORING_SQ_NEED_WAKEUP)
			return;
		usleep(1000);
	}
	T_ASSERT(!"the SQPOLL poller never slept");
}

/*
 * Restrictions on an SQPOLL ring apply to what the poller consumes. The
 * poller sleeps once idle for sq_thread_idle (a new one at once, unless
 * ENABLE_RINGS woke it first), and only IORING_ENTER_SQ_WAKEUP ends that
 * sleep (io_uring/sqpoll.c io_sq_thread): a submit must look at
 * NEED_WAKEUP after its tail store, as liburing's does. The test used to
 * enter without it, which hung (the 30 s watchdog) when the poller slept
 * before the tail store: a poller first run after ENABLE_RINGS on a
 * loaded machine, or a test thread held up for the second of idle. Here
 * the poller is made to sleep first (1 ms idle), so that the wake-up is
 * taken every time.
 */
static void test_sqpoll(void)
{
	struct io_uring_restriction res[1];
	struct io_uring_params p;
	struct t_ring r;
	unsigned int wake;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_R_DISABLED | IORING_SETUP_SQPOLL;
	p.sq_thread_idle = 1;
	ret = t_ring_init(&r, 8, &p);
	if (ret == -EPERM)
		return;
	T_ASSERT_EQ(ret, 0);
	res[0] = res_of(RES_SQE, IORING_OP_NOP);
	T_ASSERT_EQ(t_register(r.fd, IORING_REGISTER_RESTRICTIONS, res, 1), 0);
	T_ASSERT_EQ(enable(&r), 0);
	wait_poller_asleep(&r);
	/*
	 * Both in one go: the poller posts CQEs before it moves the SQ head,
	 * so a second t_run could count the first SQE as still pending.
	 */
	t_prep_nop(t_get_sqe(&r), 1);
	t_prep_nop(t_get_sqe(&r), 2);
	r.sqes[1].opcode = IORING_OP_POLL_REMOVE;
	r.sqes[1].addr = 0x1234;
	T_ASSERT_EQ(t_ring_flush(&r), 2);
	/* The tail store before the flag load: a full barrier. */
	__atomic_fetch_add(r.sq_tail, 0, __ATOMIC_SEQ_CST);
	wake = (__atomic_load_n(r.sq_flags, __ATOMIC_SEQ_CST) &
		IORING_SQ_NEED_WAKEUP)
		       ? IORING_ENTER_SQ_WAKEUP
		       : 0;
#ifdef T_RESTRICTIONS_NO_WAKE /* the old test: hangs */
	wake = 0;
#endif
	T_ASSERT_EQ(t_enter(r.fd, 2, 0, wake, NULL, 0), 2);
	for (int i = 0; i < 2; i++) {
		struct io_uring_cqe cqe;

		T_ASSERT_EQ(t_wait_cqe(&r, &cqe), 0);
		T_ASSERT_EQ(cqe.res, cqe.user_data == 1 ? 0 : -EACCES);
	}
	t_ring_exit(&r);
}

int main(void)
{
	t_require_engine();
	t_watchdog(30);
	test_register_errors();
	test_restricted_ops();
	test_flags();
	test_sqpoll();
	return T_EXIT_PASS;
}
