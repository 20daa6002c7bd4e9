/* SPDX-License-Identifier: MIT */
/*
 * The engine's own constants beside the ABI: which SQE flags it knows, the
 * kernel's limits, and the last opcode it implements. The ABI constants
 * older system headers lack are in include/nowait-abi.h.
 */
#ifndef NW_COMPAT_H
#define NW_COMPAT_H

#include "nowait-abi.h"

/* The SQE flag bits the engine knows (IOSQE_*_BIT 0..6). */
#define NW_SQE_VALID_FLAGS                                       \
	(IOSQE_FIXED_FILE | IOSQE_IO_DRAIN | IOSQE_IO_LINK |     \
	 IOSQE_IO_HARDLINK | IOSQE_ASYNC | IOSQE_BUFFER_SELECT | \
	 IOSQE_CQE_SKIP_SUCCESS)

/* Kernel limits (io_uring.c). */
#define NW_MAX_ENTRIES	  32768U
#define NW_MAX_CQ_ENTRIES (2U * NW_MAX_ENTRIES)

/*
 * IOU_PBUF_RING_MMAP: the bgids a program can map, those the offset's bits
 * 16-26 name (the kernel's IORING_OFF_MMAP_MASK takes the ones above), and
 * the largest region (32768 entries).
 */
#define NW_PBUF_MAP_BGIDS  2048U
#define NW_PBUF_REGION_MAX (32768U * 16U)

/* Register opcodes past this system's <linux/io_uring.h> (6.13+). */
#define NW_REGISTER_RESIZE_RINGS 33U

/*
 * Our own "last opcode we know", independent of the installed header: the
 * probe's last_op and the table size. 6.18's IORING_OP_LAST is 63 (after
 * PIPE), its probe's last_op 62; an opcode below it without an issue
 * handler is reported unsupported, as a kernel reports one it lacks.
 */
#define NW_OP_LAST 63U

/*
 * The register opcodes of 6.18 end before this (IORING_REGISTER_QUERY is
 * the last); 6.18's IORING_OP_LAST, which restrictions accept SQE opcodes
 * below, whether or not the engine implements them.
 */
#define NW_REGISTER_LAST  36U
#define NW_KERNEL_OP_LAST 63U

/* Setup flags the engine honours; the others get -EINVAL, as on a kernel
 * that predates them. */
#define NW_SETUP_FLAGS                                                      \
	(IORING_SETUP_IOPOLL | IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP |   \
	 IORING_SETUP_ATTACH_WQ | IORING_SETUP_R_DISABLED |                 \
	 IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN |              \
	 IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_SQE128 |                  \
	 IORING_SETUP_CQE32 | IORING_SETUP_SINGLE_ISSUER |                  \
	 IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_NO_SQARRAY |             \
	 IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF | IORING_SETUP_NO_MMAP | \
	 IORING_SETUP_REGISTERED_FD_ONLY | IORING_SETUP_CQE_MIXED)

/* Every feature bit here is honoured (see README's status table). */
#define NW_FEATURES                                                \
	(IORING_FEAT_SINGLE_MMAP | IORING_FEAT_NODROP |            \
	 IORING_FEAT_SUBMIT_STABLE | IORING_FEAT_CUR_PERSONALITY | \
	 IORING_FEAT_EXT_ARG | IORING_FEAT_NATIVE_WORKERS |        \
	 IORING_FEAT_CQE_SKIP | IORING_FEAT_LINKED_FILE |          \
	 IORING_FEAT_FAST_POLL | IORING_FEAT_POLL_32BITS |         \
	 IORING_FEAT_RW_CUR_POS | IORING_FEAT_RSRC_TAGS |          \
	 IORING_FEAT_SQPOLL_NONFIXED | IORING_FEAT_REG_REG_RING |  \
	 IORING_FEAT_MIN_TIMEOUT | IORING_FEAT_NO_IOWAIT |         \
	 IORING_FEAT_RECVSEND_BUNDLE)

/* The io_uring_enter flags the engine knows. */
#define NW_ENTER_FLAGS                                           \
	(IORING_ENTER_GETEVENTS | IORING_ENTER_SQ_WAKEUP |       \
	 IORING_ENTER_SQ_WAIT | IORING_ENTER_EXT_ARG |           \
	 IORING_ENTER_REGISTERED_RING | IORING_ENTER_ABS_TIMER | \
	 IORING_ENTER_NO_IOWAIT)

#endif /* NW_COMPAT_H */
