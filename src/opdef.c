/* SPDX-License-Identifier: MIT */
/*
 * The opcode tables. An opcode without .issue is not implemented: its SQEs
 * complete with -EINVAL, as on a kernel that predates it, and the probe
 * leaves it unsupported. Kernel counterpart: io_uring/opdef.c.
 */
#include <stdio.h>
#include "opdef.h"
#include "cancel.h"
#include "nop.h"
#include "timeout.h"
#include "poll.h"
#include "rw.h"
#include "fs.h"
#include "openclose.h"
#include "sync.h"
#include "net.h"
#include "splice.h"
#include "xattr.h"
#include "kbuf.h"
#include "rsrc.h"
#include "msgring.h"
#include "epoll.h"
#include "futex.h"
#include "waitid.h"

/*
 * What the submit, issue and park paths read, for every byte value.
 * Line-aligned, with 32-byte entries: no def straddles a cache line.
 */
/* clang-format off */
const struct nw_issue_def nw_issue_defs[NW_OP_TABLE_SIZE]
	__attribute__((aligned(64))) = {
	[IORING_OP_NOP] = {
		.iopoll		= 1,
		.always_inline	= 1,
		.trivial	= 1,
		.prep		= nw_nop_prep,
		.issue		= nw_nop_issue,
	},
	[IORING_OP_READV] = {
		.iopoll		= 1,
		.needs_file	= 1,
		.pollin		= 1,
		.buffer_select	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_readv_prep,
		.issue		= nw_rw_issue,
	},
	[IORING_OP_WRITEV] = {
		.iopoll		= 1,
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_writev_prep,
		.issue		= nw_rw_issue,
	},
	[IORING_OP_POLL_ADD] = {
		.needs_file	= 1,
		.unbound_nonreg_file = 1,
		.prep		= nw_poll_add_prep,
		.issue		= nw_poll_add_issue,
	},
	[IORING_OP_POLL_REMOVE] = {
		.prep		= nw_poll_remove_prep,
		.issue		= nw_poll_remove_issue,
	},
	[IORING_OP_READ] = {
		.iopoll		= 1,
		.needs_file	= 1,
		.pollin		= 1,
		.buffer_select	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_read_prep,
		.issue		= nw_rw_issue,
	},
	[IORING_OP_WRITE] = {
		.iopoll		= 1,
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_write_prep,
		.issue		= nw_rw_issue,
	},
	[IORING_OP_TIMEOUT] = {
		.prep		= nw_timeout_prep,
		.issue		= nw_timeout_issue,
	},
	[IORING_OP_TIMEOUT_REMOVE] = {
		.prep		= nw_timeout_remove_prep,
		.issue		= nw_timeout_remove_issue,
	},
	[IORING_OP_ASYNC_CANCEL] = {
		.prep		= nw_cancel_prep,
		.issue		= nw_cancel_issue,
	},
	[IORING_OP_LINK_TIMEOUT] = {
		.prep		= nw_link_timeout_prep,
		.issue		= nw_link_timeout_issue,
	},
	[IORING_OP_FSYNC] = {
		.needs_file	= 1,
		.always_punt	= 1,
		.prep		= nw_fsync_prep,
		.issue		= nw_fsync_issue,
	},
	[IORING_OP_SYNC_FILE_RANGE] = {
		.needs_file	= 1,
		.always_punt	= 1,
		.prep		= nw_sfr_prep,
		.issue		= nw_sfr_issue,
	},
	[IORING_OP_FALLOCATE] = {
		.needs_file	= 1,
		.always_punt	= 1,
		.prep		= nw_fallocate_prep,
		.issue		= nw_fallocate_issue,
	},
	[IORING_OP_OPENAT] = {
		.prep		= nw_openat_prep,
		.issue		= nw_openat_issue,
	},
	[IORING_OP_CLOSE] = {
		.prep		= nw_close_prep,
		.issue		= nw_close_issue,
	},
	[IORING_OP_FILES_UPDATE] = {
		.iopoll		= 1,
		.prep		= nw_files_update_prep,
		.issue		= nw_files_update_issue,
	},
	[IORING_OP_STATX] = {
		.always_punt	= 1,
		.prep		= nw_statx_prep,
		.issue		= nw_statx_issue,
	},
	[IORING_OP_FADVISE] = {
		.needs_file	= 1,
		.prep		= nw_fadvise_prep,
		.issue		= nw_fadvise_issue,
	},
	[IORING_OP_MADVISE] = {
		.always_punt	= 1,
		.prep		= nw_madvise_prep,
		.issue		= nw_madvise_issue,
	},
	[IORING_OP_OPENAT2] = {
		.prep		= nw_openat2_prep,
		.issue		= nw_openat_issue,
	},
	[IORING_OP_RENAMEAT] = {
		.always_punt	= 1,
		.prep		= nw_renameat_prep,
		.issue		= nw_renameat_issue,
	},
	[IORING_OP_UNLINKAT] = {
		.always_punt	= 1,
		.prep		= nw_unlinkat_prep,
		.issue		= nw_unlinkat_issue,
	},
	[IORING_OP_MKDIRAT] = {
		.always_punt	= 1,
		.prep		= nw_mkdirat_prep,
		.issue		= nw_mkdirat_issue,
	},
	[IORING_OP_SYMLINKAT] = {
		.always_punt	= 1,
		.prep		= nw_symlinkat_prep,
		.issue		= nw_symlinkat_issue,
	},
	[IORING_OP_LINKAT] = {
		.always_punt	= 1,
		.prep		= nw_linkat_prep,
		.issue		= nw_linkat_issue,
	},
	[IORING_OP_READ_FIXED] = {
		.needs_file	= 1,
		.pollin		= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.iopoll		= 1,
		.prep		= nw_read_fixed_prep,
		.issue		= nw_rw_issue,
	},
	[IORING_OP_WRITE_FIXED] = {
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.iopoll		= 1,
		.prep		= nw_write_fixed_prep,
		.issue		= nw_rw_issue,
	},
	[IORING_OP_SENDMSG] = {
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_sendmsg_prep,
		.issue		= nw_sr_issue,
	},
	[IORING_OP_RECVMSG] = {
		.needs_file	= 1,
		.pollin		= 1,
		.buffer_select	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_recvmsg_prep,
		.issue		= nw_sr_issue,
	},
	[IORING_OP_ACCEPT] = {
		.needs_file	= 1,
		.pollin		= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_accept_prep,
		.issue		= nw_accept_issue,
	},
	[IORING_OP_CONNECT] = {
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.prep		= nw_connect_prep,
		.issue		= nw_connect_issue,
	},
	[IORING_OP_SEND] = {
		.needs_file	= 1,
		.pollout	= 1,
		.buffer_select	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_send_prep,
		.issue		= nw_sr_issue,
	},
	[IORING_OP_RECV] = {
		.needs_file	= 1,
		.pollin		= 1,
		.buffer_select	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_recv_prep,
		.issue		= nw_sr_issue,
	},
	[IORING_OP_PROVIDE_BUFFERS] = {
		.iopoll		= 1,
		.prep		= nw_provide_buffers_prep,
		.issue		= nw_provide_buffers_issue,
	},
	[IORING_OP_REMOVE_BUFFERS] = {
		.iopoll		= 1,
		.prep		= nw_remove_buffers_prep,
		.issue		= nw_remove_buffers_issue,
	},
	[IORING_OP_EPOLL_CTL] = {
		.prep		= nw_epctl_prep,
		.issue		= nw_epctl_issue,
	},
	[IORING_OP_SPLICE] = {
		.needs_file	= 1,
		.unbound_nonreg_file = 1,
		.prep		= nw_splice_prep,
		.issue		= nw_splice_issue,
	},
	[IORING_OP_TEE] = {
		.needs_file	= 1,
		.unbound_nonreg_file = 1,
		.prep		= nw_tee_prep,
		.issue		= nw_splice_issue,
	},
	[IORING_OP_FSETXATTR] = {
		.needs_file	= 1,
		.always_punt	= 1,
		.prep		= nw_fsetxattr_prep,
		.issue		= nw_xattr_issue,
	},
	[IORING_OP_SETXATTR] = {
		.always_punt	= 1,
		.prep		= nw_setxattr_prep,
		.issue		= nw_xattr_issue,
	},
	[IORING_OP_FGETXATTR] = {
		.needs_file	= 1,
		.always_punt	= 1,
		.prep		= nw_fgetxattr_prep,
		.issue		= nw_xattr_issue,
	},
	[IORING_OP_GETXATTR] = {
		.always_punt	= 1,
		.prep		= nw_getxattr_prep,
		.issue		= nw_xattr_issue,
	},
	[IORING_OP_MSG_RING] = {
		.needs_file	= 1,
		.iopoll		= 1,
		.prep		= nw_msg_ring_prep,
		.issue		= nw_msg_ring_issue,
	},
	[IORING_OP_SHUTDOWN] = {
		.needs_file	= 1,
		.prep		= nw_shutdown_prep,
		.issue		= nw_shutdown_issue,
	},
	[IORING_OP_SOCKET] = {
		.prep		= nw_socket_prep,
		.issue		= nw_socket_issue,
	},
	[IORING_OP_URING_CMD] = {
		.needs_file	= 1,
		.buffer_select	= 1, /* 6.18: for MULTISHOT; prep checks */
		.iopoll		= 1,
		.prep		= nw_uring_cmd_prep,
		.issue		= nw_uring_cmd_issue,
	},
	[IORING_OP_SEND_ZC] = {
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_send_zc_prep,
		.issue		= nw_zc_issue,
	},
	[IORING_OP_SENDMSG_ZC] = {
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_sendmsg_zc_prep,
		.issue		= nw_zc_issue,
	},
	[NW_OP_READ_MULTISHOT] = {
		.needs_file	= 1,
		.pollin		= 1,
		.buffer_select	= 1,
		.unbound_nonreg_file = 1,
		.prep		= nw_read_mshot_prep,
		.issue		= nw_read_mshot_issue,
	},
	[NW_OP_WAITID] = {
		.prep		= nw_waitid_prep,
		.issue		= nw_waitid_issue,
	},
	[NW_OP_FUTEX_WAIT] = {
		.prep		= nw_futex_prep,
		.issue		= nw_futex_wait_issue,
	},
	[NW_OP_FUTEX_WAKE] = {
		.prep		= nw_futex_prep,
		.issue		= nw_futex_wake_issue,
	},
	[NW_OP_FUTEX_WAITV] = {
		.prep		= nw_futexv_prep,
		.issue		= nw_futex_wait_issue,
	},
	[NW_OP_FIXED_FD_INSTALL] = {
		.needs_file	= 1,
		.prep		= nw_fd_install_prep,
		.issue		= nw_fd_install_issue,
	},
	[NW_OP_FTRUNCATE] = {
		.needs_file	= 1,
		.always_punt	= 1,
		.prep		= nw_ftruncate_prep,
		.issue		= nw_ftruncate_issue,
	},
	[NW_OP_BIND] = {
		.needs_file	= 1,
		.prep		= nw_bind_prep,
		.issue		= nw_bind_issue,
	},
	[NW_OP_LISTEN] = {
		.needs_file	= 1,
		.prep		= nw_listen_prep,
		.issue		= nw_listen_issue,
	},
	[NW_OP_EPOLL_WAIT] = {
		.needs_file	= 1,
		.pollin		= 1,
		.prep		= nw_epwait_prep,
		.issue		= nw_epwait_issue,
	},
	[NW_OP_READV_FIXED] = {
		.needs_file	= 1,
		.pollin		= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.iopoll		= 1,
		.prep		= nw_readv_fixed_prep,
		.issue		= nw_rw_issue,
	},
	[NW_OP_WRITEV_FIXED] = {
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.iopoll		= 1,
		.prep		= nw_writev_fixed_prep,
		.issue		= nw_rw_issue,
	},
	[NW_OP_PIPE] = {
		.prep		= nw_pipe_prep,
		.issue		= nw_pipe_issue,
	},
};
/* clang-format on */

