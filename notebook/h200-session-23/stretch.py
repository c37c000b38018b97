#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""stretch.py RAW_DIR PROBE [SIZE] - each batch region of fidelity.py's raw
files (krex-victim --host-split --stamps) against sysprobe.py's log, in bins
of 2 ms from the region's first sample (issue 18, session 23): where a
stretch of slow samples sits, and what the GPU's clocks, power and
temperature and each CPU did meanwhile.  Slow: wall time over the p95 of
alone's samples of the same size (the rounds pooled).  First, per run
(alone's and the batch regions' rounds): the medians of the event and wall
time and of the host's four calls of a sample, the wall p95, and the CPU the
run was busiest on.  A notebook tool."""
import glob
import os
import re
import statistics as st
import sys

BIN = 2.0


def raw(path):
    out = []
    for ln in open(path):
        t = ln.split()
        if len(t) < 9 or not t[-1].startswith("t="):
            continue
        out.append(dict(ev=float(t[1]) * 1000, wall=float(t[2]) * 1000,
                        rec0=float(t[4]), launch=float(t[5]), rec1=float(t[6]),
                        sync=float(t[7]), t=float(t[-1][2:])))
    return out


def probe(path):
    n, c = [], []
    for ln in open(path):
        t = ln.split()
        if t and t[0] == "n":
            n.append((float(t[1]), int(t[2]), int(t[3]), int(t[4]) / 1000.0, int(t[5]),
                      int(t[6], 16)))
        elif t and t[0] == "c":
            v = [int(x) for x in t[2:]]
            c.append((float(t[1]), v[0::3], v[1::3], v[2::3]))
    return n, c


def window(seq, t0, t1):
    return [x for x in seq if t0 <= x[0] < t1]


def cpu_delta(c, t0, t1):
    """Per CPU: busy, steal and irq jiffies between t0 and t1."""
    a = [x for x in c if x[0] <= t0]
    b = [x for x in c if x[0] >= t1]
    if not a or not b:
        return None
    a, b = a[-1], b[0]
    return ([y - x for x, y in zip(a[1], b[1])], [y - x for x, y in zip(a[2], b[2])],
            [y - x for x, y in zip(a[3], b[3])])


def med(xs):
    return st.median(xs) if xs else float("nan")


def q95(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(0.95 * len(xs)))] if xs else float("nan")


def runs(files, c):
    print("run ev_p50 wall_p50 wall_p95 rec0 launch rec1 sync (us, medians) busiest_cpu(jiffies)")
    for f in files:
        r = raw(f)
        if not r:
            continue
        cd = cpu_delta(c, r[0]["t"], r[-1]["t"])
        top = max(((v, i) for i, v in enumerate(cd[0])), default=(0, -1)) if cd else (0, -1)
        print("%s %.1f %.1f %.1f %.2f %.2f %.2f %.1f cpu%d(%d)" % (
            os.path.basename(f), med([x["ev"] for x in r]), med([x["wall"] for x in r]),
            q95([x["wall"] for x in r]), med([x["rec0"] for x in r]),
            med([x["launch"] for x in r]), med([x["rec1"] for x in r]),
            med([x["sync"] for x in r]), top[1], top[0]))


def main():
    d, pr = sys.argv[1], sys.argv[2]
    size = sys.argv[3] if len(sys.argv) > 3 else "0.1"
    alone = []
    afiles = sorted(glob.glob(os.path.join(d, "alone_none_%s_none_r*.txt" % size)),
                    key=lambda f: int(re.search(r"_r(\d+)\.txt$", f).group(1)))
    for f in afiles:
        alone += [x["wall"] for x in raw(f)]
    if not alone:
        print("stretch: no alone raw files with stamps in %s" % d)
        return 1
    alone.sort()
    lim = alone[int(0.95 * len(alone))]
    n, c = probe(pr)
    files = sorted(glob.glob(os.path.join(d, "krex_*_%s_batch_r*.txt" % size)),
                   key=lambda f: int(re.search(r"_r(\d+)\.txt$", f).group(1)))
    runs(afiles + files, c)
    print("alone: %d samples, wall p50 %.1f us, p95 %.1f us (slow: over it)" % (
        len(alone), alone[len(alone) // 2], lim))
    slow_bins, fast_bins = [], []
    for f in files:
        r = raw(f)
        if not r:
            continue
        t0 = r[0]["t"]
        nslow = sum(x["wall"] > lim for x in r)
        print("\n## %s: %d samples, %.1f ms, %d slow (%.1f %%)" % (
            os.path.basename(f), len(r), r[-1]["t"] - t0, nslow, 100.0 * nslow / len(r)))
        print("bin_ms n slow ev_us wall_us launch_us sync_us | sm mem W C reasons | "
              "busy CPUs (jiffies) steal irq")
        b = 0.0
        while t0 + b <= r[-1]["t"]:
            xs = [x for x in r if t0 + b <= x["t"] < t0 + b + BIN]
            nw = window(n, t0 + b, t0 + b + BIN)
            cd = cpu_delta(c, t0 + b, t0 + b + BIN)
            busy = ",".join("%d:%d" % (i, v) for i, v in enumerate(cd[0]) if v) if cd else "?"
            steal = sum(cd[1]) if cd else -1
            irq = sum(cd[2]) if cd else -1
            row = dict(slow=sum(x["wall"] > lim for x in xs), n=len(xs),
                       sm=med([x[1] for x in nw]), mem=med([x[2] for x in nw]),
                       w=med([x[3] for x in nw]), temp=med([x[4] for x in nw]),
                       ev=med([x["ev"] for x in xs]), wall=med([x["wall"] for x in xs]),
                       launch=med([x["launch"] for x in xs]), sync=med([x["sync"] for x in xs]),
                       steal=steal, irq=irq)
            print("%5.0f %3d %3d %6.1f %6.1f %5.1f %6.1f | %s %s %s %s %s | %s %d %d" % (
                b, row["n"], row["slow"], row["ev"], row["wall"], row["launch"], row["sync"],
                row["sm"], row["mem"], row["w"], row["temp"],
                ",".join(sorted({"%#x" % x[5] for x in nw})) or "-", busy, steal, irq))
            if row["n"] >= 5:
                (slow_bins if row["slow"] * 2 >= row["n"] else fast_bins).append(row)
            b += BIN
    print("\n## bins with half or more samples slow against the others")
    for name, bins in (("slow", slow_bins), ("fast", fast_bins)):
        if bins:
            print("%s: %d bins; medians: ev %.1f wall %.1f launch %.1f sync %.1f us, sm %s mem %s "
                  "power %s W temp %s C, steal %s irq %s" % (
                      name, len(bins), *(med([x[k] for x in bins]) for k in
                                         ("ev", "wall", "launch", "sync", "sm", "mem", "w",
                                          "temp", "steal", "irq"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
