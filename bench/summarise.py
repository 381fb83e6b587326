#!/usr/bin/env python3
"""Summarise bench/kernel-guest's runs.csv: per depth, events and mode, the
median and interquartile range of ns per call over the reps, bytes and
frames per call; then the figures of issue 10's targets.

    summarise.py RUN_DIR   (reads RUN_DIR/runs.csv; writes summary.csv,
                            targets.txt, and one plot-EVENTS.dat per mode)
"""
import csv
import statistics
import sys
from collections import defaultdict


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


def main(run):
    runs = defaultdict(list)
    with open(f"{run}/runs.csv") as f:
        for r in csv.DictReader(f):
            runs[(int(r["depth"]), int(r["events"]), r["mode"])].append(r)
    rows = {}
    for key, rs in sorted(runs.items()):
        q1, med, q3 = quartiles([float(r["ns_per_call"]) for r in rs])
        rows[key] = {
            "ns": med, "q1": q1, "q3": q3, "reps": len(rs),
            "bytes": statistics.median(float(r["bytes_per_call"]) for r in rs),
            # median_low: a count of frames that some rep recorded
            "frames": statistics.median_low(int(r["frames"]) for r in rs),
            "overruns": max(int(r["overruns"]) for r in rs),
        }

    def base_of(mode):
        return "perf-events" if mode.startswith("perf-") else "events"

    with open(f"{run}/summary.csv", "w") as f:
        w = csv.writer(f)
        w.writerow(["depth", "events", "mode", "reps", "ns_per_call", "ns_q1",
                    "ns_q3", "added_ns", "bytes_per_call", "frames",
                    "added_ns_per_frame", "added_bytes_per_frame", "overruns"])
        for (d, e, m), r in sorted(rows.items()):
            base = rows.get((d, e, base_of(m)))
            added = r["ns"] - base["ns"] if base and m != base_of(m) else None
            per_frame = added / r["frames"] if added is not None and r["frames"] else None
            bpf = ((r["bytes"] - base["bytes"]) / r["frames"]
                   if base and r["frames"] else None)
            r.update(added=added, per_frame=per_frame, bpf=bpf)
            fmt = lambda v: "" if v is None else f"{v:.1f}"
            w.writerow([d, e, m, r["reps"], fmt(r["ns"]), fmt(r["q1"]), fmt(r["q3"]),
                        fmt(added), fmt(r["bytes"]), r["frames"], fmt(per_frame),
                        fmt(bpf), r["overruns"]])

    for e in sorted({e for _, e, _ in rows}):
        for m in sorted({m for _, _, m in rows}):
            with open(f"{run}/plot-{e}-{m}.dat", "w") as f:
                for (d, e2, m2), r in sorted(rows.items()):
                    if e2 == e and m2 == m:
                        print(d, r["ns"], r["q1"], r["q3"], file=f)

    out = []

    def get(d, e, m, field):
        r = rows.get((d, e, m))
        return None if r is None else r.get(field)

    def ratio(a, b):
        return "n/a" if a is None or b is None or b <= 0 else f"{a / b:.2f}"

    def show(v, unit=""):
        return "n/a" if v is None else f"{v:.1f}{unit}"

    d, e = 36, 2
    dd = get(d, e, "deferred", "added")
    try:
        with open(f"{run}/clock") as f:
            clock = f.read().strip()
    except OSError:
        clock = "wall"
    if clock == "icount":
        out.append("clock: icount (QEMU -icount shift=0): each ns below is one "
                   "instruction run in the guest")
    else:
        out.append("clock: the host's (TCG): ns of wall-clock time, noisy")
    out.append(f"depth {d}, {e} events per entry (medians of "
               f"{get(d, e, 'deferred', 'reps')} reps):")
    for m in ("events", "immediate", "deferred", "perf-events", "perf-fp", "perf-fp-defer"):
        if (d, e, m) in rows:
            r = rows[(d, e, m)]
            out.append(f"  {m:14} {r['ns']:9.1f} ns/call (IQR {r['q1']:.1f}-{r['q3']:.1f})"
                       f"  added {show(r['added'], ' ns')}  {r['bytes']:.1f} B/call"
                       f"  {r['frames']} frames  overruns {r['overruns']}")
    out.append(f"T1  deferred added / perf fp,defer added: "
               f"{ratio(dd, get(d, e, 'perf-fp-defer', 'added'))} (goal <= 1); "
               f"/ perf fp added: {ratio(dd, get(d, e, 'perf-fp', 'added'))} (moonshot <= 1)")
    for dep in (36, 8):
        out.append(f"T1b depth {dep}: deferred ns per frame / immediate's: "
                   f"{show(get(dep, e, 'deferred', 'per_frame'))} / "
                   f"{show(get(dep, e, 'immediate', 'per_frame'))} = "
                   f"{ratio(get(dep, e, 'deferred', 'per_frame'), get(dep, e, 'immediate', 'per_frame'))}"
                   " (must be <= 1)")
    out.append(f"T2  deferred bytes per frame: {show(get(d, e, 'deferred', 'bpf'))} (must be <= 12); "
               f"bytes per call {show(get(d, e, 'deferred', 'bytes'))} against perf fp,defer's "
               f"{show(get(d, e, 'perf-fp-defer', 'bytes'))}")
    for c in sorted({int(m[5:]) for _, _, m in rows if m.startswith("copy-")}):
        for m in (f"copy-{c}", f"perf-dwarf-{c}"):
            if (d, e, m) in rows:
                r = rows[(d, e, m)]
                out.append(f"  {m:16} {r['ns']:9.1f} ns/call  added {show(r['added'], ' ns')}"
                           f"  {r['bytes']:.1f} B/call")
        out.append(f"T4  copy of {c} B added / perf dwarf,{c} added: "
                   f"{ratio(get(d, e, f'copy-{c}', 'added'), get(d, e, f'perf-dwarf-{c}', 'added'))}"
                   f" (goal < 1); bytes per call: "
                   f"{ratio(get(d, e, f'copy-{c}', 'bytes'), get(d, e, f'perf-dwarf-{c}', 'bytes'))}"
                   " (goal <= 1)")
    ev = [get(d, n, "events", "ns") for n in (1, 4)]
    de = [get(d, n, "deferred", "ns") for n in (1, 4)]
    if None not in ev + de:
        out.append(f"T3  1 -> 4 events: deferred adds {de[1] - de[0]:.1f} ns, events only "
                   f"{ev[1] - ev[0]:.1f} ns: {ratio(de[1] - de[0], ev[1] - ev[0])} (goal <= 2)")
    with open(f"{run}/targets.txt", "w") as f:
        print("\n".join(out), file=f)


if __name__ == "__main__":
    main(sys.argv[1])