/* What teardown (cleanup), the check and the trace (name, path_arg) read. */
/* clang-format off */
const struct nw_cold_def nw_cold_defs[NW_OP_LAST] = {
	[IORING_OP_NOP] = {
		.name		= "NOP",
	},
	[IORING_OP_READV] = {
		.name		= "READV",
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_WRITEV] = {
		.name		= "WRITEV",
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_POLL_ADD] = {
		.name		= "POLL_ADD",
	},
	[IORING_OP_POLL_REMOVE] = {
		.name		= "POLL_REMOVE",
	},
	[IORING_OP_READ] = {
		.name		= "READ",
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_WRITE] = {
		.name		= "WRITE",
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_TIMEOUT] = {
		.name		= "TIMEOUT",
	},
	[IORING_OP_TIMEOUT_REMOVE] = {
		.name		= "TIMEOUT_REMOVE",
	},
	[IORING_OP_ASYNC_CANCEL] = {
		.name		= "ASYNC_CANCEL",
	},
	[IORING_OP_LINK_TIMEOUT] = {
		.name		= "LINK_TIMEOUT",
	},
	[IORING_OP_FSYNC] = {
		.name		= "FSYNC",
	},
	[IORING_OP_SYNC_FILE_RANGE] = {
		.name		= "SYNC_FILE_RANGE",
	},
	[IORING_OP_FALLOCATE] = {
		.name		= "FALLOCATE",
	},
	[IORING_OP_OPENAT] = {
		.name		= "OPENAT",
		.path_arg	= 1,
		.cleanup	= nw_open_cleanup,
	},
	[IORING_OP_CLOSE] = {
		.name		= "CLOSE",
	},
	[IORING_OP_FILES_UPDATE] = {
		.name		= "FILES_UPDATE",
	},
	[IORING_OP_STATX] = {
		.name		= "STATX",
		.path_arg	= 1,
		.cleanup	= nw_fs_cleanup,
	},
	[IORING_OP_FADVISE] = {
		.name		= "FADVISE",
	},
	[IORING_OP_MADVISE] = {
		.name		= "MADVISE",
	},
	[IORING_OP_OPENAT2] = {
		.name		= "OPENAT2",
		.path_arg	= 1,
		.cleanup	= nw_open_cleanup,
	},
	[IORING_OP_RENAMEAT] = {
		.name		= "RENAMEAT",
		.path_arg	= 1,
		.cleanup	= nw_fs_cleanup,
	},
	[IORING_OP_UNLINKAT] = {
		.name		= "UNLINKAT",
		.path_arg	= 1,
		.cleanup	= nw_fs_cleanup,
	},
	[IORING_OP_MKDIRAT] = {
		.name		= "MKDIRAT",
		.path_arg	= 1,
		.cleanup	= nw_fs_cleanup,
	},
	[IORING_OP_SYMLINKAT] = {
		.name		= "SYMLINKAT",
		.path_arg	= 1,
		.cleanup	= nw_fs_cleanup,
	},
	[IORING_OP_LINKAT] = {
		.name		= "LINKAT",
		.path_arg	= 1,
		.cleanup	= nw_fs_cleanup,
	},
	[IORING_OP_READ_FIXED] = {
		.name		= "READ_FIXED",
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_WRITE_FIXED] = {
		.name		= "WRITE_FIXED",
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_SENDMSG] = {
		.name		= "SENDMSG",
		.cleanup	= nw_net_cleanup,
	},
	[IORING_OP_RECVMSG] = {
		.name		= "RECVMSG",
		.cleanup	= nw_net_cleanup,
	},
	[IORING_OP_ACCEPT] = {
		.name		= "ACCEPT",
	},
	[IORING_OP_CONNECT] = {
		.name		= "CONNECT",
		.cleanup	= nw_net_cleanup,
	},
	[IORING_OP_SEND] = {
		.name		= "SEND",
		.cleanup	= nw_net_cleanup,
	},
	[IORING_OP_RECV] = {
		.name		= "RECV",
		.cleanup	= nw_net_cleanup,
	},
	[IORING_OP_PROVIDE_BUFFERS] = {
		.name		= "PROVIDE_BUFFERS",
	},
	[IORING_OP_REMOVE_BUFFERS] = {
		.name		= "REMOVE_BUFFERS",
	},
	[IORING_OP_EPOLL_CTL] = {
		.name		= "EPOLL_CTL",
	},
	[IORING_OP_SPLICE] = {
		.name		= "SPLICE",
		.cleanup	= nw_splice_cleanup,
	},
	[IORING_OP_TEE] = {
		.name		= "TEE",
		.cleanup	= nw_splice_cleanup,
	},
	[IORING_OP_FSETXATTR] = {
		.name		= "FSETXATTR",
		.cleanup	= nw_xattr_cleanup,
	},
	[IORING_OP_SETXATTR] = {
		.name		= "SETXATTR",
		.cleanup	= nw_xattr_cleanup,
	},
	[IORING_OP_FGETXATTR] = {
		.name		= "FGETXATTR",
		.cleanup	= nw_xattr_cleanup,
	},
	[IORING_OP_GETXATTR] = {
		.name		= "GETXATTR",
		.cleanup	= nw_xattr_cleanup,
	},
	[IORING_OP_MSG_RING] = {
		.name		= "MSG_RING",
	},
	[IORING_OP_SHUTDOWN] = {
		.name		= "SHUTDOWN",
	},
	[IORING_OP_SOCKET] = {
		.name		= "SOCKET",
	},
	[IORING_OP_URING_CMD] = {
		.name		= "URING_CMD",
	},
	[IORING_OP_SEND_ZC] = {
		.name		= "SEND_ZC",
		.cleanup	= nw_zc_cleanup,
	},
	[IORING_OP_SENDMSG_ZC] = {
		.name		= "SENDMSG_ZC",
		.cleanup	= nw_zc_cleanup,
	},
	[NW_OP_READ_MULTISHOT] = {
		.name		= "READ_MULTISHOT",
	},
	[NW_OP_WAITID] = {
		.name		= "WAITID",
		.cleanup	= nw_waitid_cleanup,
	},
	[NW_OP_FUTEX_WAIT] = {
		.name		= "FUTEX_WAIT",
		.cleanup	= nw_futex_cleanup,
	},
	[NW_OP_FUTEX_WAKE] = {
		.name		= "FUTEX_WAKE",
	},
	[NW_OP_FUTEX_WAITV] = {
		.name		= "FUTEX_WAITV",
		.cleanup	= nw_futex_cleanup,
	},
	[NW_OP_FIXED_FD_INSTALL] = {
		.name		= "FIXED_FD_INSTALL",
	},
	[NW_OP_FTRUNCATE] = {
		.name		= "FTRUNCATE",
	},
	[NW_OP_BIND] = {
		.name		= "BIND",
		.cleanup	= nw_net_cleanup,
	},
	[NW_OP_LISTEN] = {
		.name		= "LISTEN",
	},
	[NW_OP_EPOLL_WAIT] = {
		.name		= "EPOLL_WAIT",
	},
	[NW_OP_READV_FIXED] = {
		.name		= "READV_FIXED",
		.cleanup	= nw_rw_cleanup,
	},
	[NW_OP_WRITEV_FIXED] = {
		.name		= "WRITEV_FIXED",
		.cleanup	= nw_rw_cleanup,
	},
	[NW_OP_PIPE] = {
		.name		= "PIPE",
	},
};
/* clang-format on */

