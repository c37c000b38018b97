#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""entry_split.py TGZ: where a region's entry went, from krex-victim --certs files.

TGZ: a tar of fidelity.py's raw/ folders (session 28, call 2:
notebook/h200-session-28/call2-certs.tgz).  Each group of *.certs files
(per-sample regions of the fidelity run by size, each entry run; probes left
out) goes through fidelity.py's own Bench.entry_breakdown(), the table a
fidelity run writes as fidelity-entry.md: p50 / p95 of the entry and of each
phase (ms).
"""
import os
import re
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test/perf"))
import fidelity  # noqa: E402


class Certs:
    """What entry_breakdown() needs of a Bench: where a label's raw file is."""

    def raw_path(self, label, ext):
        return label + ext


def main():
    groups = {}
    with tempfile.TemporaryDirectory() as d, tarfile.open(sys.argv[1]) as t:
        t.extractall(d, filter="data")
        for root, _, files in os.walk(d):
            for f in sorted(files):
                g = re.match(r"krex_all_([0-9.]+)_sample(_r[0-9]+)?\.certs$", f)
                if not g:
                    continue
                where = os.path.relpath(root, d).split(os.sep)[1]  # fidelity, entry2, ...
                key = ("fidelity, %s ms per sample" % g.group(1)) if where == "fidelity" else where
                groups.setdefault(key, []).append(os.path.join(root, f[:-len(".certs")]))
        phases = ["entry", "wait", "drain", "freeze", "isolate", "settle", "other"]
        print("| regions | n | " + " | ".join(phases) + " |")
        print("|---|---|" + "---|" * len(phases))
        for key in sorted(groups):
            e = fidelity.Bench.entry_breakdown(Certs(), {}, groups[key])
            print("| %s | %d | " % (key, e["regions"]) + " | ".join(
                "%.2f / %.2f" % (e[p + "_p50"], e[p + "_p95"]) for p in phases) + " |")


if __name__ == "__main__":
    main()
