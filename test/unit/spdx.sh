#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Every tracked source file carries its SPDX licence line
# (scripts/spdx.sh --check), and the script itself finds a missing line,
# adds it after a "#!" line and adds it only once.
. "$top_srcdir/test/lib.sh"
spdx=$top_srcdir/scripts/spdx.sh
command -v git >/dev/null 2>&1 || skip_all "git not installed"
git -C "$top_srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	skip_all "not a git checkout (a tarball): the tracked-file list is git's"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

plan 5
tree_ok() { sh "$spdx" --check "$top_srcdir" >"$tmp/tree" 2>&1; local rc=$?; sed 's/^/# /' "$tmp/tree"; return $rc; }
ok "every tracked source file has an SPDX-License-Identifier line" tree_ok

r=$tmp/repo
mkdir -p "$r" && git -C "$r" init -q
printf '%s\n' '/* a.c - nothing */' 'int a;' >"$r/a.c"
printf '%s\n' '#!/bin/sh' 'echo hi' >"$r/b.sh"
printf '%s\n' '.TH B 1' >"$r/b.1"
git -C "$r" add a.c b.sh b.1
missing_found() { ! sh "$spdx" --check "$r" >"$tmp/out" 2>&1 && grep -q 'a.c: no SPDX' "$tmp/out" && grep -q 'b.sh: no SPDX' "$tmp/out"; }
ok "a file without the line is reported" missing_found
added() {
	sh "$spdx" "$r" >/dev/null &&
		[ "$(head -n 1 "$r/a.c")" = "/* SPDX-License-Identifier: BSD-3-Clause */" ] &&
		[ "$(head -n 2 "$r/b.sh" | tr '\n' '|')" = "#!/bin/sh|# SPDX-License-Identifier: BSD-3-Clause|" ] &&
		[ "$(head -n 1 "$r/b.1")" = '.\" SPDX-License-Identifier: BSD-3-Clause' ] &&
		sh "$spdx" --check "$r" >/dev/null
}
ok "the line is added in each file's comment syntax, after #!" added
once() { cp "$r/a.c" "$tmp/a.before" && sh "$spdx" "$r" >/dev/null && cmp -s "$r/a.c" "$tmp/a.before"; }
ok "adding twice changes nothing" once
printf 'x\n' >"$r/c.unknownext"
git -C "$r" add c.unknownext
unknown() { ! sh "$spdx" --check "$r" >"$tmp/out" 2>&1 && grep -q 'c.unknownext: no comment syntax known' "$tmp/out"; }
ok "a file of an unknown type is an error, not skipped" unknown
done_testing
