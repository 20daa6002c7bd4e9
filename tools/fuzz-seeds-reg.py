#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the seed corpus of test/fuzz/reg-fuzz.c (test/fuzz/corpus/reg/):
# ring setups (a 12-byte header: flag bits from setup_bits[], entries,
# SQPOLL's idle and cpu, wq_fd, NO_MMAP's memory) and streams of 8-byte
# records (a kind, 7 arguments; see the harness's header comment) that
# reach each register opcode and then use what it registered. Small by
# design: the fuzzer grows its own work corpus from these.
import os, sys

root = sys.argv[1] if len(sys.argv) > 1 else "test/fuzz/corpus/reg"
os.makedirs(root, exist_ok=True)

# setup_bits[]: h0 bit i, then h1 bit i.
IOPOLL, SQPOLL, SQ_AFF, CQSIZE, CLAMP, ATTACH_WQ, R_DISABLED, SUBMIT_ALL = (
    1 << i for i in range(8))
COOP, TASKRUN_FLAG, SQE128, CQE32, SINGLE_ISSUER, DEFER, NO_MMAP, NO_SQARRAY = (
    1 << (8 + i) for i in range(8))
# h2's bits
FD_ONLY, CQE_MIXED, BAD_FLAG, RESV, APART, PEER_SQPOLL = (1 << i for i in range(6))


def header(flags=0, h2=0, sq=3, cq=4, idle=1, cpu=0, wq=1, resv=0):
    return bytes([flags & 0xff, flags >> 8, h2, sq, cq, idle, cpu, wq, resv,
                  0, 0, 0])


def rec(kind, *args):
    a = list(args) + [0] * (7 - len(args))
    return bytes([kind] + a)


def reg(sel, *args, via_index=False, alt=False):
    return rec(0, sel + (18 if via_index else 0) + (36 if alt else 0), *args)


def sqe(op, flags=0, fd=0, addr=0, off=0, buf=0, ln=0):
    return rec(5, op, flags, fd, addr, off, buf, ln)


SUBMIT = rec(9)
WAIT = rec(10, 1, 1, 3)  # GETEVENTS, min_complete 1, 750 us

# What the SQEs use: files (all slots, tags), two buffers (tags), a
# provided-buffer ring of 8 with 4 buffers in group 0, a personality.
FILES = reg(0, 16, 0xff, 0xff, 2)
BUFS = reg(2, 2, 0x01, 0x11, 0x21, 0x31, 2)
PBUF = reg(4, 0, 3, 0, 4, 0x10)
PERS = reg(10, 3, 0)
USE = (sqe(1, 0, 4, 0x00, 0, 0, 16)      # READ_FIXED from the file
       + sqe(2, 0, 1, 0x10, 0x80, 1, 4)  # WRITE_FIXED to the pipe
       + sqe(5, 0, 1, 0x20, 0x80, 0, 4)  # WRITE to the pipe
       + sqe(3, 0x20, 0, 0, 0x80, 0, 0)  # READ, a provided buffer
       + sqe(5, 0, 3, 0x30, 0, 0, 4)     # WRITE to the socket
       + sqe(4, 0x20, 2, 0, 0x02, 0, 0)  # RECV multishot, provided
       + sqe(3, 0x01, 4, 0x40, 0, 0xc0, 8)  # fixed file, personality
       + sqe(0, 0x01, 4, 0, 0x06)        # NOP on a fixed file
       + sqe(0, 0, 0, 0, 0x08, 1)        # NOP on a fixed buffer
       + sqe(7, 0, 4, 0x50, 0, 0, 4)     # READV_FIXED
       + sqe(6, 0x20, 0, 0, 0x80)        # READ_MULTISHOT, provided
       + SUBMIT + WAIT + WAIT)
ALL = FILES + BUFS + PBUF + PERS + USE

