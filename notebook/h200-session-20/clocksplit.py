#!/usr/bin/env python3
# clocksplit.py FIDELITY_OUT... - one region per sample: each timed sample
# (raw/LABEL.txt: "i ev_ms wall_ms entry_ms") paired with its region's
# certificate line (raw/LABEL.certs, krex-victim --certs: the SM clock at
# the grant, at the end, the lowest, the nominal), and the samples' p50/p95
# split by the region's SM clock at the grant and by its lowest.  Alone's
# rows (no regions) printed beside for reference.  Notebook tool of session 20.
import glob, os, sys

def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q / 100.0 * len(v)))] if v else float("nan")

def samples(path):
    out = []
    for ln in open(path):
        t = ln.split()
        if len(t) >= 3:
            out.append((float(t[1]), float(t[2])))
    return out

def line(name, s):
    ev = [x[0] for x in s]
    wall = [x[1] for x in s]
    return "  %-34s n %5d  ev p50 %.4f p95 %.4f  wall p50 %.4f p95 %.4f" % (
        name, len(s), pct(ev, 50), pct(ev, 95), pct(wall, 50), pct(wall, 95))

for d in sys.argv[1:]:
    for raw in sorted(glob.glob(os.path.join(d, "raw", "*.txt"))):
        label = os.path.basename(raw)[:-4]
        s = samples(raw)
        certs = raw[:-4] + ".certs"
        print("%s: %s" % (d, label))
        print(line("all", s))
        if not label.endswith("_sample") or not os.path.exists(certs):
            continue
        c = [ln.split() for ln in open(certs)]
        c = [t for t in c if len(t) >= 15]
        if len(c) != len(s):
            print("  (%d samples, %d certificate lines with clocks: not paired)" % (len(s), len(c)))
            continue
        for key, col in (("at the grant", 11), ("lowest", 13)):
            groups = {}
            for (ev, wall), t in zip(s, c):
                groups.setdefault("%s/%s" % (t[col], t[14]), []).append((ev, wall))
            for k in sorted(groups):
                print(line("SM clock %s %s MHz" % (key, k), groups[k]))
