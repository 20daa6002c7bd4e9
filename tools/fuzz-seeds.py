#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the seed corpora of test/fuzz/ (make fuzz starts from them): per
# opcode, an SQE on a few of the environment's fds (slot numbers, see
# test/fuzz/fuzzenv.c), for the stream harness (three ring setups, with a
# submit and a wait) and the differential one. Small by design.
import os, struct, sys

root = sys.argv[1] if len(sys.argv) > 1 else "test/fuzz/corpus"

def sqe(op, fd=0, flags=0, off=0, addr=0x100, ln=16):
    # opcode flags ioprio fd off addr len op_flags user_data buf_index
    # personality splice_fd_in addr3 pad
    return struct.pack("<BBHiQQIIQHHiQQ", op, flags, 0, fd, off, addr, ln,
                       0, 0, 0, 0, 0, 0, 0)

os.makedirs(f"{root}/sqe", exist_ok=True)
os.makedirs(f"{root}/diff", exist_ok=True)
for op in range(49):
    setup = op % 3  # plain, SQPOLL, DEFER_TASKRUN in turn
    recs = b"".join(b"\x00" + sqe(op, fd) for fd in (0, 1, 4, 12))
    recs += b"\x05" + b"\x06\x01\x01"
    with open(f"{root}/sqe/op{op:02d}", "wb") as f:
        f.write(bytes([setup]) + recs)
    with open(f"{root}/diff/op{op:02d}", "wb") as f:
        f.write(bytes([0]) + sqe(op, (0, 1, 4, 12)[op % 4]))