seeds = {}
setups = {
    "plain": header(),
    "sqpoll": header(SQPOLL, idle=1),
    "sqpoll-aff": header(SQPOLL | SQ_AFF, cpu=0),
    "sqpoll-attach": header(SQPOLL | ATTACH_WQ, PEER_SQPOLL, wq=0),
    "attach": header(ATTACH_WQ, wq=0),
    "defer": header(SINGLE_ISSUER | DEFER),
    "coop": header(COOP | TASKRUN_FLAG | SUBMIT_ALL),
    "big": header(SQE128 | CQE32 | CQSIZE, cq=5),
    "mixed": header(CQSIZE, CQE_MIXED, cq=4),
    "nosqarray": header(NO_SQARRAY),
    "apart": header(0, APART),
    "nommap": header(NO_MMAP),
    "nommap-fdonly": header(NO_MMAP, FD_ONLY),
    "iopoll": header(IOPOLL),
}
for name, h in setups.items():
    seeds[f"use-{name}"] = h + ALL

# Setups the engine refuses, each its own errno path (setup.c, ringmem.c).
seeds["bad-nommap-unaligned"] = header(NO_MMAP, 1 << 6) + FILES
seeds["bad-nommap-onepage"] = header(NO_MMAP, 2 << 6, sq=7, cq=7) + FILES
seeds["bad-nommap-nosqes"] = header(NO_MMAP, 3 << 6) + FILES
seeds["bad-flag"] = header(0, BAD_FLAG)
seeds["bad-resv"] = header(0, RESV, resv=1)
seeds["bad-entries0"] = header(0, sq=0x40)
seeds["bad-huge-clamp"] = header(CQSIZE | CLAMP, sq=0x83, cq=0x83) + USE
seeds["bad-huge"] = header(CQSIZE, sq=0x80, cq=0x81)
seeds["bad-cpu"] = header(SQPOLL | SQ_AFF, cpu=3)
seeds["bad-wq"] = header(ATTACH_WQ, wq=2)
seeds["bad-defer"] = header(DEFER)
seeds["bad-fdonly"] = header(0, FD_ONLY)
seeds["bad-cq-small"] = header(CQSIZE, sq=4, cq=0x41)

# Files: sparse tables, updates with tags (their CQEs), the allocation
# range and FILE_INDEX_ALLOC, unregister.
seeds["files-sparse"] = header() + reg(0, 0, 0, 0, 4, 8) + reg(
    1, 3, 0, 0, 4, 1) + reg(1, 0xff, 1, 0, 4, 3) + reg(
        10, 0, 2, 6) + reg(1, 0xff, 0, 0, 0, 1) + sqe(
            0, 0x01, 3, 0, 0x06) + SUBMIT + WAIT + reg(1, 0, 1, alt=True)
seeds["files-big-sparse"] = header() + reg(0, 0, 0, 0, 0x0c, 3)
seeds["files-update"] = header(SQPOLL) + FILES + reg(1, 2, 3, 0x0c, 5, 1) + \
    reg(1, 4, 0, 0, 6, 2) + reg(1, 40, 1, 0, 1, 4) + reg(
        1, 1, 0, 0, 1, 8) + USE + reg(1, 1, alt=True)
seeds["files-plain"] = header() + reg(0, 5, 0x33, 0, 1) + reg(
    0, 5, 0x33, 0, 1) + reg(0, 0, 0, 0, 0x10, 0, 1) + reg(1, 1, alt=True) + \
    reg(1, 1, alt=True)
seeds["files-alloc-range"] = header() + reg(0, 0, 0, 0, 4, 8) + reg(
    10, 0, 4, 8) + reg(10, 0, 30, 8) + reg(10, 0, 0, 0, 2) + reg(
        10, 0, 0, 0, 1) + reg(1, 0xff, 3, 0, 1, 1)

# Buffers: sparse, update with tags while a READ_FIXED is in flight,
# unregister, odd iovecs (short, NULL, huge).
seeds["bufs-sparse-update"] = header() + reg(2, 8, 0, 0, 0, 0, 4) + reg(
    3, 1, 0x01, 0x12, 0, 0, 5) + sqe(1, 0, 0, 0x00, 0x80, 1, 8) + reg(
        3, 1, 0x11, 0x01, 0, 0, 4) + SUBMIT + WAIT + reg(1, 0, alt=True)
seeds["bufs-odd"] = header() + reg(2, 4, 0x05, 0x08, 0x0f, 0x42, 1) + reg(
    2, 4, 0x05, 0x09, 0x0e, 0x43, 0) + reg(2, 0, 0, 0, 0, 0, 0x0c) + reg(
        3, 40, 1, 1, 1, 1, 0)
