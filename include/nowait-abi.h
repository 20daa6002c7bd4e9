/* SPDX-License-Identifier: MIT */
/*
 * io_uring ABI constants that older <linux/io_uring.h> copies lack (Debian
 * 12 ships the 6.1 header), for the engine, the project's tests and its
 * benchmarks alike. Each is written from the documented ABI and defined
 * only when the system header does not have it. Not installed: a program
 * built against a newer header has them already.
 */
#ifndef NOWAIT_ABI_H
#define NOWAIT_ABI_H

#include <linux/io_uring.h>

#ifndef IORING_SETUP_NO_MMAP
#define IORING_SETUP_NO_MMAP  (1U << 14)
/* The offsets' last word, user_addr since 6.5, was resv2 before. */
#define NW_OFF_USER_ADDR(off) ((off).resv2)
#else
#define NW_OFF_USER_ADDR(off) ((off).user_addr)
#endif
#ifndef IORING_SETUP_REGISTERED_FD_ONLY
#define IORING_SETUP_REGISTERED_FD_ONLY (1U << 15)
#endif
#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)
#endif
#ifndef IORING_SETUP_HYBRID_IOPOLL
#define IORING_SETUP_HYBRID_IOPOLL (1U << 17)
#endif

/*
 * IORING_SETUP_CQE_MIXED (6.18): 16-byte CQEs, and 32-byte ones in two
 * slots flagged IORING_CQE_F_32; one that would wrap is put after a
 * padding CQE flagged IORING_CQE_F_SKIP.
 */
#ifndef IORING_SETUP_CQE_MIXED
#define IORING_SETUP_CQE_MIXED (1U << 18)
#endif
#ifndef IORING_CQE_F_SKIP
#define IORING_CQE_F_SKIP (1U << 5)
#endif
#ifndef IORING_CQE_F_32
#define IORING_CQE_F_32 (1U << 15)
#endif

#ifndef IORING_ENTER_ABS_TIMER
#define IORING_ENTER_ABS_TIMER (1U << 5)
#endif
#ifndef IORING_ENTER_EXT_ARG_REG
#define IORING_ENTER_EXT_ARG_REG (1U << 6)
#endif
#ifndef IORING_ENTER_NO_IOWAIT
#define IORING_ENTER_NO_IOWAIT (1U << 7)
#endif

/*
 * io_uring_register's opcode flag (6.3): fd is a registered ring index.
 * An enum constant in newer headers, so #ifndef cannot see it there; the
 * macro then names the same value.
 */
#ifndef IORING_REGISTER_USE_REGISTERED_RING
#define IORING_REGISTER_USE_REGISTERED_RING (1U << 31)
#endif

/*
 * Register opcodes after 6.1's (enum constants in newer headers: the
 * macros name the same values).
 */
#ifndef IORING_REGISTER_PBUF_STATUS
#define IORING_REGISTER_PBUF_STATUS   26
#define IORING_REGISTER_NAPI	      27
#define IORING_UNREGISTER_NAPI	      28
#define IORING_REGISTER_CLOCK	      29
#define IORING_REGISTER_CLONE_BUFFERS 30
#define IORING_REGISTER_SEND_MSG_RING 31
#define IORING_REGISTER_ZCRX_IFQ      32
#define IORING_REGISTER_RESIZE_RINGS  33
#define IORING_REGISTER_MEM_REGION    34
#define IORING_REGISTER_QUERY	      35
#endif

/*
 * IORING_REGISTER_CLONE_BUFFERS's argument (struct io_uring_clone_buffers,
 * 6.12) and its flags (enum constants in newer headers).
 */
struct nw_clone_buffers {
	__u32 src_fd;
	__u32 flags;
	__u32 src_off;
	__u32 dst_off;
	__u32 nr;
	__u32 pad[3];
};
#define NW_REGISTER_SRC_REGISTERED (1U << 0)
#define NW_REGISTER_DST_REPLACE	   (1U << 1)

/* IORING_REGISTER_CLOCK's argument (struct io_uring_clock_register). */
struct nw_clock_register {
	__u32 clockid;
	__u32 resv[3];
};

/* IORING_(UN)REGISTER_NAPI's argument (struct io_uring_napi). */
struct nw_napi_register {
	__u32 busy_poll_to;
	__u8 prefer_busy_poll;
	__u8 opcode; /* 6.15's pad[0]: IO_URING_NAPI_REGISTER_OP */
	__u8 pad[2];
	__u32 op_param;
	__u32 resv;
};

