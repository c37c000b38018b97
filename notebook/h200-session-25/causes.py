#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""causes.py REGION_LOG - krexd's region log (krexd.conf's region_log: one
JSON object a region, its certificate inside) summarised: outcomes, and for
the degraded regions each cause (the certificate's note, split at '; ', its
numbers replaced by N) with a count and one example; the foreign, ungated and
late counts beside.  A notebook tool (session 25)."""

import collections
import json
import re
import sys


def cert(o):
    """The certificate: the object holding "outcome", at any depth."""
    if isinstance(o, dict):
        if "outcome" in o:
            return o
        for v in o.values():
            c = cert(v)
            if c:
                return c
    return None


def main(path):
    outcomes, causes, example = collections.Counter(), collections.Counter(), {}
    extra = collections.Counter()
    n = bad = 0
    with open(path) as f:
        for ln in f:
            try:
                c = cert(json.loads(ln))
            except ValueError:
                bad += 1
                continue
            if not c:
                bad += 1
                continue
            n += 1
            outcomes[c.get("outcome")] += 1
            if c.get("outcome") != "degraded":
                continue
            for k in ("foreign", "ungated", "late"):
                if c.get(k):
                    extra["%s>0" % k] += 1
            for part in (c.get("note") or "(no note)").split("; "):
                key = re.sub(r"\d+", "N", part)
                causes[key] += 1
                example.setdefault(key, part)
    print("regions %d (unreadable lines %d): %s" % (
        n, bad, ", ".join("%s %d" % kv for kv in outcomes.most_common())))
    print("degraded with: %s" % (", ".join("%s %d" % kv for kv in extra.most_common()) or "-"))
    for key, k in causes.most_common(12):
        print("%5d  %s\n       e.g. %s" % (k, key, example[key]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
