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

# The stream harness's extras: a second ring (setup bit 3) and MSG_RING to
# it (fd slot 7, bit 4), the ring registered (register 8) and entered
# through its index (enter flag IORING_ENTER_REGISTERED_RING), readiness
# watchers of the ring fd (register 9), each setup in turn.
for setup in range(8):
    recs = b"\x07\x08\x00"                       # REGISTER_RING_FDS
    recs += b"\x00" + sqe(40, 0x17, addr=0, ln=7)  # MSG_RING to the peer
    recs += b"\x00" + sqe(40, 0x07, addr=0, ln=8)  # MSG_RING to itself
    recs += b"\x06\x11\x01"                       # enter by index, wait
    recs += b"\x07\x09\x07" + b"\x07\x09\x02"     # pollfd watchers
    recs += b"\x00" + sqe(6, 7, addr=0, ln=0) + b"\x05"  # poll the ring fd
    with open(f"{root}/sqe/extra-setup{setup}", "wb") as f:
        f.write(bytes([8 | setup]) + recs)