seeds["bufs-inflight-unreg"] = header(SQPOLL) + BUFS + sqe(
    1, 0, 0, 0, 0x80, 0, 16) + SUBMIT + reg(1, 0, alt=True) + WAIT
seeds["bufs-clone"] = header(0, PEER_SQPOLL) + reg(13, 1, 0, 0, 0, 1) + reg(
    13, 1, 0, 0, 0, 1) + reg(13, 3, 0, 0, 0, 1) + reg(
        13, 0, 2) + reg(13, 9) + sqe(1, 0, 4, 0, 0, 0, 16) + SUBMIT + WAIT

# Provided-buffer rings: user memory, unaligned, none, the engine's
# (IOU_PBUF_RING_MMAP, mapped), incremental, status, unregister.
seeds["pbuf-user"] = header() + PBUF + reg(5, 0, 0) + reg(
    4, 0, 3) + reg(4, 1, 0x85) + reg(4, 2, 3, 4) + reg(4, 3, 3, 8) + reg(
        4, 0x80, 3) + USE + reg(5, 0, 1) + reg(5, 0, 1) + reg(5, 9, 0)
seeds["pbuf-mmap"] = header() + reg(4, 1, 4, 1, 6, 0x20) + rec(
    12, 3, 2, 0, 1) + sqe(3, 0x20, 0, 0, 0x80, 1, 0) + sqe(
        5, 0, 1, 0x10, 0x80, 0, 4) + SUBMIT + WAIT + reg(5, 1, 0) + reg(
            5, 1, 2) + reg(5, 1, 1) + rec(11, 4, 0, 1, 0, 1)
seeds["pbuf-inc"] = header(SINGLE_ISSUER | DEFER) + reg(4, 2, 3, 2, 4) + sqe(
    5, 0, 3, 0x30, 0, 0, 8) + sqe(4, 0x20, 2, 0, 0, 2, 0) + SUBMIT + WAIT + \
    reg(5, 2, 0) + reg(4, 3, 2, 3)
seeds["pbuf-nommap"] = header(NO_MMAP) + reg(4, 1, 4, 1, 6) + rec(
    11, 4, 0, 1, 0, 1) + rec(11, 4, 0, 1, 2, 1)

# Personalities, restrictions on a disabled ring, ENABLE_RINGS.
seeds["personality"] = header() + PERS + reg(10, 3, 1) + reg(10, 4, 0) + reg(
    10, 4, 9, 1) + sqe(0, 0, 0, 0, 0, 0xc8) + sqe(0, 0, 0, 0, 0, 0x83) + \
    SUBMIT + WAIT
seeds["restrict"] = header(R_DISABLED) + reg(6, 3, 1 + 8 * 9, 2, 0x18) + sqe(
    0) + rec(9) + reg(7) + sqe(0) + sqe(5, 0, 1, 0, 0x80, 0, 1) + SUBMIT + \
    WAIT + reg(6, 1) + reg(9, 0xff, 1, 0)
seeds["restrict-required"] = header(R_DISABLED | SINGLE_ISSUER) + reg(
    6, 2, 3) + reg(7, 1) + reg(7) + sqe(0, 0x10) + sqe(0) + SUBMIT + WAIT
seeds["restrict-bad"] = header(R_DISABLED) + reg(6, 2, 4, 0, 0, 1) + reg(
    6, 1) + reg(6, 1) + reg(7) + reg(7)

# The eventfds, probe, io-wq's affinity and workers, clock, NAPI, query.
seeds["eventfd"] = header() + reg(7, 1, alt=True) + reg(7, 1, alt=True) + \
    sqe(0) + SUBMIT + reg(7, 2, alt=True) + reg(7, 5, alt=True) + reg(
        7, 8, 5, alt=True) + reg(7, 0, 2, alt=True)
seeds["probe"] = header() + reg(10, 5, 0) + reg(10, 5, 64) + reg(
    10, 5, 255) + reg(10, 5, 8, 1, 3)
