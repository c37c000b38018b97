#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_loader.py - TAP checks of how `import krex` finds libkrexregion
(python/krex/__init__.py _candidates): $KREX_LIBRARY, then the SONAME through
the dynamic linker, then krex/_config.py's LIBDIR, then $KREX_BUILDDIR, and
the ImportError that names every place tried.  Each case imports a copy of
the package in a fresh python3, the library copied under a SONAME no system
has.  Environment (python_loader.sh): KREX_TEST_SRC (the package dir),
KREX_TEST_LIB (the built library), KREX_TEST_CONFIG (the generated
_config.py), KREX_TEST_LIBDIR and KREX_TEST_SONAME (what it must say)."""

import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from krextest import done, ok  # noqa: E402

SONAME = "libkrexregion-pytest.so.1"
PROBE = ("import krex, json\nhow, name = krex.library()\n"
         "maps = [l.split()[-1] for l in open('/proc/self/maps') if 'libkrexregion' in l]\n"
         "print(json.dumps([how, name, sorted(set(maps))]))\n")


def tree(tmp):
    """tmp/pkg/krex (with a _config.py), tmp/bare/krex (without), and a copy of
    the library in each place the loader looks."""
    src, lib = os.environ["KREX_TEST_SRC"], os.environ["KREX_TEST_LIB"]
    p = {k: os.path.join(tmp, k) for k in ("pkg", "bare", "ldpath", "libdir", "build",
                                             "explicit")}
    for d in ("pkg", "bare"):
        os.makedirs(os.path.join(p[d], "krex"))
        shutil.copy(os.path.join(src, "__init__.py"), os.path.join(p[d], "krex"))
    conf = 'LIBDIR = "%s"\nSONAME = "%s"\nVERSION = "test"\n' % (p["libdir"], SONAME)
    with open(os.path.join(p["pkg"], "krex", "_config.py"), "w") as f:
        f.write(conf)
    os.makedirs(os.path.join(p["build"], "python", "krex"))
    with open(os.path.join(p["build"], "python", "krex", "_config.py"), "w") as f:
        f.write(conf.replace(p["libdir"], os.path.join(tmp, "nowhere")))
    os.makedirs(os.path.join(p["build"], "libregion", ".libs"))
    for d, name in (("ldpath", SONAME), ("libdir", SONAME), ("explicit", "libkrexregion.so"),
                    ("build/libregion/.libs", SONAME)):
        os.makedirs(os.path.join(tmp, d), exist_ok=True)
        shutil.copy(lib, os.path.join(tmp, d, name))
    return p


def probe(pkg, **env):
    """[how, name, mapped files] of `import krex` from pkg, or the error text."""
    e = {k: v for k, v in os.environ.items()
         if k not in ("KREX_LIBRARY", "KREX_LIBREGION", "KREX_BUILDDIR", "LD_LIBRARY_PATH")}
    e.update(env, PYTHONPATH=pkg, PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", PROBE], env=e, capture_output=True, text=True,
                       timeout=60)
    if r.returncode == 0:
        import json
        return json.loads(r.stdout)
    return r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "rc %d" % r.returncode


def check_generated():
    """The _config.py make wrote: the configured libdir and libtool's SONAME."""
    text = open(os.environ["KREX_TEST_CONFIG"]).read()
    ns = {}
    exec(text, ns)  # noqa: S102 -- our own generated file
    ok(ns.get("LIBDIR") == os.environ["KREX_TEST_LIBDIR"],
       "generated _config.py: LIBDIR is the configured libdir (%s)" % ns.get("LIBDIR"), text)
    ok(ns.get("SONAME") == os.environ["KREX_TEST_SONAME"],
       "generated _config.py: SONAME is the library's DT_SONAME (%s)" % ns.get("SONAME"), text)


def check_order(tmp):
    p = tree(tmp)
    ex = os.path.join(p["explicit"], "libkrexregion.so")
    bd = os.path.join(p["build"], "libregion", ".libs", SONAME)
    r = probe(p["pkg"], KREX_LIBRARY=ex, LD_LIBRARY_PATH=p["ldpath"], KREX_BUILDDIR=p["build"])
    ok(r[:2] == ["KREX_LIBRARY", ex], "1st: $KREX_LIBRARY, before everything else", r)
    r = probe(p["pkg"], KREX_LIBREGION=ex, LD_LIBRARY_PATH=p["ldpath"])
    ok(r[:2] == ["KREX_LIBREGION", ex], "$KREX_LIBREGION, the older name, works as well", r)
    r = probe(p["pkg"], LD_LIBRARY_PATH=p["ldpath"], KREX_BUILDDIR=p["build"])
    ok(r[:2] == ["soname", SONAME] and r[2] == [os.path.join(p["ldpath"], SONAME)],
       "2nd: the SONAME through the dynamic linker's search (LD_LIBRARY_PATH)", r)
    r = probe(p["pkg"], KREX_BUILDDIR=p["build"])
    ok(r[:2] == ["libdir", os.path.join(p["libdir"], SONAME)],
       "3rd: krex/_config.py's LIBDIR/SONAME, with no environment at all", r)
    r = probe(p["pkg"])
    ok(r[:2] == ["libdir", os.path.join(p["libdir"], SONAME)],
       "the installed case: LIBDIR found with no environment variable", r)
    os.unlink(os.path.join(p["libdir"], SONAME))
    r = probe(p["pkg"], KREX_BUILDDIR=p["build"])
    ok(r[:2] == ["KREX_BUILDDIR", bd], "4th: $KREX_BUILDDIR/libregion/.libs", r)
    r = probe(p["bare"], KREX_BUILDDIR=p["build"])
    ok(r[:2] == ["KREX_BUILDDIR", bd],
       "a package without _config.py reads $KREX_BUILDDIR/python/krex/_config.py", r)

    r = probe(p["pkg"])
    if isinstance(r, list) and r[0] == "find_library":
        ok(True, "5th: ctypes.util.find_library (a libkrexregion is installed here) # SKIP "
           "cannot test the not-found error on this machine")
        return
    want = ["ImportError: krex: libkrexregion not found (set KREX_LIBRARY to its path)",
            "soname %s:" % SONAME, "libdir %s:" % os.path.join(p["libdir"], SONAME),
            "find_library: nothing found"]
    ok(isinstance(r, str) and all(w in r for w in want),
       "nothing found: `import krex` raises ImportError naming each place tried", r)
    r = probe(p["bare"])
    ok(isinstance(r, str) and "ImportError" in r and "no krex/_config.py" in r,
       "without _config.py or KREX_BUILDDIR the error says the package is not installed", r)
    bad = os.path.join(tmp, "no", "libkrexregion.so")
    r = probe(p["pkg"], KREX_LIBRARY=bad, LD_LIBRARY_PATH=p["ldpath"])
    ok(isinstance(r, str) and "KREX_LIBRARY %s:" % bad in r and "soname" not in r,
       "a wrong $KREX_LIBRARY is an ImportError naming it, no fallback to another library", r)


def main():
    check_generated()
    tmp = tempfile.mkdtemp(prefix="krex-pyload-")
    try:
        check_order(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
