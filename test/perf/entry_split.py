#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""entry_split.py LOG... - where region entry goes, from krexd's debug log.

krexd at log_level=debug writes one line per grant:
  region N: granted to participant P (wait W drain D freeze F us; settle S us;
  isolate I us, during the drain)
This prints, per phase, how many grants, p50 and p95 in milliseconds (doc/performance.md
"One region per sample with every sibling"; fidelity.py --krexd-opt log_level=debug
keeps such a log).
"""
import re
import sys

PHASES = ["wait", "drain", "freeze", "settle", "isolate"]


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))] if v else float("nan")


def main(paths):
    lines = [ln for p in paths for ln in open(p, errors="replace") if ": granted to participant" in ln]
    if not lines:
        print("entry_split: no 'granted' lines (krexd needs log_level=debug)")
        return 1
    print("phase    grants   p50_ms   p95_ms")
    for ph in PHASES:
        v = [int(m.group(1)) / 1000 for ln in lines for m in [re.search(r"\b%s (\d+)" % ph, ln)] if m]
        print("%-8s %6d %8.3f %8.3f" % (ph, len(v), pct(v, 0.5), pct(v, 0.95)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) if len(sys.argv) > 1 else 2)
