#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The facts of the manual that can drift from the code (test/unit/doc-facts.sh).

    python3 doc_facts.py SRCDIR BUILDDIR CHECK

CHECK is one of:
  version  every "protocol version N" / "protocol vN" in README.md, HACKING.md,
           doc/*.md and the man pages equals common/proto.h's PROTO_VERSION
           (and doc/protocol.md states it);
  threads  the number of krexd's other threads that doc/architecture.md and
           HACKING.md state equals the pthread_create call sites in krexd/*.c,
           and no page says krexd has one thread or one other thread;
  paths    every tree path named in HACKING.md and doc/*.md exists (in the
           source tree, as a .in template, in the build tree, or as a target
           of its folder's Makefile.am; notebook/ only where it is: not in a
           tarball);
  funcs    every `name()` that HACKING.md and doc/*.md name is a word of the
           tree's sources (C, headers, .def lists, scripts, templates), or one
           of the outside functions listed in OUTSIDE (Slurm's, the kernel's);
  links    every relative link of README.md, HACKING.md, doc/*.md and the
           notebook's pages points to a file that exists, and its #anchor to a
           heading of that page.  From a tarball (no notebook/) links into the
           notebook are not checked: the tarball does not ship it.

Prints one line per problem ("FILE:LINE: ...") and exits 1 when there is one.
"""
import glob
import os
import re
import sys

NUMBERS = {"no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
TOP = ("common", "libregion", "gate", "krexd", "krex", "topology", "spank", "python",
       "contrib", "test", "scripts", "debian", "doc", "notebook", "include", "m4")


def pages(src, notebook=False):
    out = [os.path.join(src, "README.md"), os.path.join(src, "HACKING.md")]
    out += sorted(glob.glob(os.path.join(src, "doc", "*.md")))
    if notebook:
        out += sorted(glob.glob(os.path.join(src, "notebook", "*.md")))
    return [p for p in out if os.path.exists(p)]


def man_pages(src):
    return sorted(glob.glob(os.path.join(src, "*", "*.[1-8].in")))


def lines(path, fences=True):
    """(number, line) of a page; fenced code blocks left out unless fences."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("```"):
                inside = not inside
                if not fences:
                    continue
            if inside and not fences:
                continue
            yield n, line.rstrip("\n")


def rel(src, path):
    return os.path.relpath(path, src)


def check_version(src, build, problems):
    text = open(os.path.join(src, "common", "proto.h"), encoding="utf-8").read()
    m = re.search(r"#define\s+PROTO_VERSION\s+(\d+)", text)
    if not m:
        problems.append("common/proto.h: no PROTO_VERSION")
        return
    want = int(m.group(1))
    pat = re.compile(r"[Pp]rotocol,?\s+(?:version\s+|v)(\d+)\b")
    seen = 0
    for page in pages(src) + man_pages(src):
        for n, line in lines(page):
            for v in pat.findall(line):
                seen += 1
                if int(v) != want:
                    problems.append("%s:%d: protocol version %s, common/proto.h has %d"
                                    % (rel(src, page), n, v, want))
    proto = os.path.join(src, "doc", "protocol.md")
    if not any(int(v) == want for _, l in lines(proto) for v in pat.findall(l)):
        problems.append("doc/protocol.md: does not state protocol version %d" % want)
    if not seen:
        problems.append("no page states the protocol version")


def check_threads(src, build, problems):
    sites = []
    for c in sorted(glob.glob(os.path.join(src, "krexd", "*.c"))):
        for n, line in lines(c):
            code = re.sub(r"//.*|/\*.*?\*/", "", line)
            if re.search(r"\bpthread_create\s*\(", code):
                sites.append("%s:%d" % (rel(src, c), n))
    have = len(sites)
    stated = re.compile(r"\b(no|one|two|three|four|five|six|\d+) other threads?\b")
    stale = re.compile(r"krexd's one other thread|the one thread of krexd|"
                       r"krexd has (?:at most )?one (?:extra )?thread|"
                       r"at most one extra thread|krexd, one thread\b", re.I)
    found = {}
    for page in [os.path.join(src, "doc", "architecture.md"), os.path.join(src, "HACKING.md")]:
        for n, line in lines(page):
            for w in stated.findall(line):
                k = int(w) if w.isdigit() else NUMBERS[w]
                found.setdefault(rel(src, page), []).append(k)
                if k != have:
                    problems.append("%s:%d: says krexd has %s other thread(s); krexd/ has %d "
                                    "pthread_create call site(s): %s"
                                    % (rel(src, page), n, w, have, ", ".join(sites)))
    for page in ("doc/architecture.md", "HACKING.md"):
        if page not in found:
            problems.append("%s: does not say how many other threads krexd has "
                            "(\"krexd has N other threads\")" % page)
    heads = sorted(glob.glob(os.path.join(src, "krexd", "*.h")))
    for page in pages(src) + man_pages(src) + heads:
        for n, line in lines(page):
            if stale.search(line):
                problems.append("%s:%d: says krexd has one thread or one other thread; it has "
                                "%d pthread_create call site(s)" % (rel(src, page), n, have))