seeds["iowq"] = header() + reg(8, 0, 0xff, 0, 8) + reg(8, 0, 1, 0, 16) + reg(
    8, 0, 0, 0, 0) + reg(8, 1) + reg(8, 1, 0, 0, 1) + reg(8, 2, 2, 3) + reg(
        8, 2, 0, 0) + reg(8, 2, 0, 0, 1) + reg(8, 3, 1, 1, 2) + sqe(
            5, 0x04, 4, 0, 0, 0, 4) + SUBMIT + WAIT
seeds["iowq-sqpoll"] = header(SQPOLL) + reg(8, 0, 0x01, 0, 8) + reg(
    8, 2, 1, 1) + reg(8, 1)
seeds["clock"] = header() + reg(10, 1, 1) + rec(10, 1, 4, 1) + reg(
    10, 1, 7) + rec(10, 1, 4, 1) + reg(10, 1, 0) + reg(10, 1, 1, 1)
seeds["napi"] = header() + reg(10, 2, 50, 1, 0) + reg(10, 2, 0, 2, 1) + reg(
    10, 2, 0, 4, 2) + reg(10, 2, 0, 0, 0, 2) + reg(10, 2, 0, 0, 0, 1) + reg(
        10, 2, 0, 0, 0, 4)
seeds["query"] = header() + reg(14, 0, 64) + reg(14, 1, 64, 1, 2) + reg(
    14, 2, 0, 8) + reg(14, 0, 64, 2) + reg(14, 3, 255, 4, 0, 0x10, 1)

# Ring fds: register, enter and register through the index, unregister.
seeds["ringfds"] = header() + reg(9, 0xff, 1) + reg(9, 0x32, 2) + reg(
    9, 0x44, 2, 1, 0) + reg(10, 5, 8, via_index=True) + sqe(0) + rec(
        10, 1, 0x21, 2) + reg(9, 0, 0x81, 0, 0, 0, 0) + reg(
            9, 0, 2, 0, 0, 1) + reg(9, 0xff, 0x82, 0, 0, 0, 1)
seeds["ringfds-defer"] = header(SINGLE_ISSUER | DEFER) + reg(9, 0xff, 1) + \
    sqe(0) + rec(10, 1, 0x21) + rec(10, 1, 0x61) + rec(10, 0x80, 0x20)

# SYNC_CANCEL of requests that wait, by user_data, fd, op, any.
seeds["sync-cancel"] = header() + sqe(3, 0, 0, 0, 0x80, 0, 4) + sqe(
    4, 0, 2, 0, 0, 0, 4) + SUBMIT + reg(11, 0, 1, 0, 0, 1) + reg(
        11, 0x02, 0, 1, 2, 1) + reg(11, 0x08, 0, 0, 0, 1) + reg(
            11, 0x20, 0, 2, 0, 1, 22) + reg(11, 0x06, 0, 4) + reg(
                11, 0x04, 0, 0, 0, 2) + WAIT
seeds["sync-cancel-fixed"] = header(SQPOLL) + FILES + sqe(
    3, 0x01, 0, 0, 0x80, 0, 4) + SUBMIT + reg(11, 0x12, 0, 0, 0, 1) + reg(
        11, 0x12, 0, 1, 0, 1) + WAIT

# RESIZE_RINGS: a DEFER_TASKRUN ring grows and shrinks, with CQEs pending.
seeds["resize"] = header(SINGLE_ISSUER | DEFER) + sqe(0) + sqe(0) + SUBMIT + \
    reg(12, 4, 5, 1) + sqe(0) + SUBMIT + WAIT + reg(12, 1, 1, 1) + reg(
        12, 0x80, 0x80, 2) + reg(12, 3, 3, 8) + reg(12, 3, 3, 4) + reg(
            12, 2, 2) + sqe(0) + SUBMIT + WAIT
seeds["resize-plain"] = header() + reg(12, 4, 5, 1)
seeds["resize-nommap"] = header(NO_MMAP | SINGLE_ISSUER | DEFER) + reg(
    12, 4, 5, 1)

# Every opcode once with an argument in the arena, at its end, and with
# an unknown flag bit.
for base in range(0, 40, 8):
    recs = b"".join(reg(15, op, 1, 0x10, 0x20, 1) + reg(15, op, 2, 0, 8, 2) +
                    reg(15, op, 4 | 1, 0, 0, 3)
                    for op in range(base, base + 8))
    seeds[f"raw-{base:02d}"] = header() + recs

