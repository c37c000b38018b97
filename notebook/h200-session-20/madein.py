#!/usr/bin/env python3
# madein.py DIR... - krexd's "made in N us" (a participant made on its loop:
# the cgroup made, the pid moved into it) from every krexd log under each DIR:
# n, p50, p90, max.  Notebook tool of session 20.
import os, re, sys
for d in sys.argv[1:]:
    v = []
    for root, _, files in os.walk(d):
        for f in files:
            if f.endswith(".log"):
                try:
                    t = open(os.path.join(root, f), errors="replace").read()
                except OSError:
                    continue
                v += [int(x) / 1000.0 for x in re.findall(r"\(made in (\d+) us\)", t)]
    v.sort()
    if not v:
        print("%s: no participant made" % d)
        continue
    pct = lambda q: v[min(len(v) - 1, int(q * len(v)))]
    print("%s: made in ms: %d participants, p50 %.2f p90 %.2f max %.2f, sum %.0f ms"
          % (d, len(v), pct(0.5), pct(0.9), v[-1], sum(v)))
