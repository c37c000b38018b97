#!/usr/bin/env python3
"""overlap.py DIR - how much of each KREX command's context creation (krex-victim's
t_init -> t_ctx) fell inside other commands' regions (region log: the gates'
close, begin + wait_us, to the region's end), and what is left: the
creation's own time, against plain sharing's in the same DIR (w.share.*).
Session 35's notebook tool, stdlib only."""
import datetime
import glob
import json
import os
import sys


def ts(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def main(d):
    regs = []
    for ln in open(os.path.join(d, "regions.jsonl")):
        r = json.loads(ln)
        c = r["certificate"]
        b = ts(r["begin"]) + c.get("wait_us", 0) / 1e6
        regs.append((b, ts(r["time"]), r.get("label", "")))
    regs.sort()
    out = {}
    for f in glob.glob(os.path.join(d, "w.*.jsonl")):
        mode = os.path.basename(f).split(".")[1]
        slot = os.path.basename(f).split(".")[2]
        for ln in open(f):
            try:
                r = json.loads(ln)
            except ValueError:
                continue
            for role, ph in (r.get("phases") or {}).items():
                a, z = ph.get("init"), ph.get("ctx")
                if a is None or z is None:
                    continue
                ov, n = 0.0, 0
                if mode == "krex":
                    for b, e, lab in regs:
                        if lab == "s%s.%s" % (slot, role):
                            continue
                        o = min(z, e) - max(a, b)
                        if o > 0:
                            ov += o
                            n += 1
                out.setdefault((mode, role), []).append((z - a, ov, n))
    print("mode   role     cmds  ctx_s mean/p50/p90     in regions mean (regions)   "
          "left mean/p50/p90     cmds with 0 regions: n, ctx mean")
    for (mode, role), v in sorted(out.items()):
        c = [x[0] for x in v]
        o = [x[1] for x in v]
        left = [x[0] - x[1] for x in v]
        zero = [x[0] for x in v if x[2] == 0]
        fmt = ("%-6s %-8s %4d  %.3f %.3f %.3f     %.3f (%.2f)               "
               "%.3f %.3f %.3f     %d, %.3f")
        print(fmt % (mode, role, len(v), sum(c) / len(c), pct(c, .5), pct(c, .9), sum(o) / len(o),
                 sum(x[2] for x in v) / len(v), sum(left) / len(left), pct(left, .5),
                 pct(left, .9), len(zero), sum(zero) / len(zero) if zero else float("nan")))


for d in sys.argv[1:]:
    print("== %s" % d)
    main(d)