# mmap of each offset, the hooks, enter flags, and SQEs from fz_sanitize.
seeds["mmap"] = header() + b"".join(
    rec(12, o, l, p) for o in range(4) for l, p in ((1, 0), (0x81, 1),
                                                    (2, 2), (1, 4), (1, 8)))
seeds["mmap-single"] = header(SQE128) + rec(12, 0, 4) + rec(12, 1, 4) + rec(
    12, 2, 7)
seeds["hooks"] = header() + b"".join(
    rec(11, c, s, x, 0, v) for c in range(7) for s, x in ((7, 1), (0, 0), (1, 3))
    for v in (0, 1))
seeds["hooks-sqpoll"] = header(SQPOLL) + sqe(3, 0, 0, 0, 0x80, 0, 4) + \
    SUBMIT + b"".join(rec(11, c, 1, 1, 3, 1) for c in range(7)) + WAIT
seeds["enter-flags"] = header(SQPOLL) + b"".join(
    rec(10, f, m, 1, 1) for f in (1, 2, 4, 5, 0x81) for m in (0, 9, 0x11))
raw = bytes([0, 0, 0, 0, 0xcc, 0, 0, 0]) + bytes(56)  # NOP, fd 0xcc
seeds["raw-sqe"] = header() + FILES + rec(13) + raw + rec(
    13) + bytes([22, 1]) + bytes(62) + SUBMIT + WAIT

# The resource SQEs: PROVIDE/REMOVE_BUFFERS and a read that takes one,
# FILES_UPDATE (at an offset and allocated), FIXED_FD_INSTALL, and a
# POLL_ADD of the ring's own fd (single and multishot) that a NOP wakes.
OPS = (sqe(8, 0, 4, 0x80, 0, 1, 8) + sqe(5, 0, 1, 0x20, 0x80, 0, 2)
       + sqe(3, 0x20, 0, 0, 0x80, 1, 0) + sqe(9, 0, 2, 0, 0, 1)
       + sqe(9, 0, 8, 0, 0, 5) + sqe(8, 0, 2, 0x80, 3, 2, 0x80)
       + reg(0, 0, 0, 0, 4, 8) + sqe(10, 0, 0, 0, 2, 0, 3)
       + sqe(10, 0, 4, 0, 0xff, 0, 2) + sqe(11, 0, 2, 0, 0)
       + sqe(11, 0, 3, 0, 1) + sqe(11, 0, 4, 0, 2) + SUBMIT + WAIT
       + sqe(12, 0, 0, 0, 0) + sqe(12, 0, 0, 0, 3) + SUBMIT + sqe(0)
       + SUBMIT + WAIT + WAIT)
seeds["ops-rsrc"] = header() + OPS
# EPOLL_CTL on the environment's epoll set (add the pipe, mod, del, bad),
# then EPOLL_WAIT that finds it ready, and one that parks till a write.
seeds["ops-epoll"] = header() + sqe(13, 0, 0, 0, 0, 0, 1) + sqe(
    5, 0, 1, 0, 0x80, 0, 1) + sqe(14, 0, 0, 0, 0, 0, 4) + sqe(
        13, 0, 0, 0, 1, 0, 3) + sqe(13, 0, 0, 0, 0, 0, 2) + sqe(
            13, 0, 2, 0, 2, 4, 1) + SUBMIT + WAIT + sqe(
                13, 0, 2, 0, 0, 0, 1) + sqe(14, 0, 0, 0, 0, 0, 4) + SUBMIT + \
    sqe(5, 0, 3, 0, 0, 0, 1) + SUBMIT + WAIT + WAIT + sqe(14, 0, 4, 0, 2, 4, 1)
seeds["ops-rsrc-sqpoll"] = header(SQPOLL) + OPS
seeds["ops-rsrc-defer"] = header(SINGLE_ISSUER | DEFER) + OPS

# Buffers in memory pin.c looks at: read-only, shared anonymous, a shared
# file mapping, two mappings side by side, at an offset, too long.
seeds["bufs-pin"] = header() + b"".join(
    reg(2, 1, m, 0, 0, 0, 1) + reg(1, 0, alt=True)
    for m in (0x0c, 0x0d, 0x0e, 0x0f, 0x2f, 0x4d, 0x1d)) + reg(
        2, 4, 0x0d, 0x0f, 0x4d, 0x01, 1) + reg(3, 0, 0x0c, 0x0e, 0, 0, 1)