#define NW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* sqe->opcode and req->opcode are bytes: the hot table covers every value. */
_Static_assert((1U << (8 * sizeof(((struct io_uring_sqe *)0)->opcode))) ==
		       NW_OP_TABLE_SIZE,
	       "one issue def per sqe->opcode value");
_Static_assert((1U << (8 * sizeof(((struct nw_req *)0)->opcode))) <=
		       NW_OP_TABLE_SIZE,
	       "req->opcode indexes the issue table unchecked");
_Static_assert(NW_OP_LAST <= NW_OP_TABLE_SIZE, "NW_OP_LAST");
_Static_assert(NW_ARRAY_SIZE(nw_issue_defs) == NW_OP_TABLE_SIZE, "issue");
_Static_assert(NW_ARRAY_SIZE(nw_cold_defs) == NW_OP_LAST, "cold defs");
/* Small, and with the table line-aligned no entry straddles a line. */
_Static_assert(sizeof(struct nw_issue_def) <= 32 &&
		       64 % sizeof(struct nw_issue_def) == 0,
	       "struct nw_issue_def grew");

static bool issue_def_empty(const struct nw_issue_def *d)
{
	return !d->needs_file && !d->pollin && !d->pollout &&
	       !d->buffer_select && !d->ioprio && !d->iopoll &&
	       !d->unbound_nonreg_file && !d->always_inline &&
	       !d->always_punt && !d->trivial && !d->prep && !d->issue;
}

