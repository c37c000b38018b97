#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Which source file calls which: circles and upward arrows.

Reads the symbols of the built objects (nm), so run it after `make`:

    python3 scripts/layers.py [BUILDDIR]            # report, exit 1 on a finding
    python3 scripts/layers.py --graph [BUILDDIR]    # also print every arrow

A file A "calls" a file B when an object of A has an undefined symbol that an
object of B defines. Findings:
  - a circle (strongly connected set of two or more files) inside krexd/,
    gate/ or common/ (circles in the other parts are printed as notes);
  - an arrow from common/ to any other part (common/ is the ground floor),
    by symbol or by #include;
  - a source file of krexd/ or gate/ over 800 lines.
"""
import os
import re
import subprocess
import sys

PARTS = ["krexd", "gate", "common", "libregion", "topology", "spank", "krex"]
STRICT = ("krexd", "gate", "common")  # parts that must have no circle
MAX_LINES = 800


def objects(builddir):
    for part in PARTS:
        top = os.path.join(builddir, part)
        for dirpath, _, files in os.walk(top):
            for f in files:
                if f.endswith(".o") and "test" not in dirpath:
                    yield part, os.path.join(dirpath, f)


def source_name(part, obj):
    base = os.path.basename(obj)[:-2]
    base = re.sub(r"^.*_la-", "", base)  # libtool's per-target prefix
    base = re.sub(r"^[a-z_]+-(?=[a-z_]+$)", "", base)  # automake's prog-file.o
    return part + "/" + base + ".c"


def symbols(obj):
    out = subprocess.run(["nm", "--defined-only", obj], capture_output=True,
                         text=True, check=False).stdout
    defined = {l.split()[-1] for l in out.splitlines()
               if len(l.split()) == 3 and l.split()[1] in "TDBR"}
    out = subprocess.run(["nm", "--undefined-only", obj], capture_output=True,
                         text=True, check=False).stdout
    undef = {l.split()[-1] for l in out.splitlines() if l.strip()}
    return defined, undef


def sccs(nodes, edges):
    index, low, stack, on, res = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            res.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return res


def main(argv):
    graph = "--graph" in argv
    args = [a for a in argv if not a.startswith("--")]
    builddir = args[0] if args else "."
    srcdir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    defs, undefs = {}, {}
    for part, obj in objects(builddir):
        name = source_name(part, obj)
        d, u = symbols(obj)
        defs.setdefault(name, set()).update(d)
        undefs.setdefault(name, set()).update(u)
    if not defs:
        print("layers.py: no objects under %s: run make first" % builddir,
              file=sys.stderr)
        return 2
    owner = {}
    for name, d in defs.items():
        for s in d:
            owner.setdefault(s, name)
    edges = {}
    for name, u in undefs.items():
        for s in u:
            o = owner.get(s)
            # The gate is preloaded, never linked: a name it defines that
            # another part uses is one it interposes (dlsym, the driver's
            # calls), not a call into it.
            if o and o.startswith("gate/") and not name.startswith("gate/"):
                continue
            if o and o != name:
                edges.setdefault(name, set()).add(o)
    findings, notes = [], []
    for part in PARTS:
        nodes = [n for n in defs if n.startswith(part + "/")]
        inner = {n: {m for m in edges.get(n, ()) if m.startswith(part + "/")}
                 for n in nodes}
        for comp in sccs(nodes, inner):
            if len(comp) > 1 and part in STRICT:
                findings.append("circle in %s/: %s" % (part, " ".join(comp)))
            elif len(comp) > 1:
                notes.append("note: circle in %s/: %s" % (part, " ".join(comp)))
    for n, outs in sorted(edges.items()):
        if n.startswith("common/"):
            for m in sorted(outs):
                if not m.startswith("common/"):
                    findings.append("common/ calls up: %s -> %s" % (n, m))
    inc = re.compile(r'#\s*include\s*[<"]([^>"]+)[>"]')
    for f in sorted(os.listdir(os.path.join(srcdir, "common"))):
        if not f.endswith((".c", ".h")):
            continue
        with open(os.path.join(srcdir, "common", f), encoding="utf-8") as fh:
            for line in fh:
                m = inc.search(line)
                if m and ("/" in m.group(1)) and not m.group(1).startswith(
                        ("sys/", "linux/", "arpa/", "netinet/", "krex/")):
                    findings.append("common/ includes up: common/%s -> %s"
                                    % (f, m.group(1)))
                if m and m.group(1).startswith("krex/") and not os.path.exists(
                        os.path.join(srcdir, "include", m.group(1))):
                    findings.append("common/ includes up: common/%s -> %s "
                                    "(not in include/)" % (f, m.group(1)))
    for part in ("krexd", "gate"):
        d = os.path.join(srcdir, part)
        for f in sorted(os.listdir(d)):
            if f.endswith(".c"):
                with open(os.path.join(d, f), encoding="utf-8") as fh:
                    n = sum(1 for _ in fh)
                if n > MAX_LINES:
                    findings.append("%s/%s has %d lines (over %d)"
                                    % (part, f, n, MAX_LINES))
    if graph:
        for n in sorted(edges):
            print("%s -> %s" % (n, " ".join(sorted(edges[n]))))
    for f in notes + findings:
        print(f)
    print("layers: %d files, %d arrows, %d findings"
          % (len(defs), sum(len(v) for v in edges.values()), len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
