#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The layering of the code (issue 23), from the built objects:
# scripts/layers.py finds no circle inside krexd/, gate/ or common/, no
# arrow from common/ up (by symbol or #include), no krexd/ or gate/ source
# over 800 lines.  Then it is shown to find a circle: two objects made here
# that call each other.
. "$top_srcdir/test/lib.sh"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
command -v nm >/dev/null 2>&1 || skip_all "nm not installed"
[ -x "$top_builddir/krexd/krexd" ] || skip_all "krexd not built"
L=$top_srcdir/scripts/layers.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

plan 3
python3 "$L" "$top_builddir" >"$tmp/out" 2>&1
rc=$?
sed 's/^/# /' "$tmp/out" | tail -n 12
ok "no circle in krexd/, gate/, common/; nothing from common/ up; no file over 800 lines" \
	test "$rc" = 0
mkdir -p "$tmp/b/krexd"
printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' >"$tmp/a.c"
printf 'int a(int);\nint b(int x) { return x ? a(x - 1) : 1; }\n' >"$tmp/b.c"
cc -c -o "$tmp/b/krexd/a.o" "$tmp/a.c" && cc -c -o "$tmp/b/krexd/b.o" "$tmp/b.c"
python3 "$L" "$tmp/b" >"$tmp/planted" 2>&1
rc=$?
sed 's/^/# /' "$tmp/planted" | grep circle
ok "a planted circle is found (exit 1)" test "$rc" = 1
ok "and named" grep -q "^circle in krexd/: krexd/a.c krexd/b.c" "$tmp/planted"
done_testing