# A personality of other credentials (another egid, a group), used by a
# read that a worker runs (IOSQE_ASYNC): the worker switches and back.
seeds["personality-creds"] = header() + reg(10, 3, 1, 3, 2) + reg(
    10, 3, 2, 1, 5) + sqe(3, 0x10, 4, 0, 0, 0xc8, 8) + sqe(
        3, 0x10, 4, 0x10, 0, 0xd0, 8) + sqe(3, 0, 4, 0x20, 0, 0xc8, 8) + \
    SUBMIT + WAIT + WAIT + WAIT
seeds["personality-creds-sqpoll"] = header(SQPOLL) + reg(10, 3, 1, 1, 2) + \
    sqe(3, 0x10, 4, 0, 0, 0xc8, 8) + sqe(0, 0, 0, 0, 0, 0xc8) + SUBMIT + WAIT

# pin.c: buffers in a hole (a page below mmap_min_addr: -EFAULT), one
# that runs from the arena's last pages past its end, two buffers over
# the same pages
# (the second is inside the range the first was checked for).
seeds["bufs-pin-hole"] = header() + reg(2, 1, 0x19, 0, 0, 0, 1) + reg(
    2, 2, 0x0f, 0x1a, 0, 0, 0) + reg(3, 0, 0x19, 0, 0, 0, 1) + reg(
    2, 2, 0x01, 0x01, 0, 0, 1) + reg(1, 0, alt=True) + reg(
    2, 2, 0x0f, 0x0f, 0, 0, 1) + reg(1, 0, alt=True) + reg(
    2, 3, 0x0e, 0x0e, 0x0f, 0, 1) + reg(1, 0, alt=True) + reg(
        2, 1, 0xe3, 0, 0, 0, 0) + reg(3, 0, 0xf2, 0, 0, 0, 1)

# syscall.c: an enter that submits and waits for more CQEs than it can
# have at once (signals held from the start), enters with flags the ring
# does not have (SQ_WAIT, SQ_WAKEUP without SQPOLL, a registered-ring
# index that is none), a register through a bad registered-ring index,
# nowait.h's close notice and version.
seeds["enter-hold"] = header() + sqe(3, 0, 0, 0, 0x80, 0, 4) + rec(
    10, 1, 2, 1) + sqe(0) + sqe(0) + rec(10, 1, 3, 2, 1) + sqe(
        5, 0, 1, 0, 0x80, 0, 1) + rec(10, 1, 1, 0) + b"".join(
            rec(11, 6, 0, f) for f in (0x10, 0x04, 0x02, 0x0c)) + reg(
                15, 5, 4, 0, 0, 7) + reg(15, 5, 4, 0, 0, 0x0f)
seeds["api-misc"] = header() + b"".join(
    rec(11, 0, 0, x, y, 2) for x in range(3) for y in (0, 3)) + rec(
        11, 1, 0, 1, 0, 2) + rec(11, 1, 1, 0, 0, 2) + rec(11, 1, 0, 1, 0, 2)

# pressure.c: the verdict on the monotonic clock (now, 50 ms and 4 s
# ahead: a sample, the moving figure folded), from the shared page.
seeds["pressure"] = header() + b"".join(
    rec(11, 2, 0, x, 0, 2) for x in (0, 3, 0, 0xf0, 3, 0xff))

# An SQ_WAIT without SQ_WAKEUP on a full SQ (one entry) once the poller
# went idle (1 ms): nothing wakes it, in the kernel too, until a signal.
# A program wakes it when IORING_SQ_NEED_WAKEUP asks (liburing), and so
# does the harness now; before, this hung (the 600 s runs' 97 s timeout,
# which needed a loaded machine to pass the idle time).
seeds["sqpoll-sqwait-idle"] = header(SQPOLL, sq=0, idle=1) + WAIT * 8 + \
    sqe(0) + rec(10, 4) + WAIT

for name, data in seeds.items():
    with open(f"{root}/{name}", "wb") as f:
        f.write(data)
print(f"fuzz-seeds-reg: {len(seeds)} inputs in {root}")
