#!/usr/bin/env python3
"""late_samples.py DIR... - pool the timed samples (krex-victim's raw wall and
event times, ms) of every benchmark in agents.py output directories (their
w.krex.N.jsonl), split by the region's outcome (clean / degraded), and print
p50 / p95 / p99 / max per directory and split.  Session 19 used it to ask
whether the regions the late-participant note degraded (a command made its
CUDA context beside the owner) were timed slower than the clean ones of the
same run."""
import glob
import json
import os
import sys


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q / 100.0
    f = int(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


def main(dirs):
    print("| run | split | benches | samples | wall p50 | wall p95 | wall p99 | wall max | ev p95 | ev p99 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for d in dirs:
        split = {"clean": ([], [], 0), "degraded": ([], [], 0)}
        for f in glob.glob(os.path.join(d, "w.krex.*.jsonl")):
            for line in open(f):
                r = json.loads(line)
                if r.get("kind") != "bench" or r.get("rc") != 0 or not r.get("raw"):
                    continue
                key = "clean" if r["v"].get("outcome_clean") == "1" else "degraded"
                w, e, n = split[key]
                w.extend(r["raw"]["wall"])
                e.extend(r["raw"]["ev"])
                split[key] = (w, e, n + 1)
        for key, (w, e, n) in split.items():
            if not n:
                continue
            print("| %s | %s | %d | %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f |" % (
                os.path.basename(d.rstrip("/")), key, n, len(w), pct(w, 50), pct(w, 95),
                pct(w, 99), max(w), pct(e, 95), pct(e, 99)))


if __name__ == "__main__":
    main(sys.argv[1:])
