/* SPDX-License-Identifier: MIT */
/*
 * The seccomp filter that singles out io_uring_setup, io_uring_enter and
 * io_uring_register (425-427) on x86-64 and lets every other call through.
 * The preload library traps them (route.c: SECCOMP_RET_TRAP, to run them
 * on the engine); tools/nowait-eperm fails them with EPERM as container
 * profiles do. Use: struct sock_filter f[] = NW_URING_FILTER(SECCOMP_RET_TRAP);
 * (needs <stddef.h>, <linux/audit.h>, <linux/filter.h>, <linux/seccomp.h>,
 * <sys/syscall.h>).
 */
#ifndef NW_URING_FILTER_H
#define NW_URING_FILTER_H

#define NW_URING_FILTER(action)                                                \
	{                                                                      \
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,                             \
			 offsetof(struct seccomp_data, arch)),                 \
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, \
				 1, 0),                                        \
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),          \
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS,                     \
				 offsetof(struct seccomp_data, nr)),           \
			BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,                    \
				 __NR_io_uring_setup, 0, 2),                   \
			BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K,                    \
				 __NR_io_uring_register, 1, 0),                \
			BPF_STMT(BPF_RET | BPF_K, (action)),                   \
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),          \
	}

#endif
