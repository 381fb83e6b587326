# SPDX-License-Identifier: GPL-2.0
# gdb -q -batch -x cfi-oracle.py --args PROGRAM ARGS...: the oracle of
# cfi-tests. At each of the first CFI_STOPS entries to openat, it writes
# into CFI_OUT what a deferred unwind would have at that kernel entry:
# N.regs (the 17 registers in DWARF's order), N.stack (CFI_COPY bytes of
# the stack from rsp, fewer at the stack's top), N.maps (/proc/PID/maps),
# and what gdb itself unwinds there, with the binaries' CFI: N.gdb, one
# PC per frame, innermost first, inlined and tail calls left out.
import os

import gdb

out = os.environ["CFI_OUT"]
stops = int(os.environ.get("CFI_STOPS", "5"))
copy = int(os.environ.get("CFI_COPY", "65536"))
regs = ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
        "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"]


def stack_end(pid, sp):
    with open("/proc/%d/maps" % pid) as maps:
        for line in maps:
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            if start <= sp < end:
                return end
    raise gdb.GdbError("rsp %#x is in no mapping" % sp)


# gdb goes on past the outermost frame of some stacks (the loader's), into
# words that are no return address: the oracle ends where code ends
def in_code(maps, pc):
    for line in maps.splitlines():
        fields = line.split()
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if start <= pc < end:
            return "x" in fields[1]
    return False


gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set backtrace past-main on")
gdb.execute("set startup-with-shell off")
gdb.execute("catch syscall openat")
gdb.execute("run", to_string=True)
n = entry = 0
while n < stops:
    inferior = gdb.selected_inferior()
    if not inferior.pid or not inferior.threads():
        break
    entry ^= 1
    # catch syscall stops at the entry and again at the return
    if entry:
        frame = gdb.newest_frame()
        values = [int(frame.read_register(r)) & (2**64 - 1) for r in regs]
        sp = values[7]
        size = min(copy, stack_end(inferior.pid, sp) - sp)
        base = os.path.join(out, str(n))
        with open(base + ".regs", "w") as f:
            f.write(" ".join("%x" % v for v in values) + "\n")
        with open(base + ".stack", "wb") as f:
            f.write(bytes(inferior.read_memory(sp, size)))
        with open("/proc/%d/maps" % inferior.pid) as src:
            maps = src.read()
        with open(base + ".maps", "w") as dst:
            dst.write(maps)
        pcs = []
        while frame is not None and in_code(maps, frame.pc()):
            # Inlined calls and tail calls (from DWARF's call sites) are
            # frames to gdb, not on the stack
            if frame.type() not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
                pcs.append(frame.pc())
            frame = frame.older()
        with open(base + ".gdb", "w") as f:
            f.write("".join("%#x\n" % pc for pc in pcs))
        n += 1
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
gdb.execute("kill", to_string=True)
