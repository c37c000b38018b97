#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# `make install` of the Python package: under DESTDIR with Debian's pythondir
# (what the python3-krex package ships: krex/ with a _config.py naming the
# configured libdir, not DESTDIR), and under a prefix of its own, from where
# `import krex` finds libkrexregion in the configured libdir with no
# environment variable at all; `make uninstall` removes it again.
. "$top_srcdir/test/lib.sh"

command -v python3 >/dev/null || skip_all "python3 not found"
b=$top_builddir
[ -e "$b/libregion/.libs/libkrexregion.so" ] || skip_all "libkrexregion not built yet"
grep -q '^pkgpython_PYTHON' "$b/python/Makefile" 2>/dev/null ||
	skip_all "configured without python (no pkgpython_PYTHON in python/Makefile)"
tmp=$(mktemp -d /tmp/krex-pyinst.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
export PYTHONDONTWRITEBYTECODE=1
# mk VAR [MAKE ARGS]: the value of make variable VAR in python/Makefile.
mk() {
	local v=$1
	shift
	printf 'print-var:\n\t@echo $(%s)\n' "$v" | make -s --no-print-directory -C "$b/python" -f Makefile -f - "$@" print-var
}
conf() { sed -n "s/^$2 = \"\(.*\)\"$/\1/p" "$1"; }

plan 8
deb=/usr/lib/python3/dist-packages
make -s --no-print-directory -C "$b/python" install DESTDIR="$tmp/d" pythondir=$deb >"$tmp/d.log" 2>&1
ok "make install DESTDIR=... pythondir=$deb succeeds" [ $? = 0 ]
pkg=$tmp/d$deb/krex
ok "it installs krex/__init__.py and krex/_config.py there" test -f "$pkg/__init__.py" -a -f "$pkg/_config.py"
ok "the installed _config.py names the configured libdir ($(mk libdir)), not DESTDIR" \
	[ "$(conf "$pkg/_config.py" LIBDIR)" = "$(mk libdir)" ]
ok "and the library's SONAME ($(conf "$pkg/_config.py" SONAME))" \
	[ "$(conf "$pkg/_config.py" SONAME)" = "$(readelf -d "$b/libregion/.libs/libkrexregion.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" ]

# Installed under a prefix of its own: library and package, nothing else.
p=$tmp/p
{ make -s --no-print-directory -C "$b/libregion" install-libLTLIBRARIES prefix="$p" &&
	make -s --no-print-directory -C "$b/python" install prefix="$p"; } >"$tmp/p.log" 2>&1
ok "make install prefix=... of libkrexregion and the package succeeds" [ $? = 0 ]
pydir=$(mk pythondir prefix="$p")
out=$(cd / && env -u KREX_LIBRARY -u KREX_LIBREGION -u KREX_BUILDDIR -u LD_LIBRARY_PATH \
	PYTHONPATH="$pydir" python3 -c 'import krex; print(krex.__file__, *krex.library())' 2>&1)
diag "$out"
ok "import krex from $pydir with no environment finds $p/lib's library" \
	[ "$out" = "$pydir/krex/__init__.py libdir $p/lib/$(conf "$pydir/krex/_config.py" SONAME)" ]
ok "the build tree's _config.py keeps the configured libdir" \
	[ "$(conf "$b/python/krex/_config.py" LIBDIR)" = "$(mk libdir)" ]
make -s --no-print-directory -C "$b/python" uninstall prefix="$p" >>"$tmp/p.log" 2>&1
ok "make uninstall removes the package's files" \
	[ -z "$(find "$pydir" -type f 2>/dev/null)" ]
[ "$_tap_fail" = 0 ] || sed 's/^/# /' "$tmp"/*.log
done_testing
