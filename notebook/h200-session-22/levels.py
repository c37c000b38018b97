#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""levels.py - the GPU's own steps and the slow stretches of a region
(issue 18, session 22).  A notebook tool for the raw files of krex-victim
(--raw: "i ev_ms wall_ms entry_ms ..."), as batchedge.py and fidelity.py
write them.

  levels.py medians B FILE...   per file: ev/wall p50 and p95, and the event
                                median of each run of B samples (a batch
                                region's, or any stretch of B), in order
  levels.py slow LIMIT_MS FILE...  per file (one region each): its length and
                                each sample slower than LIMIT_MS in wall
                                time, as (ms since the region's first
                                sample, its wall time in us), then the
                                medians before and after the first run of
                                10 slow samples in a row
"""
import statistics as st
import sys


def rows(path):
    with open(path) as f:
        return [[float(x) for x in ln.split()[:4]] for ln in f if len(ln.split()) >= 4]


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))]


def medians(b, files):
    for f in files:
        r = rows(f)
        ev, w = [x[1] for x in r], [x[2] for x in r]
        meds = [st.median(ev[i:i + b]) for i in range(0, len(ev), b)]
        print("%s n %d ev p50 %.4f p95 %.4f wall p50 %.4f p95 %.4f; event medians of %d: %s" % (
            f.split("/")[-1], len(r), q(ev, 50), q(ev, 95), q(w, 50), q(w, 95), b,
            " ".join("%.4f" % m for m in meds)))


def slow(limit, files):
    for f in files:
        r = rows(f)
        t, marks, run, cut = 0.0, [], 0, None
        for x in r:
            if x[2] > limit:
                marks.append((round(t, 2), round(x[2] * 1000, 1)))
                run += 1
                if run == 10 and cut is None:
                    cut = t
            else:
                run = 0
            x.append(t)
            t += x[2]
        print("%s: region %.1f ms, %d slower than %g ms: %s" % (
            f.split("/")[-1], t, len(marks), limit, marks))
        if cut is not None:
            for name, part in (("before", [x for x in r if x[4] < cut - 1]),
                               ("after", [x for x in r if x[4] >= cut - 1])):
                print("  %s %.1f ms: %d samples, event median %.4f, wall %.4f, wall - event %.4f"
                      % (name, cut, len(part), st.median(x[1] for x in part),
                         st.median(x[2] for x in part), st.median(x[2] - x[1] for x in part)))


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] not in ("medians", "slow"):
        sys.exit(__doc__)
    (medians if sys.argv[1] == "medians" else slow)(
        int(sys.argv[2]) if sys.argv[1] == "medians" else float(sys.argv[2]), sys.argv[3:])
