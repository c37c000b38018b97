#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""split.py DIR MODE N [KREXD_LOG] - agents.py's per-benchmark results
(DIR/w.MODE.SLOT.jsonl) split three ways: benchmarks whose region was clean
with no late process listed, clean with a late process that krexd listed
over MPS and did not note (krexd's log: "over MPS, participant N's process P
is listed ...: not noted", matched by the region ids agents.py records), and
degraded.  Pooled timed samples, n / p50 / p95 / p99.  Is a region whose
late MPS client went unnoted as good as a clean one?  A notebook tool
(session 26)."""

import glob
import json
import os
import re
import sys


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(q / 100.0 * (len(v) - 1))))] if v else None


def unnoted(log):
    ids = set()
    if log and os.path.exists(log):
        for ln in open(log, errors="replace"):
            m = re.search(r"region (\d+): over MPS, participant \d+'s process \d+ is listed", ln)
            if m:
                ids.add(int(m.group(1)))
    return ids


def main(d, mode, n, log=None):
    held = unnoted(log)
    names = ("clean", "clean, late MPS client not noted", "degraded")
    pools = {k: {"wall": [], "ev": [], "b": 0} for k in names}
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
            if int(oc) < 1:
                k = names[2]
            elif held & set(r.get("regions") or []):
                k = names[1]
            else:
                k = names[0]
            pools[k]["wall"] += raw["wall"]
            pools[k]["ev"] += raw["ev"]
            pools[k]["b"] += 1
    print("%s at %s sessions: timed samples by the benchmark's region (ms); "
          "%d regions with a late MPS client not noted in krexd's log" % (mode, n, len(held)))
    for k, p in pools.items():
        print("%-33s benchmarks %3d samples %5d  wall p50 %s p95 %s p99 %s  events p50 %s p95 %s"
              % (k, p["b"], len(p["wall"]), *["%.4f" % x if x is not None else "-" for x in (
                  pct(p["wall"], 50), pct(p["wall"], 95), pct(p["wall"], 99),
                  pct(p["ev"], 50), pct(p["ev"], 95))]))
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
