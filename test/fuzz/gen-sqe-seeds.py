#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed inputs of test/fuzz/corpus/sqe/ named gen-* from the
readable descriptions below (the input format is sqe-fuzz.c's header).

    test/fuzz/gen-sqe-seeds.py [DIR]     (default: test/fuzz/corpus/sqe)

Each seed aims at an engine family the stream rarely reached by chance
(futex.c, waitid.c, netbuf.c, kbuf.c, rsrcbuf.c, cmdsock.c, epoll.c, ...).
SQE fields are raw input bytes that fz_sanitize maps (fuzzenv.c): fd is a
slot of the environment (0 pipe read end, 1 pipe write end, 2/3 a unix
socketpair, 4 the file f0, 5 an eventfd, 6 an epoll fd, 7 the ring, 8 the
scratch directory, 9 -1, 10 9999, 11 AT_FDCWD, 12/13 a TCP pair, 14 its
listener, 15 /dev/null); addresses below 0x10000 are arena offsets; paths
pick from fuzzenv.c's list by their low bits (0 "f0", 1 "f1", 2 "d0").
The raw-* seeds set personality bits 0-1 so their SQEs stay untidied and
reach the -EINVAL checks of each prep; with_data() places structures
(futex_waitv entries, a setsockopt value) in the arena at a known offset.
"""
import os
import struct
import sys

OPS = """NOP READV WRITEV FSYNC READ_FIXED WRITE_FIXED POLL_ADD POLL_REMOVE
SYNC_FILE_RANGE SENDMSG RECVMSG TIMEOUT TIMEOUT_REMOVE ACCEPT ASYNC_CANCEL
LINK_TIMEOUT CONNECT FALLOCATE OPENAT CLOSE FILES_UPDATE STATX READ WRITE
FADVISE MADVISE SEND RECV OPENAT2 EPOLL_CTL SPLICE PROVIDE_BUFFERS
REMOVE_BUFFERS TEE SHUTDOWN RENAMEAT UNLINKAT MKDIRAT SYMLINKAT LINKAT
MSG_RING FSETXATTR SETXATTR FGETXATTR GETXATTR SOCKET URING_CMD SEND_ZC
SENDMSG_ZC READ_MULTISHOT WAITID FUTEX_WAIT FUTEX_WAKE FUTEX_WAITV
FIXED_FD_INSTALL FTRUNCATE BIND LISTEN RECV_ZC EPOLL_WAIT READV_FIXED
WRITEV_FIXED PIPE""".split()
OP = {name: i for i, name in enumerate(OPS)}

FIXED, DRAIN, LINK, HARDLINK, ASYNC, BSEL = 1, 2, 4, 8, 16, 32
# byte 0: setup (bits 0-2), a peer ring (3), a buffer ring for group 0
# (4), registered buffers (5), registered files (6)
PLAIN, SQPOLL, DEFER, SMALLCQ, SUBMITALL, COOP, BIG = range(7)
PEER, PBUF, BUFS, FILES = 8, 16, 32, 64


def sqe(op, fd=0, flags=0, ioprio=0, off=0, addr=0, len=0, rwf=0, buf=0,
        pers=0, fidx=0, addr3=0, pad=0):
    """An SQE record: kind 0, then the 64 bytes of struct io_uring_sqe."""
    return bytes([0]) + struct.pack(
        "<BBHIQQIIQHHIQQ", OP[op], flags, ioprio, fd & 0xffffffff, off,
        addr, len, rwf, 0, buf, pers, fidx, addr3, pad)


# Personality bits 0-1 set: fz_sanitize leaves the SQE raw (untidied), so
# the fields an opcode must have zero reach its prep's -EINVAL checks.
RAW = 3
NEG = 1 << 63
NUL = 5 << 61  # an address field fz_sanitize maps to NULL (map_addr)


def unknown(**kw):
    """An SQE of opcode byte 63, which fz_sanitize makes 250 (none)."""
    b = bytearray(sqe("NOP", **kw))
    b[1] = 63
    return bytes(b)


def raw(op, **kw):
    return sqe(op, pers=RAW, **kw)


def data(b):
    """Trailing arena bytes: a kind-0 record too short to be an SQE, so
    the harness ignores it; it lands at the arena offset where it sits in
    the input (the input is copied to the arena's start)."""
    assert len(b) < 64
    return bytes([0]) + b


def with_data(byte0, build, blob):
    """A seed whose records point at blob (trailing, data()): build(off)
    gives the records for blob's arena offset off, 8-aligned as map_addr
    aligns it."""
    n = 1 + len(b"".join(build(0))) + 1
    pad = -n % 8
    recs = build(n + pad)
    return (byte0, recs + [data(bytes(pad) + blob)])


def waitv(uaddr, val=0, flags=2, reserved=0):
    return struct.pack("<QQII", val, uaddr, flags, reserved)


def submit():
    return bytes([5])


def enter(flags=1, min_complete=1):
    return bytes([6, flags, min_complete])


def reg(which, arg=0):
    return bytes([7, which, arg])


SEEDS = {
    # futex.c: a wait a wake ends, a wait the teardown cancels, a wait on
    # a word that differs (-EAGAIN), a vector of three, bad flags.
    "futex-wait-wake": (PLAIN, [
        sqe("FUTEX_WAIT", fd=128, addr=0x1000), submit(),
        sqe("FUTEX_WAKE", fd=128, addr=0x1000, off=1), submit(),
        enter(1, 2)]),
    "futex-wait-cancel": (DEFER, [
        sqe("FUTEX_WAIT", fd=0, addr=0x2000), submit(), enter(1, 0)]),
    "futex-wait-differs": (PLAIN, [
        sqe("FUTEX_WAIT", fd=128, addr=0x1000, off=1 << 40 | 5),
        sqe("FUTEX_WAIT", fd=0x40, addr=0x1001), submit(), enter(1, 2)]),
    "futex-waitv": (COOP, [
        sqe("FUTEX_WAITV", addr=0x3000, len=3), submit(),
        sqe("FUTEX_WAKE", fd=128, addr=0x3000, off=8), submit(),
        enter(1, 1)]),
    "futex-link-async": (SQPOLL, [
        sqe("FUTEX_WAIT", fd=128, flags=LINK | ASYNC, addr=0x1800),
        sqe("NOP"), submit(),
        sqe("FUTEX_WAKE", fd=128, addr=0x1800, off=1), submit(),
        enter(1, 3)]),
    # waitid.c: a child of the input by pid (it exits in a few ms), by
    # pidfd, any child with WNOHANG, no child (-ECHILD), bad which.
    "waitid-pid": (PLAIN, [
        sqe("WAITID", fd=0x300 | 3 << 10, len=1, off=0x3000), submit(),
        enter(1, 1)]),
    "waitid-pidfd": (DEFER, [
        sqe("WAITID", fd=0x300 | 5 << 10, len=3, off=0x3000), submit(),
        enter(1, 1)]),
    "waitid-all-nohang": (PLAIN, [
        sqe("WAITID", fd=0x100 | 1 << 10, len=0, fidx=1, off=0x3000),
        sqe("WAITID", fd=0x100, len=0, off=0x3100), submit(),
        enter(1, 2)]),
    "waitid-none": (PLAIN, [
        sqe("WAITID", fd=0, len=0, off=1),
        sqe("WAITID", fd=0x80, len=2, off=0x3000),
        sqe("WAITID", fd=0x300, len=1, fidx=0x10000000, off=0x3000),
        submit(), enter(1, 3)]),
    "waitid-cancel": (SQPOLL, [
        sqe("WAITID", fd=0x300 | 7 << 10, len=1, off=0x3000), submit(),
        sqe("ASYNC_CANCEL", addr=1), submit(), enter(1, 2)]),
    # netbuf.c, kbuf.c: bundles over a buffer ring, multishot receives,
    # legacy provided buffers, buffer rings registered and dropped.
    "bundle-recv": (PBUF, [
        sqe("SEND", fd=3, addr=0x100, len=1500), submit(),
        sqe("RECV", fd=2, flags=BSEL, ioprio=16), submit(), enter(1, 2)]),
    "bundle-recv-mshot": (PBUF | DEFER, [
        sqe("RECV", fd=2, flags=BSEL, ioprio=2 | 16), submit(),
        sqe("SEND", fd=3, addr=0x100, len=700), submit(), enter(1, 2),
        sqe("SEND", fd=3, addr=0x400, len=3000), submit(), enter(1, 2)]),
    "bundle-send": (PBUF, [
        sqe("SEND", fd=3, flags=BSEL, ioprio=16, len=0), submit(),
        sqe("RECV", fd=2, addr=0x5000, len=4096), submit(), enter(1, 2)]),
    "bundle-tcp-waitall": (PBUF, [
        sqe("RECV", fd=13, flags=BSEL, ioprio=16, len=1024, rwf=0x100),
        submit(), sqe("SEND", fd=12, addr=0x200, len=2048), submit(),
        enter(1, 2)]),
    "recv-mshot-pbuf": (PBUF, [
        sqe("RECV", fd=2, flags=BSEL, ioprio=2), submit(),
        sqe("SEND", fd=3, addr=0x100, len=100), submit(), enter(1, 1),
        sqe("SEND", fd=3, addr=0x100, len=5000), submit(), enter(1, 1),
        sqe("SHUTDOWN", fd=3, len=1), submit(), enter(1, 1)]),
    "recvmsg-mshot-pbuf": (PBUF, [
        sqe("RECVMSG", fd=2, flags=BSEL, ioprio=2, addr=0x600), submit(),
        sqe("SENDMSG", fd=3, addr=0x700), submit(), enter(1, 2)]),
    "provide-read": (PLAIN, [
        sqe("PROVIDE_BUFFERS", fd=4, addr=0x4000, len=256, buf=1),
        sqe("READ", fd=0, flags=BSEL, buf=1, len=128), submit(),
        sqe("WRITE", fd=1, addr=0x100, len=64), submit(), enter(1, 2),
        sqe("REMOVE_BUFFERS", fd=2, buf=1), submit(), enter(1, 1)]),
    "provide-recv-fail": (PLAIN, [
        sqe("PROVIDE_BUFFERS", fd=2, addr=0x4000, len=16, buf=2),
        sqe("RECV", fd=13, flags=BSEL, buf=2), sqe("RECV", fd=13,
        flags=BSEL, buf=2), sqe("RECV", fd=13, flags=BSEL, buf=2),
        submit(), sqe("SEND", fd=12, addr=0x100, len=64), submit(),
        enter(1, 4)]),
    "pbuf-ring-register": (PLAIN, [
        reg(13, 1), reg(13, 1 | 4), reg(13, 2),
        sqe("READ", fd=4, flags=BSEL, buf=1, len=0),
        sqe("READ", fd=4, flags=BSEL, buf=2, len=64), submit(),
        enter(1, 2), reg(14, 1), reg(14, 3), reg(14, 2)]),
    "read-mshot": (PBUF, [
        sqe("READ_MULTISHOT", fd=0, flags=BSEL, len=0), submit(),
        sqe("WRITE", fd=1, addr=0x100, len=64), submit(), enter(1, 1),
        sqe("WRITE", fd=1, addr=0x100, len=900), submit(), enter(1, 1)]),
    # rsrcbuf.c, rsrc.c: registered buffers and files.
    "fixed-bufs": (BUFS, [
        sqe("READ_FIXED", fd=4, addr=0x8300, len=512),
        sqe("WRITE_FIXED", fd=4, addr=0x8300, len=256, off=100),
        sqe("READ_FIXED", fd=4, addr=0x100, len=512, buf=1),
        sqe("READV_FIXED", fd=4, addr=0x2000, len=2),
        sqe("WRITEV_FIXED", fd=15, addr=0x2100, len=1),
        sqe("NOP", rwf=8, addr=0x8300, len=16), submit(), enter(1, 6),
        reg(3), sqe("READ_FIXED", fd=4, addr=0x8300, len=8), submit(),
        enter(1, 1)]),
    "fixed-files": (FILES, [
        sqe("READ", fd=4, flags=FIXED, addr=0x100, len=64),
        sqe("WRITE", fd=1, flags=FIXED, addr=0x100, len=16),
        sqe("READ", fd=0, flags=FIXED, addr=0x200, len=16),
        sqe("FILES_UPDATE", addr=0x400, len=4, off=2),
        sqe("CLOSE", fidx=0x10 | 3), submit(), enter(1, 5),
        reg(6, 0x24), reg(1), reg(0, 0xff), submit(), enter(1, 0)]),
    "fixed-fd-install": (FILES, [
        sqe("FIXED_FD_INSTALL", fd=4, flags=FIXED),
        sqe("FIXED_FD_INSTALL", fd=5, flags=FIXED, rwf=1),
        sqe("FIXED_FD_INSTALL", fd=7, flags=FIXED),
        sqe("FIXED_FD_INSTALL", fd=4), submit(), enter(1, 4)]),
    # openclose.c, fs.c.
    "open-close-pipe": (PLAIN, [
        sqe("OPENAT", fd=11, addr=1, rwf=0o102, len=0o600),
        sqe("OPENAT", fd=8, addr=2, rwf=0o200000),
        sqe("OPENAT", fd=11, addr=1, rwf=0o2, fidx=0x80000030),
        sqe("OPENAT2", fd=11, addr=0, off=0x900, len=24),
        sqe("PIPE", addr=0x100), sqe("PIPE", addr=0x108, rwf=0o4000,
        fidx=0x80000030), sqe("CLOSE", fd=15), submit(), enter(1, 7)]),
    "open-direct-close": (FILES, [
        sqe("OPENAT", fd=11, addr=0, rwf=0, fidx=0x30 | 8),
        sqe("CLOSE", fidx=0x30 | 8), sqe("CLOSE", fidx=0x30 | 8),
        sqe("PIPE", addr=0x100, fidx=0x30 | 9), submit(), enter(1, 4)]),
    "fs-ops": (PLAIN, [
        sqe("MKDIRAT", fd=11, addr=0x8000000000000001, len=0o700),
        sqe("STATX", fd=11, addr=0, off=0x2000, len=0x7ff),
        sqe("SYMLINKAT", fd=11, addr=0, off=6),
        sqe("LINKAT", fd=11, addr=0, off=1, len=11),
        sqe("RENAMEAT", fd=11, addr=1, off=0x8000000000000003, len=11),
        sqe("UNLINKAT", fd=11, addr=6),
        sqe("UNLINKAT", fd=11, addr=2, rwf=0x200), submit(), enter(1, 7)]),
    "xattr-ops": (PLAIN, [
        sqe("FSETXATTR", fd=4, addr=0, off=0x100, len=8),
        sqe("FGETXATTR", fd=4, addr=0, off=0x200, len=64),
        sqe("SETXATTR", addr=1, off=0x100, len=4, addr3=0, rwf=1),
        sqe("GETXATTR", addr=0, off=0x200, len=64, addr3=0), submit(),
        enter(1, 4)]),
    "sync-ops": (PLAIN, [
        sqe("FSYNC", fd=4), sqe("FSYNC", fd=4, rwf=1),
        sqe("SYNC_FILE_RANGE", fd=4, off=0, len=4096, rwf=7),
        sqe("FALLOCATE", fd=4, off=0, addr=8192, len=0),
        sqe("FADVISE", fd=4, len=100, rwf=4),
        sqe("MADVISE", addr=0x1000, len=4096, rwf=4),
        sqe("FTRUNCATE", fd=4, off=100), sqe("FTRUNCATE", fd=0, off=1),
        submit(), enter(1, 8)]),
    # sock.c, net.c, netzc.c, cmdsock.c.
    "socket-bind-listen": (FILES, [
        sqe("SOCKET", off=0, fidx=0x30 | 15),
        sqe("BIND", fd=14, flags=FIXED, addr=1),
        sqe("LISTEN", fd=14, flags=FIXED, len=4),
        sqe("SOCKET", off=1), sqe("BIND", fd=12, addr=0),
        sqe("BIND", fd=2, addr=3, off=0x80 | 20), sqe("LISTEN", fd=14,
        len=8), sqe("LISTEN", fd=2), submit(), enter(1, 8)]),
    "accept-connect": (PLAIN, [
        sqe("ACCEPT", fd=14, ioprio=1, addr=0x100, off=0x180),
        sqe("ACCEPT", fd=14, fidx=0x80000030),
        sqe("CONNECT", fd=12, addr=1), sqe("CONNECT", fd=2, addr=2),
        sqe("SHUTDOWN", fd=13, len=2), submit(), enter(1, 3)]),
    "net-msgs": (PLAIN, [
        sqe("SENDMSG", fd=3, addr=0x400), sqe("RECVMSG", fd=2, addr=0x500),
        sqe("SEND_ZC", fd=12, addr=0x100, len=512),
        sqe("SENDMSG_ZC", fd=12, addr=0x600), sqe("RECV", fd=13,
        addr=0x2000, len=4096, rwf=0x100),
        sqe("SEND", fd=12, addr=0x100, len=100, rwf=0x8000),
        sqe("RECV", fd=2, addr=0x3000, len=10, rwf=2), submit(),
        enter(1, 7)]),
    "net-poll-first": (DEFER, [
        sqe("RECV", fd=13, ioprio=1, addr=0x2000, len=64),
        sqe("SEND", fd=12, ioprio=1, addr=0x100, len=64),
        sqe("SEND_ZC", fd=3, ioprio=8, addr=0x100, len=64), submit(),
        enter(1, 3)]),
    "uring-cmd": (PLAIN, [
        sqe("URING_CMD", fd=12, off=0), sqe("URING_CMD", fd=13, off=1),
        sqe("URING_CMD", fd=12, off=2, addr=7 << 32, addr3=0x100, fidx=4),
        sqe("URING_CMD", fd=12, off=3, addr=7 << 32, addr3=0x100, fidx=4),
        sqe("URING_CMD", fd=12, off=2, addr=1 | 1 << 32, addr3=0x100,
        fidx=4), sqe("URING_CMD", fd=15, off=0),
        sqe("URING_CMD", fd=2, off=4), submit(), enter(1, 7)]),
    # epoll.c, poll.c, pollremove.c, ringpoll.c.
    "epoll-ctl-wait": (PLAIN, [
        sqe("EPOLL_CTL", fd=6, len=0, off=0, addr=0x100),
        sqe("EPOLL_CTL", fd=6, len=0, off=12, addr=0x110),
        sqe("EPOLL_WAIT", fd=6, addr=0x200, len=8), submit(),
        sqe("WRITE", fd=1, addr=0x100, len=8), submit(), enter(1, 4),
        sqe("EPOLL_CTL", fd=6, len=2, off=0, addr=0x100),
        sqe("EPOLL_CTL", fd=6, len=1, off=0), submit(), enter(1, 2)]),
    "poll-remove-update": (PLAIN, [
        sqe("POLL_ADD", fd=0, rwf=1), sqe("POLL_ADD", fd=2, len=1, rwf=1),
        submit(), sqe("POLL_REMOVE", addr=1),
        sqe("POLL_REMOVE", addr=2, len=2 | 1, rwf=4),
        sqe("POLL_REMOVE", addr=2, len=4, off=9),
        sqe("POLL_REMOVE", addr=9), submit(), enter(1, 4)]),
    "poll-mshot-writes": (COOP, [
        sqe("POLL_ADD", fd=0, len=1, rwf=1), sqe("POLL_ADD", fd=5, len=9,
        rwf=1), submit(), sqe("WRITE", fd=1, addr=0x100, len=8),
        sqe("WRITE", fd=5, addr=0x100, len=8), submit(), enter(1, 2),
        reg(15, 0x11), reg(15, 0x10), sqe("POLL_REMOVE", addr=1),
        submit(), enter(1, 2)]),
    "ring-pollfd": (PLAIN, [
        reg(9, 1 | 2 | 4), reg(9, 3), reg(9, 0), reg(9, 5),
        sqe("POLL_ADD", fd=7, rwf=1), sqe("NOP"), submit(), enter(1, 2)]),
    # hook.c, creds.c, register.c.
    "hooks": (PLAIN, [
        sqe("READ", fd=0, addr=0x100, len=8), submit(),
        reg(15, 0x00), reg(15, 0x03), reg(15, 0x10), reg(15, 0x11),
        reg(15, 0x30), reg(15, 0x31), reg(15, 0x40), reg(15, 0x24),
        enter(1, 1)]),
    "personality": (PLAIN, [
        reg(11), sqe("NOP", pers=0x1c), sqe("READ", fd=4, addr=0x100,
        len=16, pers=0x1c), sqe("OPENAT", fd=11, addr=0, pers=0x1c),
        submit(), enter(1, 3), reg(12), sqe("NOP", pers=0x1c), submit(),
        enter(1, 1), reg(12, 3)]),
    "register-misc": (PLAIN, [
        reg(7, 0x40), reg(7, 2), reg(4, 0), reg(4, 1), reg(5), reg(8),
        enter(0x11, 0), reg(10, 19), reg(10, 20), reg(10, 26), reg(10, 27),
        reg(10, 30), reg(10, 31), reg(10, 35)]),
    # timeout.c, cancel.c, drain.c, msgring.c, splice.c.
    "timeouts": (PLAIN, [
        sqe("TIMEOUT", addr=0x100, len=1, off=0),
        sqe("TIMEOUT", addr=0x110, len=1, off=2, rwf=0x40),
        sqe("READ", fd=0, flags=LINK, addr=0x200, len=8),
        sqe("LINK_TIMEOUT", addr=0x120, len=1),
        sqe("TIMEOUT_REMOVE", addr=1, off=0x130, rwf=2), submit(),
        sqe("TIMEOUT_REMOVE", addr=2), submit(), enter(1, 5)]),
    "cancel-kinds": (PLAIN, [
        sqe("READ", fd=0, addr=0x100, len=8),
        sqe("RECV", fd=2, addr=0x200, len=8),
        sqe("POLL_ADD", fd=13, rwf=1), submit(),
        sqe("ASYNC_CANCEL", addr=1), sqe("ASYNC_CANCEL", fd=2, rwf=2),
        sqe("ASYNC_CANCEL", rwf=4 | 1), submit(), enter(1, 6)]),
    "drain-link-chain": (PLAIN, [
        sqe("NOP", flags=LINK), sqe("READ", fd=0, flags=HARDLINK,
        addr=0x100, len=4), sqe("NOP", flags=DRAIN), sqe("WRITE", fd=1,
        addr=0x100, len=4), submit(), enter(1, 4)]),
    "msg-ring-peer": (PEER, [
        sqe("MSG_RING", fd=0x17, len=5, off=1),
        sqe("MSG_RING", fd=0x17, addr=1, fidx=0x10 | 2, len=0),
        sqe("MSG_RING", fd=7, len=1, rwf=1),
        sqe("MSG_RING", fd=7, len=2, rwf=2, fidx=3), submit(),
        enter(1, 4)]),
    "splice-tee": (PLAIN, [
        sqe("WRITE", fd=1, addr=0x100, len=100),
        sqe("SPLICE", fd=0, fidx=3, len=50, off=-1 & 0xffffffffffffffff,
        addr=-1 & 0xffffffffffffffff),
        sqe("SPLICE", fd=4, fidx=1, len=64, addr=0, off=-1 & (2**64 - 1)),
        sqe("TEE", fd=0, fidx=1, len=10), submit(), enter(1, 4)]),
    "nop-flags": (BUFS | FILES, [
        sqe("NOP", rwf=1, len=0xffffffea), sqe("NOP", rwf=2, fd=4),
        sqe("NOP", rwf=2 | 4, fd=4), sqe("NOP", rwf=8, addr=0x8300),
        sqe("NOP", rwf=16), sqe("NOP", rwf=32), submit(), enter(1, 6)]),
    "rw-kinds": (PLAIN, [
        sqe("WRITEV", fd=4, addr=0x100, len=3, off=0),
        sqe("READV", fd=4, addr=0x200, len=2, off=10, rwf=8),
        sqe("READ", fd=5, addr=0x300, len=8),
        sqe("WRITE", fd=5, addr=0x300, len=8),
        sqe("READ", fd=13, addr=0x400, len=8, rwf=8),
        sqe("WRITE", fd=4, addr=0x100, len=8, rwf=0x10), submit(),
        enter(1, 6)]),
    # Raw SQEs (untidied) for the prep checks of sync.c, sock.c, netzc.c,
    # splice.c, pollremove.c, cmdsock.c and futex.c: each SQE trips one
    # check; then issue paths on fds of the wrong kind.
    "raw-sync-prep": (PLAIN, [
        raw("FSYNC", fd=4, addr=1), raw("FSYNC", fd=4, buf=1),
        raw("FSYNC", fd=4, fidx=1), raw("FSYNC", fd=4, rwf=2),
        raw("FSYNC", fd=4, off=NEG), raw("SYNC_FILE_RANGE", fd=4, addr=1),
        raw("SYNC_FILE_RANGE", fd=4, buf=1),
        raw("SYNC_FILE_RANGE", fd=4, fidx=1),
        raw("FALLOCATE", fd=4, buf=1), raw("FALLOCATE", fd=4, rwf=1),
        raw("FALLOCATE", fd=4, fidx=1), raw("FTRUNCATE", fd=4, rwf=1),
        raw("FTRUNCATE", fd=4, addr=1), raw("FTRUNCATE", fd=4, len=1),
        raw("FTRUNCATE", fd=4, buf=1), raw("FTRUNCATE", fd=4, fidx=1),
        raw("FTRUNCATE", fd=4, addr3=1), raw("FADVISE", fd=4, buf=1),
        raw("FADVISE", fd=4, fidx=1), raw("MADVISE", addr=0x1000, buf=1),
        raw("MADVISE", addr=0x1000, fidx=1), submit(), enter(1, 3)]),
    "sync-bad-fds": (PLAIN, [
        sqe("FSYNC", fd=0), sqe("FSYNC", fd=9), sqe("FSYNC", fd=10),
        sqe("FSYNC", fd=4, off=10, len=100),
        sqe("FSYNC", fd=4, rwf=1, off=0, len=4096),
        sqe("SYNC_FILE_RANGE", fd=0, len=10), sqe("SYNC_FILE_RANGE", fd=9),
        sqe("FALLOCATE", fd=0, addr=10), sqe("FALLOCATE", fd=9, addr=10),
        sqe("FALLOCATE", fd=4, addr=10, len=0x7f),
        sqe("FTRUNCATE", fd=9), sqe("FTRUNCATE", fd=2, off=5),
        sqe("FADVISE", fd=9, len=10), sqe("FADVISE", fd=0, len=10),
        sqe("FADVISE", fd=4, addr=64, rwf=1),
        sqe("FADVISE", fd=4, len=64, rwf=3),
        sqe("MADVISE", addr=0x1000, off=4096, rwf=0),
        sqe("MADVISE", addr=0x1000, len=4096, rwf=9),
        submit(), enter(1, 3)]),
    "sync-fixed-async": (FILES, [
        sqe("FSYNC", fd=4, flags=FIXED), sqe("FSYNC", fd=12, flags=FIXED),
        sqe("SYNC_FILE_RANGE", fd=4, flags=FIXED | ASYNC, len=10),
        sqe("FALLOCATE", fd=4, flags=FIXED | ASYNC, addr=10),
        sqe("FTRUNCATE", fd=4, flags=FIXED, off=10),
        sqe("FTRUNCATE", fd=14, flags=FIXED | ASYNC, off=10),
        sqe("FADVISE", fd=4, flags=FIXED | ASYNC, len=10, rwf=4),
        sqe("MADVISE", flags=ASYNC, addr=0x1000, len=4096, rwf=4),
        sqe("FSYNC", fd=4, flags=ASYNC, rwf=1),
        submit(), enter(1, 3)]),
    "raw-sock-prep": (PLAIN, [
        raw("ACCEPT", fd=14, len=1), raw("ACCEPT", fd=14, buf=1),
        raw("ACCEPT", fd=14, ioprio=0x80),
        raw("ACCEPT", fd=14, fidx=1, rwf=0o2000000),
        raw("ACCEPT", fd=14, fidx=1, ioprio=1),
        raw("ACCEPT", fd=14, rwf=0x10),
        raw("CONNECT", fd=12, len=1), raw("CONNECT", fd=12, buf=1),
        raw("CONNECT", fd=12, rwf=1), raw("CONNECT", fd=12, fidx=1),
        raw("SHUTDOWN", fd=12, off=1), raw("SHUTDOWN", fd=12, addr=1),
        raw("SHUTDOWN", fd=12, rwf=1), raw("SHUTDOWN", fd=12, buf=1),
        raw("SHUTDOWN", fd=12, fidx=1), raw("SOCKET", addr=1),
        raw("SOCKET", rwf=1), raw("SOCKET", buf=1),
        raw("SOCKET", off=0x80000001 | 0o2000000, fidx=1),
        raw("SOCKET", off=0x80000001 | 0x100),
        raw("BIND", fd=2, len=1), raw("BIND", fd=2, buf=1),
        raw("BIND", fd=2, rwf=1), raw("BIND", fd=2, fidx=1),
        raw("LISTEN", fd=2, addr=1), raw("LISTEN", fd=2, buf=1),
        raw("LISTEN", fd=2, rwf=1), raw("LISTEN", fd=2, fidx=1),
        raw("LISTEN", fd=2, off=1), submit(), enter(1, 3)]),
    "sock-bad-fds": (PLAIN, [
        sqe("ACCEPT", fd=9), sqe("ACCEPT", fd=4), sqe("ACCEPT", fd=2),
        sqe("ACCEPT", fd=14, ioprio=2 | 4, rwf=0o4000),
        sqe("CONNECT", fd=9, addr=1), sqe("CONNECT", fd=4, addr=1),
        sqe("CONNECT", fd=2, addr=0x100, off=2),
        sqe("SHUTDOWN", fd=9), sqe("SHUTDOWN", fd=4, len=1),
        sqe("BIND", fd=9, addr=1), sqe("BIND", fd=4, addr=1),
        sqe("LISTEN", fd=9), sqe("LISTEN", fd=4),
        sqe("SOCKET", off=2, rwf=0), sqe("SOCKET", off=0x80000007),
        submit(), enter(1, 3)]),
    "accept-then-connect": (DEFER, [
        sqe("ACCEPT", fd=14, addr=0x100, off=0x180), submit(),
        sqe("SOCKET", off=0, fidx=0x80000030), submit(), enter(1, 1),
        sqe("ACCEPT", fd=14, ioprio=1, fidx=0x80000030), submit(),
        enter(1, 0), sqe("ACCEPT", fd=14, flags=ASYNC), submit(),
        enter(1, 0)]),
    "raw-netzc-prep": (BUFS, [
        raw("SEND_ZC", fd=12, addr=0x100, len=8, pad=1),
        raw("SEND_ZC", fd=12, addr=0x100, len=8, addr3=1),
        raw("SEND_ZC", fd=12, ioprio=0x40, addr=0x100, len=8),
        raw("SEND_ZC", fd=12, ioprio=0x20, addr=0x100, len=2000),
        raw("SEND_ZC", fd=12, ioprio=0x20, addr=0x100, len=2),
        raw("SEND_ZC", fd=12, ioprio=0x24, addr=0x100, len=2),
        raw("SEND_ZC", fd=12, ioprio=4, addr=0x8300, len=64),
        raw("SEND_ZC", fd=12, ioprio=4, addr=0x8300, len=64, buf=5),
        raw("SEND_ZC", fd=12, ioprio=8, addr=0x100, len=64),
        raw("SEND_ZC", fd=3, addr=0x100, len=8, off=1, fidx=8),
        raw("SENDMSG_ZC", fd=12, addr=0x400, off=1),
        raw("SENDMSG_ZC", fd=12, addr=0x400, fidx=1),
        raw("SENDMSG_ZC", fd=12, addr=0x400, pad=1),
        raw("SENDMSG_ZC", fd=12, ioprio=4, addr=0x400),
        raw("SEND_ZC", fd=9, addr=0x100, len=8),
        raw("SEND_ZC", fd=4, addr=0x100, len=8),
        raw("SEND_ZC", fd=15, addr=0x100, len=8),
        submit(), enter(1, 3)]),
    "netzc-poll-first": (DEFER, [
        sqe("SEND_ZC", fd=12, ioprio=1, addr=0x100, len=64),
        sqe("SENDMSG_ZC", fd=12, ioprio=1, addr=0x400),
        sqe("SEND_ZC", fd=3, flags=ASYNC, addr=0x100, len=64),
        sqe("SEND_ZC", fd=13, flags=LINK, addr=0x100, len=64),
        sqe("SEND_ZC", fd=9, addr=0x100, len=64), submit(),
        enter(1, 3)]),
    "raw-splice-prep": (PLAIN, [
        raw("SPLICE", fd=1, fidx=0, len=8, rwf=0x40),
        raw("TEE", fd=1, fidx=0, len=8, addr=1),
        raw("TEE", fd=1, fidx=0, len=8, off=1),
        raw("TEE", fd=1, fidx=0, len=8, rwf=0x40),
        sqe("SPLICE", fd=1, fidx=9, len=8, off=NEG | 1, addr=NEG | 1),
        sqe("SPLICE", fd=9, fidx=0, len=8),
        sqe("SPLICE", fd=4, fidx=4, len=8),
        sqe("SPLICE", fd=1, fidx=4, len=8, addr=0, off=NEG | 1),
        sqe("SPLICE", fd=1, fidx=7, len=8),
        sqe("TEE", fd=4, fidx=1, len=8), sqe("TEE", fd=0, fidx=9, len=8),
        sqe("TEE", fd=1, fidx=0, len=0),
        sqe("SPLICE", fd=1, fidx=0, len=0), submit(), enter(1, 3)]),
    "splice-fixed-async": (FILES, [
        sqe("WRITE", fd=1, addr=0x100, len=300), submit(),
        sqe("SPLICE", fd=3, flags=FIXED, fidx=0, rwf=0x80000000, len=40,
            addr=NEG | 1, off=NEG | 1),
        sqe("TEE", fd=1, flags=FIXED, fidx=0, rwf=0x80000000, len=10),
        sqe("SPLICE", fd=15, flags=ASYNC, fidx=0, len=40,
            addr=NEG | 1, off=NEG | 1),
        sqe("SPLICE", fd=1, fidx=0, len=1000, rwf=2, addr=NEG | 1,
            off=NEG | 1),
        sqe("SPLICE", fd=1, fidx=0, flags=FIXED, rwf=0x80000000 | 1,
            len=10, addr=NEG | 1, off=NEG | 1),
        submit(), enter(1, 3)]),
    "raw-pollremove": (PLAIN, [
        sqe("POLL_ADD", fd=0, rwf=1), sqe("POLL_ADD", fd=2, len=1, rwf=1),
        sqe("POLL_ADD", fd=13, rwf=1), submit(),
        raw("POLL_REMOVE", addr=1, buf=1), raw("POLL_REMOVE", addr=1,
        fidx=1), raw("POLL_REMOVE", addr=1, len=8),
        raw("POLL_REMOVE", addr=1, len=1), raw("POLL_REMOVE", addr=1,
        off=5), raw("POLL_REMOVE", addr=1, rwf=1),
        sqe("POLL_REMOVE", addr=1, len=2, rwf=4, off=NUL),
        sqe("POLL_REMOVE", addr=2, len=2 | 1, rwf=1, off=NUL),
        sqe("POLL_REMOVE", addr=3, len=4), submit(),
        sqe("WRITE", fd=3, addr=0x100, len=8), submit(), enter(1, 2),
        sqe("POLL_REMOVE", addr=2, len=2, rwf=4, off=NUL), submit(),
        sqe("POLL_REMOVE", addr=2, off=NUL),
        sqe("POLL_REMOVE", addr=9, off=NUL), submit(), enter(1, 2)]),
    "pollremove-mshot-queued": (DEFER, [
        sqe("POLL_ADD", fd=0, len=1, rwf=1), sqe("POLL_ADD", fd=2, len=1,
        rwf=1), submit(), sqe("WRITE", fd=1, addr=0x100, len=8),
        sqe("WRITE", fd=3, addr=0x100, len=8), submit(),
        sqe("POLL_REMOVE", addr=1, len=2, rwf=1 | 4, off=NUL),
        sqe("POLL_REMOVE", addr=2, off=NUL), submit(), enter(1, 2),
        sqe("POLL_REMOVE", addr=1, len=2 | 4, rwf=1),
        sqe("POLL_REMOVE", addr=1, flags=ASYNC, off=NUL), submit(),
        enter(1, 2)]),
    "raw-uring-cmd": (BIG | PBUF, [
        raw("URING_CMD", fd=12, off=1 << 32),
        raw("URING_CMD", fd=12, rwf=0x80),
        raw("URING_CMD", fd=12, rwf=1, flags=BSEL),
        raw("URING_CMD", fd=12, rwf=2),
        sqe("URING_CMD", fd=12, off=4),
        sqe("URING_CMD", fd=12, off=4, rwf=1),
        sqe("URING_CMD", fd=12, off=0, flags=BSEL),
        sqe("URING_CMD", fd=12, off=2, addr=1 | 7 << 32, addr3=0x100,
            fidx=4),
        sqe("URING_CMD", fd=12, off=2, addr=9 << 32, addr3=0x100, fidx=4),
        sqe("URING_CMD", fd=12, off=3, addr=9 << 32, addr3=0x100, fidx=4),
        sqe("URING_CMD", fd=12, off=3, addr=1 | 1 << 32, addr3=0x100,
            fidx=4),
        sqe("URING_CMD", fd=12, off=2, addr=7 << 32, addr3=2, fidx=4),
        sqe("URING_CMD", fd=9, off=0), sqe("URING_CMD", fd=4, off=0),
        sqe("URING_CMD", fd=15, off=3), submit(), enter(1, 3)]),
    "uring-cmd-async": (BIG, [
        sqe("URING_CMD", fd=12, flags=ASYNC, off=0),
        sqe("URING_CMD", fd=13, flags=ASYNC, off=4),
        sqe("URING_CMD", fd=12, flags=ASYNC, off=2, addr=7 << 32,
            addr3=0x100, fidx=4), sqe("URING_CMD", fd=12, off=1),
        sqe("SEND", fd=12, addr=0x100, len=64), sqe("URING_CMD", fd=12,
        off=4), submit(), enter(1, 3)]),
    # futex.c: the prep checks (raw), a mask past 32 bits, vectors with a
    # bad entry each, an entry on an unmapped word, an async wait.
    "raw-futex-prep": (PLAIN, [
        raw("FUTEX_WAIT", addr=0x1000, len=1),
        raw("FUTEX_WAIT", addr=0x1000, rwf=1),
        raw("FUTEX_WAIT", addr=0x1000, buf=1),
        raw("FUTEX_WAIT", addr=0x1000, fidx=1),
        sqe("FUTEX_WAIT", fd=128, addr=0x1000, addr3=1 << 33 | 1),
        sqe("FUTEX_WAKE", fd=128, addr=0x1000, addr3=1 << 33 | 1),
        sqe("FUTEX_WAKE", fd=128, addr=7 << 61, off=1),
        sqe("FUTEX_WAIT", fd=128, addr=7 << 61),
        sqe("FUTEX_WAIT", fd=128, addr=6 << 61),
        raw("FUTEX_WAITV", fd=1, addr=0x3000, len=1),
        raw("FUTEX_WAITV", addr=0x3000, len=1, buf=1),
        raw("FUTEX_WAITV", addr=0x3000, len=1, fidx=1),
        raw("FUTEX_WAITV", addr=0x3000, len=1, off=1),
        raw("FUTEX_WAITV", addr=0x3000, len=1, rwf=1),
        raw("FUTEX_WAITV", addr=0x3000, len=1, addr3=1),
        sqe("FUTEX_WAITV", addr=0x3000, len=0),
        sqe("FUTEX_WAITV", addr=7 << 61, len=2), submit(), enter(1, 3)]),
    "futex-waitv-bad": with_data(PLAIN, lambda d: [
        sqe("FUTEX_WAITV", addr=d, len=1),
        sqe("FUTEX_WAITV", addr=d + 24, len=1),
        sqe("FUTEX_WAITV", addr=d + 24, len=2), submit(), enter(1, 3)],
        waitv(0x1000, flags=0x42) + waitv(0x1000, val=1 << 40)),
    "futex-waitv-fault": with_data(DEFER, lambda d: [
        sqe("FUTEX_WAITV", addr=d, len=2), submit(),
        sqe("FUTEX_WAITV", flags=ASYNC, addr=d + 24, len=1), submit(),
        sqe("FUTEX_WAKE", fd=128, addr=0x2000, off=8), submit(),
        enter(1, 2)],
        waitv(0x2000) + waitv(7 << 61)),
    "futex-async-wake": (COOP, [
        sqe("FUTEX_WAIT", fd=128, flags=ASYNC, addr=0x1400), submit(),
        sqe("FUTEX_WAIT", fd=0, addr=0x1400, addr3=3), submit(),
        sqe("FUTEX_WAKE", fd=128, addr=0x1400, off=1, addr3=2), submit(),
        sqe("FUTEX_WAKE", fd=128, addr=0x1400, off=8), submit(),
        sqe("FUTEX_WAKE", fd=0, addr=0x1400, off=0), submit(),
        enter(1, 2)]),
    # cmdsock.c: SO_TIMESTAMPING set on the TCP socket (optval an int in
    # the arena), then TX_TIMESTAMP's multishot sees a send's stamps.
    "uring-cmd-timestamp": with_data(BIG, lambda d: [
        sqe("URING_CMD", fd=12, off=3, addr=37 << 32, addr3=d, fidx=4),
        sqe("URING_CMD", fd=12, off=4), submit(), enter(1, 1),
        sqe("SEND", fd=12, addr=0x100, len=64), submit(), enter(1, 1),
        sqe("SEND", fd=12, addr=0x100, len=64), submit(), enter(1, 2),
        sqe("RECV", fd=13, addr=0x2000, len=4096), submit(),
        enter(1, 1)],
        struct.pack("<I", 0x2 | 0x10 | 0x80 | 0x800)),
    # pollverify.c: on a DEFER_TASKRUN ring a READ parks lazily only on a
    # pipe whose kind is known: a short read (1 byte written, 64 asked)
    # learns it, then a READ of the empty pipe parks unwatched, and the
    # GETEVENTS (enter 1, 0) retries it (nw_poll_take_lazy), parks it
    # watched; a WRITE ends it.
    "poll-lazy-retry": (DEFER, [
        sqe("WRITE", fd=1, addr=0x100, len=1), submit(), enter(1, 1),
        sqe("READ", fd=0, addr=0x200, len=64), submit(), enter(1, 1),
        sqe("READ", fd=0, addr=0x200, len=64), submit(), enter(1, 0),
        sqe("WRITE", fd=1, addr=0x100, len=1), submit(), enter(1, 1)]),
    # The same lazy park, then an eventfd registered: the ring's readiness
    # is observed, what is lazy gets watched (nw_poll_watch_lazy).
    "poll-lazy-observed": (DEFER, [
        sqe("WRITE", fd=1, addr=0x100, len=1), submit(), enter(1, 1),
        sqe("READ", fd=0, addr=0x200, len=64), submit(), enter(1, 1),
        sqe("READ", fd=0, addr=0x200, len=64), submit(), reg(4),
        sqe("WRITE", fd=1, addr=0x100, len=1), submit(), enter(1, 1)]),
    # A READ parked watched for over NW_POLL_VERIFY_NS (50 ms: 80 waits
    # of at most 1 ms each): the harvest re-checks its watch
    # (nw_poll_verify); a WRITE ends it.
    "poll-verify": (PLAIN, [
        sqe("READ", fd=0, addr=0x200, len=64), submit()] +
        [enter(1, 1)] * 80 + [
        sqe("WRITE", fd=1, addr=0x100, len=1), submit(), enter(1, 1)]),
    # pollwatch.c: a POLL_ADD that parks on an fd not ready writes a new
    # watch generation (nw_poll_stamp's EPOLL_CTL_MOD): the empty pipe,
    # the empty socket, a multishot one; the ring's own fd parks without
    # one (a target); WRITE and SEND then end them.
    "poll-add-park-gen": (PLAIN, [
        sqe("POLL_ADD", fd=0, rwf=1), submit(), enter(1, 0),
        sqe("POLL_ADD", fd=2, rwf=1), submit(), enter(1, 0),
        sqe("POLL_ADD", fd=7, rwf=1), submit(), enter(1, 0),
        sqe("WRITE", fd=1, addr=0x100, len=1),
        sqe("SEND", fd=3, addr=0x100, len=1), submit(), enter(1, 3)]),
    "poll-add-mshot-gen": (DEFER, [
        sqe("POLL_ADD", fd=0, rwf=1, len=1), submit(), enter(1, 0),
        sqe("POLL_ADD", fd=5, rwf=1), submit(), enter(1, 0),
        sqe("WRITE", fd=1, addr=0x100, len=1), submit(), enter(1, 1),
        sqe("READ", fd=0, addr=0x200, len=64), submit(), enter(1, 1),
        sqe("WRITE", fd=1, addr=0x100, len=1), submit(), enter(1, 1)]),
    # The pipe's read end silently becomes a socket (a raw dup2 the engine
    # is not told of) while a POLL_ADD is parked on it: the next park's
    # EPOLL_CTL_MOD of the stale watch fails (nw_poll_stamp keeps the old
    # generation); the teardown cancels both.
    "poll-add-stale-watch": (PLAIN, [
        sqe("POLL_ADD", fd=0, rwf=1), submit(), enter(1, 0),
        reg(15, 0x70), sqe("POLL_ADD", fd=0, rwf=1), submit(), enter(1, 0),
        sqe("READ", fd=0, addr=0x200, len=8), submit(), enter(1, 0)]),
    # stats.c: a request of an opcode past the table (-EINVAL) is not
    # counted (nw_stats_done), one beside it is, twice.
    "stats-unknown-op": (PLAIN, [
        unknown(), sqe("NOP"), sqe("NOP"), submit(), enter(1, 3)]),
    # A multishot POLL_ADD on a pipe found ready: parked without a new
    # generation (its first event is queued), then one on the eventfd.
    "poll-add-mshot-ready": (PLAIN, [
        sqe("WRITE", fd=1, addr=0x100, len=1), submit(), enter(1, 1),
        sqe("POLL_ADD", fd=0, rwf=1, len=1), submit(), enter(1, 1),
        sqe("POLL_ADD", fd=5, rwf=4, len=1), submit(), enter(1, 1)]),
    # rwcheck.c: RWF_NOWAIT by the file's kind (rw_nowait_kind): f0 on
    # the scratch directory's filesystem read and written, the directory,
    # the epoll fd, the ring, the eventfd read and written, /dev/null, the
    # pipe, a socket, and the pipe's write end read (its mode: -EBADF).
    "rwf-nowait-kinds": (PLAIN, [
        sqe("READ", fd=4, addr=0x200, len=16, rwf=8),
        sqe("WRITE", fd=4, addr=0x100, len=16, rwf=8),
        sqe("READ", fd=8, addr=0x200, len=16, rwf=8),
        sqe("READ", fd=6, addr=0x200, len=16, rwf=8),
        sqe("READ", fd=7, addr=0x200, len=16, rwf=8), submit(),
        enter(1, 5),
        sqe("WRITE", fd=5, addr=0x100, len=8, rwf=8),
        sqe("READ", fd=5, addr=0x200, len=8, rwf=8),
        sqe("READ", fd=15, addr=0x200, len=16, rwf=8),
        sqe("WRITE", fd=1, addr=0x100, len=4, rwf=8),
        sqe("READ", fd=0, addr=0x200, len=4, rwf=8),
        sqe("READ", fd=2, addr=0x200, len=4, rwf=8),
        sqe("READ", fd=1, addr=0x200, len=4, rwf=8), submit(),
        enter(1, 7)]),
    # The flag checks after NOWAIT, raw (untidied) to keep the bits past
    # APPEND: an unknown bit, APPEND with NOAPPEND, ATOMIC on a read, a
    # buffered write and a pipe, DONTCACHE on f0 and a pipe, HIPRI on a
    # ring without IOPOLL; then the ioprio classes (NONE with a level, RT,
    # BE, past IDLE).
    "rwf-flag-checks": (PLAIN, [
        raw("WRITE", fd=4, addr=0x100, len=8, rwf=0x200),
        raw("WRITE", fd=4, addr=0x100, len=8, rwf=0x30),
        raw("READ", fd=4, addr=0x200, len=8, rwf=0x40),
        raw("WRITE", fd=4, addr=0x100, len=8, rwf=0x40),
        raw("WRITE", fd=1, addr=0x100, len=8, rwf=0x40), submit(),
        enter(1, 5),
        raw("READ", fd=4, addr=0x200, len=8, rwf=0x80),
        raw("WRITE", fd=1, addr=0x100, len=8, rwf=0x80),
        raw("READ", fd=4, addr=0x200, len=8, rwf=0x1),
        raw("READ", fd=4, addr=0x200, len=8, rwf=0x88),
        raw("READ", fd=4, addr=0x200, len=8, ioprio=1),
        raw("READ", fd=4, addr=0x200, len=8, ioprio=0x2000),
        raw("READ", fd=4, addr=0x200, len=8, ioprio=0x4007),
        raw("READ", fd=4, addr=0x200, len=8, ioprio=0x8000), submit(),
        enter(1, 8)]),
    # net-int.h: a RECV with POLL_FIRST on what is no socket is armed
    # when epoll may take it (nw_net_arm_nonsock): f0, the directory,
    # /dev/null; the pipe is polled as any.
    "recv-pollfirst-nonsock": (PLAIN, [
        sqe("RECV", fd=4, addr=0x200, len=8, ioprio=1),
        sqe("RECV", fd=8, addr=0x200, len=8, ioprio=1),
        sqe("RECV", fd=15, addr=0x200, len=8, ioprio=1),
        sqe("RECV", fd=0, addr=0x200, len=8, ioprio=1), submit(),
        enter(1, 3),
        sqe("WRITE", fd=1, addr=0x100, len=1), submit(), enter(1, 1)]),
    # ACCEPT with POLL_FIRST on the same: f0, the directory, /dev/null,
    # the pipe (not armed).
    "accept-pollfirst-nonsock": (PLAIN, [
        sqe("ACCEPT", fd=4, ioprio=4), sqe("ACCEPT", fd=8, ioprio=4),
        sqe("ACCEPT", fd=15, ioprio=4), sqe("ACCEPT", fd=0, ioprio=4),
        submit(), enter(1, 3),
        sqe("WRITE", fd=1, addr=0x100, len=1), submit(), enter(1, 1)]),

}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus", "sqe")
    for name, (byte0, recs) in SEEDS.items():
        with open(os.path.join(out, "gen-" + name), "wb") as f:
            f.write(bytes([byte0]) + b"".join(recs))
    print("wrote %d seeds to %s" % (len(SEEDS), out))


if __name__ == "__main__":
    main()
