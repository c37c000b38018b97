#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""timing.py DIR MODE N - agents.py's per-benchmark results (DIR/w.MODE.SLOT.jsonl)
split by certificate: the timed samples (wall, events) of the benchmarks
whose one region was clean against those whose region was degraded, pooled,
n / p50 / p95 / p99.  Does a degraded certificate mark a slower timing?  A
notebook tool (session 25)."""

import glob
import json
import os
import sys


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(q / 100.0 * (len(v) - 1))))] if v else None


def main(d, mode, n):
    pools = {"clean": {"wall": [], "ev": [], "b": 0}, "degraded": {"wall": [], "ev": [], "b": 0}}
    for path in glob.glob(os.path.join(d, "w.%s.*.jsonl" % mode)):
        for ln in open(path):
            try:
                r = json.loads(ln)
            except ValueError:
                continue
            v, raw = r.get("v") or {}, r.get("raw")
            if r.get("kind") != "bench" or r.get("rc") != 0 or not raw:
                continue
            oc = v.get("outcome_clean")
            if oc in (None, "-"):
                continue
            k = "clean" if int(oc) >= 1 else "degraded"
            pools[k]["wall"] += raw["wall"]
            pools[k]["ev"] += raw["ev"]
            pools[k]["b"] += 1
    print("%s at %s sessions: timed samples by the benchmark's certificate (ms)" % (mode, n))
    for k, p in pools.items():
        print("%-9s benchmarks %3d samples %5d  wall p50 %s p95 %s p99 %s  events p50 %s p95 %s" % (
            k, p["b"], len(p["wall"]), *["%.4f" % x if x is not None else "-" for x in (
                pct(p["wall"], 50), pct(p["wall"], 95), pct(p["wall"], 99),
                pct(p["ev"], 50), pct(p["ev"], 95))]))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
