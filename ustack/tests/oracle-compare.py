#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
# oracle-compare.py DIR: the stacks of one program, as gdb unwound them
# (DIR/gdb/N.gdb and N.maps, from cfi-oracle.py) against those of
# `ustack report --offsets` (DIR/ustack.txt, DIR/fp.txt; DIR/dat.txt, of
# a trace-cmd recording, when it is there) and of
# `perf script --no-inline -F comm,event,ip,dso` (DIR/perf.txt), the k-th
# openat of each against gdb's k-th.  Frames are (file, offset) pairs, a
# caller's the offset of its return address, so that stripped files count.
# Prints, per method: stops, gdb's frames, frames found (gdb's frames
# that the stack has in the same order: their longest common
# subsequence), frames reported, frames wrong (reported, but not among
# those found), stacks whole (exactly gdb's).
import glob
import os
import re
import sys


def gdb_stacks(d):
    stacks = []
    files = glob.glob(os.path.join(d, "gdb", "*.gdb"))
    for g in sorted(files, key=lambda f: int(os.path.basename(f)[:-4])):
        maps = []
        with open(g[:-4] + ".maps") as f:
            for line in f:
                fields = line.split(None, 5)
                if len(fields) < 6:
                    continue
                start, end = (int(x, 16) for x in fields[0].split("-"))
                maps.append((start, end, int(fields[2], 16), fields[5].strip()))
        frames = []
        with open(g) as f:
            for line in f:
                pc = int(line, 16)
                for start, end, off, path in maps:
                    if start <= pc < end:
                        frames.append((path, pc - start + off))
                        break
                else:
                    frames.append(("?", pc))
        stacks.append(frames)
    return stacks


def ustack_stacks(path):
    """ustack report --offsets: an event line, then its frames"""
    stacks, cur = [], None
    frame = re.compile(r"^    <([0-9a-f]+)> \S+ (.*)$")
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if not line.startswith(" "):
                cur = [] if "sys_enter_openat" in line else None
                if cur is not None:
                    stacks.append(cur)
                continue
            if cur is None:
                continue
            m = frame.match(line)
            if m:
                cur.append((m.group(2), int(m.group(1), 16)))
            elif not line.startswith("    (no user stack"):
                cur.append(("?", line.strip()))
    return stacks


def perf_stacks(path):
    """perf script: a sample's head, then "ip (dso)" lines; a caller's ip
    is its return address minus one"""
    stacks, cur = [], None
    frame = re.compile(r"^\s+([0-9a-f]+) \((.*)\)$")
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                cur = None
                continue
            m = frame.match(line)
            if m and cur is not None:
                ip = int(m.group(1), 16) + (1 if cur else 0)
                cur.append((m.group(2), ip))
            elif not line[0].isspace():
                cur = [] if "sys_enter_openat" in line else None
                if cur is not None:
                    stacks.append(cur)
    return stacks


def common(a, b):
    """The longest common subsequence of two stacks: the frames of b
    found in order in a"""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def score(gdb, got):
    frames = found = reported = wrong = whole = 0
    for k, want in enumerate(gdb):
        have = got[k] if k < len(got) else []
        n = common(want, have)
        frames += len(want)
        found += n
        reported += len(have)
        wrong += len(have) - n
        whole += have == want
    return len(gdb), frames, found, reported, wrong, whole


def main():
    d = sys.argv[1]
    gdb = gdb_stacks(d)
    methods = (("copy", "ustack.txt", ustack_stacks), ("fp", "fp.txt", ustack_stacks),
               ("perf", "perf.txt", perf_stacks), ("dat", "dat.txt", ustack_stacks))
    for name, file, parse in methods:
        path = os.path.join(d, file)
        if name == "dat" and not os.path.exists(path):
            continue
        got = parse(path) if os.path.exists(path) else []
        print("%s nstops=%d gdb=%d found=%d reported=%d wrong=%d whole=%d got=%d"
              % ((name,) + score(gdb, got) + (len(got),)))


main()
