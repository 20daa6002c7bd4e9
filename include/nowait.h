/* SPDX-License-Identifier: MIT */
/*
 * nowait: io_uring in user space.
 *
 * The three functions below have the signatures and the semantics of the
 * io_uring_setup(2), io_uring_enter(2) and io_uring_register(2) system calls,
 * but run an engine inside the calling process on ordinary system calls.
 * They return -errno on failure, never -1.
 *
 * The returned ring fd is a memfd laid out at the kernel's mmap offsets
 * (IORING_OFF_SQ_RING, IORING_OFF_CQ_RING, IORING_OFF_SQES), so a program
 * maps it exactly as it maps a kernel ring, and liburing's
 * io_uring_queue_mmap() and inline helpers work on it.
 */
#ifndef NOWAIT_H
#define NOWAIT_H

#include <linux/io_uring.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The project's one version number (the Makefile reads it from here). */
#define NOWAIT_VERSION_MAJOR 0
#define NOWAIT_VERSION_MINOR 1
#define NOWAIT_VERSION_PATCH 0

/* io_uring_setup(2): returns the ring fd or -errno. */
int nowait_setup(unsigned int entries, struct io_uring_params *params);

/* io_uring_enter(2): returns SQEs consumed, 0, or -errno. */
int nowait_enter(int fd, unsigned int to_submit, unsigned int min_complete,
		 unsigned int flags, const void *arg, size_t argsz);

/* io_uring_register(2): returns >= 0 on success or -errno. */
int nowait_register(int fd, unsigned int opcode, void *arg,
		    unsigned int nr_args);

/* Library version, "MAJOR.MINOR.PATCH". */
const char *nowait_version(void);

/* True when the library is at least MAJOR.MINOR. */
int nowait_version_check(int major, int minor);

#ifdef __cplusplus
}
#endif

#endif /* NOWAIT_H */
