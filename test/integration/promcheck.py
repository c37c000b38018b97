#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""promcheck.py FILE: check a Prometheus text exposition (format 0.0.4), as
node_exporter's textfile collector reads it, strictly; print each problem
and exit 1, or print "ok N families, M samples" and exit 0.

Checked: the line grammar (names, labels, escapes, values), HELP and TYPE
at most once per family and TYPE before its samples, a family's samples
together, no series twice, counters not negative, histograms complete
(_bucket with le ascending to +Inf, cumulative counts, +Inf == _count, a
_sum), and a final newline.  --value 'SERIES' prints a series' value.
"""
import math
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
SAMPLE = re.compile(r"^(%s)(\{(.*)\})? ([^ ]+)( -?[0-9]+)?$" % NAME)
LABEL_PAIR = re.compile(r'(%s)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)' % LABEL)
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")


def parse_value(v):
    if v in ("+Inf", "-Inf", "NaN"):
        return float(v.replace("Inf", "inf").replace("NaN", "nan"))
    if not re.match(r"^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$", v):
        raise ValueError(v)
    return float(v)


def parse_labels(s):
    out = {}
    pos = 0
    while pos < len(s):
        m = LABEL_PAIR.match(s, pos)
        if not m:
            raise ValueError("bad labels at %r" % s[pos:])
        if m.group(1) in out:
            raise ValueError("label %s twice" % m.group(1))
        out[m.group(1)] = m.group(2)
        pos = m.end()
    return out


def family_of(name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and types.get(name[: -len(suffix)]) in ("histogram", "summary"):
            return name[: -len(suffix)]
    return name


def check(text):
    errs = []
    types, helps, seen_series, done_families = {}, {}, set(), set()
    samples = []
    current = None
    if text and not text.endswith("\n"):
        errs.append("no newline at the end")
    for no, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), 1):
        if line == "":
            continue
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not re.match("^%s$" % NAME, name):
                    errs.append("%d: bad metric name %r" % (no, name))
                if parts[1] == "TYPE":
                    if len(parts) != 4 or parts[3] not in TYPES:
                        errs.append("%d: bad TYPE line" % no)
                    elif name in types:
                        errs.append("%d: TYPE of %s twice" % (no, name))
                    elif name in done_families or name == current:
                        errs.append("%d: TYPE of %s after its samples" % (no, name))
                    else:
                        types[name] = parts[3]
                else:
                    if name in helps:
                        errs.append("%d: HELP of %s twice" % (no, name))
                    helps[name] = parts[3] if len(parts) == 4 else ""
            continue
        m = SAMPLE.match(line)
        if not m:
            errs.append("%d: not a sample line: %r" % (no, line))
            continue
        name, labels_s, value_s = m.group(1), m.group(3) or "", m.group(4)
        try:
            labels = parse_labels(labels_s)
            value = parse_value(value_s)
        except ValueError as e:
            errs.append("%d: %s" % (no, e))
            continue
        fam = family_of(name, types)
        if fam != current:
            if fam in done_families:
                errs.append("%d: samples of %s are not together" % (no, fam))
            if current:
                done_families.add(current)
            current = fam
        key = (name, tuple(sorted(labels.items())))
        if key in seen_series:
            errs.append("%d: series %s%s twice" % (no, name, labels))
        seen_series.add(key)
        if types.get(fam) == "counter" and (value < 0 or math.isnan(value)):
            errs.append("%d: counter %s is %s" % (no, name, value_s))
        samples.append((fam, name, labels, value))
    for fam, typ in types.items():
        if typ != "histogram":
            continue
        groups = {}
        for f, name, labels, value in samples:
            if f != fam:
                continue
            rest = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
            g = groups.setdefault(rest, {"buckets": [], "sum": None, "count": None})
            if name == fam + "_bucket":
                if "le" not in labels:
                    errs.append("%s: a bucket without le" % fam)
                    continue
                g["buckets"].append((parse_value(labels["le"]), value))
            elif name == fam + "_sum":
                g["sum"] = value
            elif name == fam + "_count":
                g["count"] = value
            else:
                errs.append("%s: stray sample %s" % (fam, name))
        if not groups:
            errs.append("%s: histogram without samples" % fam)
        for rest, g in groups.items():
            b = g["buckets"]
            les = [x[0] for x in b]
            if les != sorted(les) or len(set(les)) != len(les):
                errs.append("%s%s: le not ascending" % (fam, rest))
            if not b or les[-1] != float("inf"):
                errs.append("%s%s: no +Inf bucket" % (fam, rest))
            counts = [x[1] for x in b]
            if counts != sorted(counts):
                errs.append("%s%s: bucket counts not cumulative" % (fam, rest))
            if g["count"] is None or g["sum"] is None:
                errs.append("%s%s: no _count or _sum" % (fam, rest))
            elif b and counts[-1] != g["count"]:
                errs.append("%s%s: +Inf bucket %s != _count %s" % (fam, rest, counts[-1], g["count"]))
    return errs, types, samples


def main():
    args = sys.argv[1:]
    want = None
    if len(args) == 3 and args[0] == "--value":
        want, args = args[1], args[2:]
    if len(args) != 1:
        print("usage: promcheck.py [--value SERIES] FILE", file=sys.stderr)
        return 2
    text = open(args[0], encoding="utf-8").read()
    errs, types, samples = check(text)
    if want is not None:
        for fam, name, labels, value in samples:
            series = name + ("{%s}" % ",".join('%s="%s"' % kv for kv in labels.items()) if labels else "")
            if series == want:
                print("%g" % value)
                return 0
        print("no series %s" % want, file=sys.stderr)
        return 1
    for e in errs:
        print(e)
    if errs:
        return 1
    print("promcheck: %d families, %d samples, no problem" % (len(types), len(samples)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
