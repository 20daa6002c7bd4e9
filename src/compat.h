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

#endif /* NW_COMPAT_H */
