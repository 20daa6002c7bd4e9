/* SPDX-License-Identifier: MIT */
/*
 * The opcode table. An opcode without .issue is not implemented: its SQEs
 * complete with -EINVAL, as on a kernel that predates it, and the probe
 * leaves it unsupported. Kernel counterpart: io_uring/opdef.c.
 */
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

/* clang-format off */
const struct nw_opdef nw_opdefs[NW_OP_LAST] = {
	[IORING_OP_NOP] = {
		.name		= "NOP",
		.iopoll		= 1,
		.always_inline	= 1,
		.fast		= nw_nop_fast,
		.prep		= nw_nop_prep,
		.issue		= nw_nop_issue,
	},
	[IORING_OP_READV] = {
		.name		= "READV",
		.iopoll		= 1,
		.needs_file	= 1,
		.pollin		= 1,
		.buffer_select	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_readv_prep,
		.issue		= nw_rw_issue,
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_WRITEV] = {
		.name		= "WRITEV",
		.iopoll		= 1,
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_writev_prep,
		.issue		= nw_rw_issue,
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_POLL_ADD] = {
		.name		= "POLL_ADD",
		.needs_file	= 1,
		.unbound_nonreg_file = 1,
		.prep		= nw_poll_add_prep,
		.issue		= nw_poll_add_issue,
	},
	[IORING_OP_POLL_REMOVE] = {
		.name		= "POLL_REMOVE",
		.prep		= nw_poll_remove_prep,
		.issue		= nw_poll_remove_issue,
	},
	[IORING_OP_READ] = {
		.name		= "READ",
		.iopoll		= 1,
		.needs_file	= 1,
		.pollin		= 1,
		.buffer_select	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_read_prep,
		.issue		= nw_rw_issue,
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_WRITE] = {
		.name		= "WRITE",
		.iopoll		= 1,
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_write_prep,
		.issue		= nw_rw_issue,
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_TIMEOUT] = {
		.name		= "TIMEOUT",
		.prep		= nw_timeout_prep,
		.issue		= nw_timeout_issue,
	},
	[IORING_OP_TIMEOUT_REMOVE] = {
		.name		= "TIMEOUT_REMOVE",
		.prep		= nw_timeout_remove_prep,
		.issue		= nw_timeout_remove_issue,
	},
	[IORING_OP_ASYNC_CANCEL] = {
		.name		= "ASYNC_CANCEL",
		.prep		= nw_cancel_prep,
		.issue		= nw_cancel_issue,
	},
	[IORING_OP_LINK_TIMEOUT] = {
		.name		= "LINK_TIMEOUT",
		.prep		= nw_link_timeout_prep,
		.issue		= nw_link_timeout_issue,
	},
	[IORING_OP_FSYNC] = {
		.name		= "FSYNC",
		.needs_file	= 1,
		.always_punt	= 1,
		.prep		= nw_fsync_prep,
		.issue		= nw_fsync_issue,
	},
	[IORING_OP_SYNC_FILE_RANGE] = {
		.name		= "SYNC_FILE_RANGE",
		.needs_file	= 1,
		.always_punt	= 1,
		.prep		= nw_sfr_prep,
		.issue		= nw_sfr_issue,
	},
	[IORING_OP_FALLOCATE] = {
		.name		= "FALLOCATE",
		.needs_file	= 1,
		.always_punt	= 1,
		.prep		= nw_fallocate_prep,
		.issue		= nw_fallocate_issue,
	},
	[IORING_OP_OPENAT] = {
		.name		= "OPENAT",
		.prep		= nw_openat_prep,
		.issue		= nw_openat_issue,
		.cleanup	= nw_open_cleanup,
	},
	[IORING_OP_CLOSE] = {
		.name		= "CLOSE",
		.prep		= nw_close_prep,
		.issue		= nw_close_issue,
	},
	[IORING_OP_FILES_UPDATE] = {
		.name		= "FILES_UPDATE",
		.iopoll		= 1,
		.prep		= nw_files_update_prep,
		.issue		= nw_files_update_issue,
	},
	[IORING_OP_STATX] = {
		.name		= "STATX",
		.always_punt	= 1,
		.prep		= nw_statx_prep,
		.issue		= nw_statx_issue,
		.cleanup	= nw_fs_cleanup,
	},
	[IORING_OP_FADVISE] = {
		.name		= "FADVISE",
		.needs_file	= 1,
		.prep		= nw_fadvise_prep,
		.issue		= nw_fadvise_issue,
	},
	[IORING_OP_MADVISE] = {
		.name		= "MADVISE",
		.always_punt	= 1,
		.prep		= nw_madvise_prep,
		.issue		= nw_madvise_issue,
	},
	[IORING_OP_OPENAT2] = {
		.name		= "OPENAT2",
		.prep		= nw_openat2_prep,
		.issue		= nw_openat_issue,
		.cleanup	= nw_open_cleanup,
	},
	[IORING_OP_RENAMEAT] = {
		.name		= "RENAMEAT",
		.always_punt	= 1,
		.prep		= nw_renameat_prep,
		.issue		= nw_renameat_issue,
		.cleanup	= nw_fs_cleanup,
	},
	[IORING_OP_UNLINKAT] = {
		.name		= "UNLINKAT",
		.always_punt	= 1,
		.prep		= nw_unlinkat_prep,
		.issue		= nw_unlinkat_issue,
		.cleanup	= nw_fs_cleanup,
	},
	[IORING_OP_MKDIRAT] = {
		.name		= "MKDIRAT",
		.always_punt	= 1,
		.prep		= nw_mkdirat_prep,
		.issue		= nw_mkdirat_issue,
		.cleanup	= nw_fs_cleanup,
	},
	[IORING_OP_SYMLINKAT] = {
		.name		= "SYMLINKAT",
		.always_punt	= 1,
		.prep		= nw_symlinkat_prep,
		.issue		= nw_symlinkat_issue,
		.cleanup	= nw_fs_cleanup,
	},
	[IORING_OP_LINKAT] = {
		.name		= "LINKAT",
		.always_punt	= 1,
		.prep		= nw_linkat_prep,
		.issue		= nw_linkat_issue,
		.cleanup	= nw_fs_cleanup,
	},
	[IORING_OP_READ_FIXED] = {
		.name		= "READ_FIXED",
		.needs_file	= 1,
		.pollin		= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.iopoll		= 1,
		.prep		= nw_read_fixed_prep,
		.issue		= nw_rw_issue,
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_WRITE_FIXED] = {
		.name		= "WRITE_FIXED",
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.iopoll		= 1,
		.prep		= nw_write_fixed_prep,
		.issue		= nw_rw_issue,
		.cleanup	= nw_rw_cleanup,
	},
	[IORING_OP_SENDMSG] = {
		.name		= "SENDMSG",
		.needs_file	= 1,
		.pollout		= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_sendmsg_prep,
		.issue		= nw_sr_issue,
		.cleanup	= nw_net_cleanup,
	},
	[IORING_OP_RECVMSG] = {
		.name		= "RECVMSG",
		.needs_file	= 1,
		.pollin		= 1,
		.buffer_select	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_recvmsg_prep,
		.issue		= nw_sr_issue,
		.cleanup	= nw_net_cleanup,
	},
	[IORING_OP_ACCEPT] = {
		.name		= "ACCEPT",
		.needs_file	= 1,
		.pollin		= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_accept_prep,
		.issue		= nw_accept_issue,
	},
	[IORING_OP_CONNECT] = {
		.name		= "CONNECT",
		.needs_file	= 1,
		.pollout	= 1,
		.unbound_nonreg_file = 1,
		.prep		= nw_connect_prep,
		.issue		= nw_connect_issue,
		.cleanup	= nw_net_cleanup,
	},
	[IORING_OP_SEND] = {
		.name		= "SEND",
		.needs_file	= 1,
		.pollout		= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_send_prep,
		.issue		= nw_sr_issue,
		.cleanup	= nw_net_cleanup,
	},
	[IORING_OP_RECV] = {
		.name		= "RECV",
		.needs_file	= 1,
		.pollin		= 1,
		.buffer_select	= 1,
		.unbound_nonreg_file = 1,
		.ioprio		= 1,
		.prep		= nw_recv_prep,
		.issue		= nw_sr_issue,
		.cleanup	= nw_net_cleanup,
	},
	[IORING_OP_PROVIDE_BUFFERS] = {
		.name		= "PROVIDE_BUFFERS",
		.iopoll		= 1,
		.prep		= nw_provide_buffers_prep,
		.issue		= nw_provide_buffers_issue,
	},
	[IORING_OP_REMOVE_BUFFERS] = {
		.name		= "REMOVE_BUFFERS",
		.iopoll		= 1,
		.prep		= nw_remove_buffers_prep,
		.issue		= nw_remove_buffers_issue,
	},
	[IORING_OP_SPLICE] = {
		.name		= "SPLICE",
		.needs_file	= 1,
		.unbound_nonreg_file = 1,
		.prep		= nw_splice_prep,
		.issue		= nw_splice_issue,
		.cleanup	= nw_splice_cleanup,
	},
	[IORING_OP_TEE] = {
		.name		= "TEE",
		.needs_file	= 1,
		.unbound_nonreg_file = 1,
		.prep		= nw_tee_prep,
		.issue		= nw_splice_issue,
		.cleanup	= nw_splice_cleanup,
	},
	[IORING_OP_FSETXATTR] = {
		.name		= "FSETXATTR",
		.needs_file	= 1,
		.always_punt	= 1,
		.prep		= nw_fsetxattr_prep,
		.issue		= nw_xattr_issue,
		.cleanup	= nw_xattr_cleanup,
	},
	[IORING_OP_SETXATTR] = {
		.name		= "SETXATTR",
		.always_punt	= 1,
		.prep		= nw_setxattr_prep,
		.issue		= nw_xattr_issue,
		.cleanup	= nw_xattr_cleanup,
	},
	[IORING_OP_FGETXATTR] = {
		.name		= "FGETXATTR",
		.needs_file	= 1,
		.always_punt	= 1,
		.prep		= nw_fgetxattr_prep,
		.issue		= nw_xattr_issue,
		.cleanup	= nw_xattr_cleanup,
	},
	[IORING_OP_GETXATTR] = {
		.name		= "GETXATTR",
		.always_punt	= 1,
		.prep		= nw_getxattr_prep,
		.issue		= nw_xattr_issue,
		.cleanup	= nw_xattr_cleanup,
	},
	[IORING_OP_MSG_RING] = {
		.name		= "MSG_RING",
		.needs_file	= 1,
		.iopoll		= 1,
		.prep		= nw_msg_ring_prep,
		.issue		= nw_msg_ring_issue,
	},
	[IORING_OP_SHUTDOWN] = {
		.name		= "SHUTDOWN",
		.needs_file	= 1,
		.prep		= nw_shutdown_prep,
		.issue		= nw_shutdown_issue,
	},
	[IORING_OP_SOCKET] = {
		.name		= "SOCKET",
		.prep		= nw_socket_prep,
		.issue		= nw_socket_issue,
	},
};
/* clang-format on */

bool nw_op_always_inline[256];
int (*nw_op_fast[256])(const struct io_uring_sqe *sqe, int32_t *res);

/* Derive the fast-path lookup from the table, once, at load time. */
__attribute__((constructor)) static void opdef_init(void)
{
	for (unsigned int op = 0; op < NW_OP_LAST; op++) {
		if (!nw_opdefs[op].always_inline || !nw_opdefs[op].issue)
			continue;
		nw_op_always_inline[op] = true;
		nw_op_fast[op] = nw_opdefs[op].fast;
	}
}