/* The first rule entry op breaks, or NULL. */
static const char *check_op(const struct nw_issue_def *d,
			    const struct nw_cold_def *c)
{
	if (!d->issue) {
		if (!issue_def_empty(d) || (c && (c->name || c->cleanup)))
			return "unimplemented (no issue) but not all zero";
		return NULL;
	}
	if (!c)
		return "implemented at or past NW_OP_LAST (the probe hides it)";
	if (!d->prep)
		return "issue without prep";
	if (!c->name)
		return "implemented without a name";
	if (d->always_inline && d->always_punt)
		return "both always_inline and always_punt";
	if (d->trivial && !d->always_inline)
		return "trivial without always_inline";
	/* submit_fast runs it on a stack req without init_req's checks. */
	if (d->always_inline && (d->needs_file || !d->iopoll))
		return "always_inline with needs_file or without iopoll";
	if ((d->pollin || d->pollout || d->unbound_nonreg_file) &&
	    !d->needs_file)
		return "pollin, pollout or unbound_nonreg_file without a file";
	if (d->pollin && d->pollout)
		return "both pollin and pollout";
	return NULL;
}

int nw_optable_check(const struct nw_issue_def *issue, unsigned int nr_issue,
		     const struct nw_cold_def *cold, unsigned int nr_cold,
		     const char **why)
{
	if (nr_issue != NW_OP_TABLE_SIZE || nr_cold != NW_OP_LAST) {
		*why = "table length";
		return (int)NW_OP_TABLE_SIZE;
	}
	for (unsigned int op = 0; op < nr_issue; op++) {
		*why = check_op(&issue[op], op < nr_cold ? &cold[op] : NULL);
		if (*why)
			return (int)op;
	}
	*why = NULL;
	return -1;
}

/* The first opcode where NW_TRIVIAL_OPS and the trivial bits differ, or -1. */
int nw_trivial_mask_check(const struct nw_issue_def *issue)
{
	for (unsigned int op = 0; op < NW_OP_TABLE_SIZE; op++)
		if (issue[op].trivial != nw_op_trivial(op))
			return (int)op;
	return -1;
}

void nw_optable_init(void)
{
	const char *why;
	char msg[160];
	int op = nw_optable_check(nw_issue_defs, NW_ARRAY_SIZE(nw_issue_defs),
				  nw_cold_defs, NW_ARRAY_SIZE(nw_cold_defs),
				  &why);

	if (op < 0) {
		op = nw_trivial_mask_check(nw_issue_defs);
		why = "trivial bit and NW_TRIVIAL_OPS differ";
	}
	if (op < 0)
		return;
	snprintf(msg, sizeof(msg), "opcode table: opcode %d: %s", op, why);
	nw_bug(__FILE__, __LINE__, msg);
}