PATH_RE = re.compile(r"(?<![\w./<$-])((?:%s)/[\w.+~-]+(?:/[\w.+~-]*)*)(?![\w<])" % "|".join(TOP))


def path_known(src, build, p):
    p = p.rstrip(".,:;")
    if p.endswith(".") or not p:
        return True
    if re.search(r"[A-Z]+N\b|N/|DATE|XXX|\bPID\b|\bNAME\b", p):
        return True  # a pattern the text explains (h200-runN/, slurm-scale-DATE)
    for cand in (p, p.rstrip("/")):
        if os.path.exists(os.path.join(src, cand)) or os.path.exists(os.path.join(src, cand + ".in")):
            return True
        if os.path.exists(os.path.join(build, cand)):
            return True
    d, base = os.path.split(p.rstrip("/"))
    mk = os.path.join(src, d, "Makefile.am")
    if base and os.path.exists(mk):
        if re.search(r"(?<![\w.-])%s(?![\w.-])" % re.escape(base), open(mk, encoding="utf-8").read()):
            return True  # built: a program, a script or a generated file of that folder
    return False


def check_paths(src, build, problems):
    have_nb = os.path.isdir(os.path.join(src, "notebook"))
    for page in [os.path.join(src, "HACKING.md")] + sorted(glob.glob(os.path.join(src, "doc", "*.md"))):
        for n, line in lines(page):
            line = re.sub(r"\]\([^)]*\)", "]", line)  # links: the link check's job
            line = re.sub(r"https?://\S+", "", line)
            for p in PATH_RE.findall(line):
                if "*" in p or "{" in p or (not have_nb and p.startswith("notebook")):
                    continue  # a glob; or the notebook, which a tarball does not ship
                if not path_known(src, build, p):
                    problems.append("%s:%d: names %s, which does not exist" % (rel(src, page), n, p))


# Functions the pages name that are not KREX's: Slurm's, the kernel's, a
# pattern of the style guide.
OUTSIDE = {"gres_prepend_tres_type", "spank_prepend_task_argv", "validate_change", "noun_verb"}
SOURCE_EXT = (".c", ".h", ".def", ".py", ".sh", ".in", ".am", ".lua")


def source_words(src):
    words = set()
    for dirpath, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("notebook", "autom4te.cache")]
        for f in files:
            if f.endswith(SOURCE_EXT):
                try:
                    text = open(os.path.join(dirpath, f), encoding="utf-8", errors="replace").read()
                except OSError:
                    continue
                words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    return words


def check_funcs(src, build, problems):
    words = source_words(src)
    for page in [os.path.join(src, "HACKING.md")] + sorted(glob.glob(os.path.join(src, "doc", "*.md"))):
        for n, line in lines(page):
            for f in re.findall(r"`([a-z_][a-z0-9_]*)\(\)`", line):
                if f not in words and f not in OUTSIDE:
                    problems.append("%s:%d: names %s(), which no source file has"
                                    % (rel(src, page), n, f))


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    out = set()
    for _, line in lines(path, fences=False):
        m = re.match(r"#{1,6} (.*)", line)
        if m:
            out.add(slug(m.group(1)))
    return out


LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def check_links(src, build, problems):
    have_nb = os.path.isdir(os.path.join(src, "notebook"))
    for page in pages(src, notebook=have_nb):
        for n, line in lines(page, fences=False):
            for target in LINK_RE.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue  # http:, https:, mailto:
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                if not have_nb and rel(src, full).startswith("notebook"):
                    continue
                if not os.path.exists(full):
                    problems.append("%s:%d: link to %s: no such file" % (rel(src, page), n, target))
                elif anchor and full.endswith(".md") and anchor not in anchors(full):
                    problems.append("%s:%d: link to %s: no heading #%s in %s"
                                    % (rel(src, page), n, target, anchor, rel(src, full)))


CHECKS = {"version": check_version, "threads": check_threads, "paths": check_paths,
          "funcs": check_funcs, "links": check_links}


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in CHECKS:
        sys.exit("usage: doc_facts.py SRCDIR BUILDDIR {%s}" % "|".join(CHECKS))
    problems = []
    CHECKS[sys.argv[3]](sys.argv[1], sys.argv[2], problems)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