#ifndef IORING_FEAT_REG_REG_RING
#define IORING_FEAT_REG_REG_RING (1U << 13)
#endif
#ifndef IORING_FEAT_RECVSEND_BUNDLE
#define IORING_FEAT_RECVSEND_BUNDLE (1U << 14)
#endif
/*
 * struct io_uring_getevents_arg's min_wait_usec (6.12) was its pad word
 * before: NW_GETEVENTS_MIN_WAIT(arg) names it with either header.
 */
#ifndef IORING_FEAT_MIN_TIMEOUT
#define IORING_FEAT_MIN_TIMEOUT	   (1U << 15)
#define NW_GETEVENTS_MIN_WAIT(arg) ((arg).pad)
#else
#define NW_GETEVENTS_MIN_WAIT(arg) ((arg).min_wait_usec)
#endif
#ifndef IORING_FEAT_NO_IOWAIT
#define IORING_FEAT_NO_IOWAIT (1U << 17)
#endif

#ifndef IORING_CQE_F_BUF_MORE
#define IORING_CQE_F_BUF_MORE (1U << 4)
#endif

#ifndef IORING_TIMEOUT_MULTISHOT
#define IORING_TIMEOUT_MULTISHOT (1U << 6)
#endif

/* IORING_OP_MSG_RING: sqe->file_index carries the target CQE's flags. */
#ifndef IORING_MSG_RING_FLAGS_PASS
#define IORING_MSG_RING_FLAGS_PASS (1U << 1)
#endif

#ifndef IORING_POLL_ADD_LEVEL
#define IORING_POLL_ADD_LEVEL (1U << 3)
#endif

/* IORING_OP_NOP flags, in the SQE's rw_flags slot (nop_flags). */
#ifndef IORING_NOP_INJECT_RESULT
#define IORING_NOP_INJECT_RESULT (1U << 0)
#endif
#ifndef IORING_NOP_FILE
#define IORING_NOP_FILE (1U << 1)
#endif
#ifndef IORING_NOP_FIXED_FILE
#define IORING_NOP_FIXED_FILE (1U << 2)
#endif
#ifndef IORING_NOP_FIXED_BUFFER
#define IORING_NOP_FIXED_BUFFER (1U << 3)
#endif
#ifndef IORING_NOP_TW
#define IORING_NOP_TW (1U << 4)
#endif
#ifndef IORING_NOP_CQE32
#define IORING_NOP_CQE32 (1U << 5)
#endif

/*
 * Opcodes after 6.1's IORING_OP_LAST (49), by their kernel numbers. Enum
 * constants in newer headers, which #ifndef cannot see, so named NW_OP_*.
 */
#define NW_OP_READ_MULTISHOT   49
#define NW_OP_WAITID	       50
#define NW_OP_FUTEX_WAIT       51
#define NW_OP_FUTEX_WAKE       52
#define NW_OP_FUTEX_WAITV      53
#define NW_OP_FIXED_FD_INSTALL 54
#define NW_OP_FTRUNCATE	       55
#define NW_OP_BIND	       56
#define NW_OP_LISTEN	       57
#define NW_OP_RECV_ZC	       58
#define NW_OP_EPOLL_WAIT       59
#define NW_OP_READV_FIXED      60
#define NW_OP_WRITEV_FIXED     61
#define NW_OP_PIPE	       62

/*
 * Buffer rings the ring allocates (6.4): IORING_REGISTER_PBUF_RING's flag
 * (an enum constant in newer headers) and the offset the program maps
 * one at, IORING_OFF_PBUF_RING | bgid << IORING_OFF_PBUF_SHIFT.
 */
#define NW_PBUF_RING_MMAP 1U
#ifndef IORING_OFF_PBUF_RING
#define IORING_OFF_PBUF_RING  0x80000000ULL
#define IORING_OFF_PBUF_SHIFT 16
#endif

/* IORING_OP_FIXED_FD_INSTALL's flag (sqe->install_fd_flags), 6.8. */
#ifndef IORING_FIXED_FD_NO_CLOEXEC
#define IORING_FIXED_FD_NO_CLOEXEC (1U << 0)
#endif

#endif /* NOWAIT_ABI_H */
