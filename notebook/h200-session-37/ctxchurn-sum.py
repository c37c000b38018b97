#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ctxchurn-sum.py OUT: ctxchurn-run.sh's runs pooled per tag, condition and
size: samples, contexts made a second during the timed samples, wall and
event p50 / p95 / p99 and the max, each against alone (none) of the same
tag and size in %, and the rounds' spread of alone's wall p95 (its standard
deviation, % of its mean)."""
import glob
import os
import re
import sys


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q / 100.0 * len(v)))] if v else float("nan")


def main():
    out = sys.argv[1]
    runs = {}
    for ln in open(os.path.join(out, "runs.txt")):
        m = re.search(r"label=(\S+)", ln)
        if not m:
            continue
        t = dict(re.findall(r"(\w+)=([0-9.]+)", ln))
        runs[m.group(1)] = t
    pool = {}
    for f in glob.glob(os.path.join(out, "raw", "*.txt")):
        lab = os.path.basename(f)[:-4]
        m = re.match(r"(.+)\.(none|proc|inproc)\.(1|0\.1)\.r(\d+)$", lab)
        if not m:
            continue
        key = (m.group(1), m.group(2), m.group(3))
        ev, wall = [], []
        for ln in open(f):
            p = ln.split()
            if len(p) >= 3:
                ev.append(float(p[1]))
                wall.append(float(p[2]))
        t = runs.get(lab, {})
        span = float(t.get("t_end", 0)) - float(t.get("t_ready", 0))
        d = pool.setdefault(key, {"ev": [], "wall": [], "made": 0, "span": 0.0, "p95s": []})
        d["ev"] += ev
        d["wall"] += wall
        d["made"] += int(t.get("made_during", 0))
        d["span"] += span if span > 0 else 0
        d["p95s"].append(pct(wall, 95))
    print("| tag | size ms | churn | samples | contexts/s | wall p50 / p95 / p99 / max ms | vs alone p50 / p95 / p99 % | events p95 ms, vs alone % | alone's rounds: sd of wall p95 % |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (tag, c, size) in sorted(pool, key=lambda k: (k[0], -float(k[2]), ["none", "proc", "inproc"].index(k[1]))):
        d = pool[(tag, c, size)]
        a = pool.get((tag, "none", size))
        w = [pct(d["wall"], q) for q in (50, 95, 99)] + [max(d["wall"])]
        e95 = pct(d["ev"], 95)
        if a:
            aw = [pct(a["wall"], q) for q in (50, 95, 99)]
            rel = " / ".join("%+.2f" % (100.0 * (x / y - 1)) for x, y in zip(w[:3], aw))
            erel = "%+.2f" % (100.0 * (e95 / pct(a["ev"], 95) - 1))
            ps = a["p95s"]
            m = sum(ps) / len(ps)
            sd = (sum((x - m) ** 2 for x in ps) / (len(ps) - 1)) ** 0.5 / m * 100 if len(ps) > 1 else float("nan")
        else:
            rel, erel, sd = "-", "-", float("nan")
        rate = d["made"] / d["span"] if d["span"] else 0.0
        print("| %s | %s | %s | %d | %.1f | %.4f / %.4f / %.4f / %.4f | %s | %.4f, %s | %.2f |" % (
            tag, size, c, len(d["wall"]), rate, w[0], w[1], w[2], w[3], rel, e95, erel, sd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
