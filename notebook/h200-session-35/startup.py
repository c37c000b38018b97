#!/usr/bin/env python3
"""startup.py DIR... - a GPU command's start-up, per run directory of
agents.py (its w.MODE.SLOT.jsonl files): per mode and role the commands, the
mean and p50/p90 of each phase (spawn -> main -> cuInit -> context -> module
-> ready), the context's wait at a closed gate (KREX with --drain-log), and
how many commands waited at all.  Session 35's notebook tool, stdlib only."""
import glob
import json
import os
import sys

PH = [("to_main", "spawn", "main"), ("init", "main", "init"), ("ctx", "init", "ctx"),
      ("module", "ctx", "mod"), ("rest", "mod", "ready"), ("start", "spawn", "ready"),
      ("gpu", "ready", "end"), ("exit", "end", "exit")]


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def main():
    for d in sys.argv[1:]:
        rows = {}
        for f in glob.glob(os.path.join(d, "w.*.jsonl")):
            mode = os.path.basename(f).split(".")[1]
            for ln in open(f):
                try:
                    r = json.loads(ln)
                except ValueError:
                    continue
                for role, ph in (r.get("phases") or {}).items():
                    rows.setdefault((mode, role), []).append(ph)
        print("== %s" % d)
        head = "  ".join("%-21s" % p[0] for p in PH)
        print("%-6s %-8s %5s  %s" % ("mode", "role", "cmds", head) + "  held (waited: n, mean)")
        for (mode, role), v in sorted(rows.items()):
            cells = []
            for name, a, b in PH:
                x = [p[b] - p[a] for p in v if p.get(a) is not None and p.get(b) is not None]
                cells.append("%.3f %.3f %.3f" % (sum(x) / len(x), pct(x, .5), pct(x, .9))
                             if x else "-")
            h = [p["ctx_held"] for p in v if p.get("ctx_held") is not None]
            w = [x for x in h if x > 0]
            held = ("%.3f (%d, %.3f)" % (sum(h) / len(h), len(w), sum(w) / len(w) if w else 0)
                    if h else "-")
            print("%-6s %-8s %5d  %s  %s" % (mode, role, len(v),
                                             "  ".join("%-21s" % c for c in cells), held))


main()
