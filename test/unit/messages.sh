#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Every user-visible message on one source line (scripts/check-messages.sh),
# and the check itself catches a split message and lets a usage text pass.
. "$top_srcdir/test/lib.sh"
check=$top_srcdir/scripts/check-messages.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

plan 3
tree_clean() { "$check" "$top_srcdir" >"$tmp/tree" 2>&1; local rc=$?; sed 's/^/# /' "$tmp/tree"; return $rc; }
ok "no message split across source lines" tree_clean

mkdir "$tmp/split" "$tmp/usage"
printf '%s\n' 'void f(void)' '{' '	log_warn("participant %u holds "' '	         "a region", 1);' '}' >"$tmp/split/a.c"
printf '%s\n' 'void g(void)' '{' '	fprintf(stderr, "usage: x [-v]\n"' '	                "  -v  verbose\n");' '}' >"$tmp/usage/b.c"
split_found() { ! "$check" "$tmp/split" >"$tmp/out" 2>&1 && grep -q 'a.c:3: message split' "$tmp/out"; }
ok "a split message is reported with its file and line" split_found
usage_passes() { "$check" "$tmp/usage" >/dev/null 2>&1; }
ok "a usage text of whole lines passes" usage_passes
done_testing
