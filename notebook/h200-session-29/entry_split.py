#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""entry_split.py TGZ: where a region's entry went, from krex-victim --certs files.

Reads every *.certs file in TGZ (a tar of fidelity.py's raw/ folders; the
columns: test/workloads/victim.c --certs: entry_ms warm_ms wait_us drain_us
freeze_us isolate_us settle_us outcome ...) and prints, per file group
(per-sample regions of the fidelity run by size, each entry run), the entry
and each phase at p50 / p95, and the rest (entry less the phases: round
trips, the grant, the warm-up).  Probe files (a run's first regions) are
left out.
"""
import re
import sys
import tarfile


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]


def main():
    groups = {}
    with tarfile.open(sys.argv[1]) as t:
        for m in t.getmembers():
            if not m.name.endswith(".certs") or "_probe" in m.name:
                continue
            if "fidelity" in m.name:
                g = re.search(r"krex_all_([0-9.]+)_(sample|batch)", m.name)
                if not g or g.group(2) != "sample":
                    continue
                key = "fidelity, %s ms per sample" % g.group(1)
            else:
                key = m.name.split("/")[1]  # entry2, entry3
            for line in t.extractfile(m).read().decode().splitlines():
                f = line.split()
                if len(f) >= 8:
                    groups.setdefault(key, []).append(f)
    names = ["entry", "wait", "drain", "freeze", "isolate", "settle", "rest"]
    print("| regions | n | " + " | ".join("%s p50 / p95 ms" % n for n in names) + " |")
    print("|---|---|" + "---|" * len(names))
    for key in sorted(groups):
        rows = groups[key]
        cols = [[float(r[0]) for r in rows]]
        for i in range(2, 7):
            cols.append([int(r[i]) / 1000.0 for r in rows])
        cols.append([float(r[0]) - sum(int(r[i]) for i in range(2, 7)) / 1000.0 for r in rows])
        print("| %s | %d | " % (key, len(rows)) +
              " | ".join("%.2f / %.2f" % (pct(c, .5), pct(c, .95)) for c in cols) + " |")


if __name__ == "__main__":
    main()
