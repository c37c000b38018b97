#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# krex status --watch: a fresh view every interval; without a terminal the
# views follow each other after "--- time" lines, no terminal code; on a
# terminal (script(1)'s pty) the screen is cleared before each; it ends with
# status 0 on SIGINT, when its reader goes (| head), on Ctrl-D; krexd going
# away is shown, not fatal.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
KREX=$top_builddir/krex/krex

kt_setup
kt_conf "gpus = g0"
plan 10
ok "krexd starts" krexd_start

"$KREX" status --watch --interval 0.2 >"$KT_DIR/watch.out" 2>&1 &
w=$!
KT_PIDS="$KT_PIDS $w"
views() { [ "$(grep -c '^--- ' "$KT_DIR/watch.out")" -ge "$1" ]; }
ok "three views (0.2 s apart; 10 s guard)" wait_for 10 views 3
ok "each a whole status (GPU table)" test "$(grep -c '^g0 ' "$KT_DIR/watch.out")" -ge 3
ok "no terminal code when stdout is a file" sh -c "! grep -q \$(printf '\\033') '$KT_DIR/watch.out'"
krexd_stop
ok "krexd gone: said, and it keeps watching" wait_for 10 grep -q 'no krexd answers' "$KT_DIR/watch.out"
kill -INT "$w"
wait "$w"
ok "SIGINT ends it with status 0" test $? = 0
krexd_start

timeout 5 sh -c "'$KREX' status --watch --interval 0.1 | head -n 3 >/dev/null"
ok "its reader going (| head) ends it, status 0" test $? = 0

if command -v script >/dev/null; then
	# a pty: Ctrl-D (EOF on the terminal) ends it; the screen was cleared
	(sleep 1; printf '\004') | timeout 10 script -qfec "'$KREX' status --watch --interval 0.2" \
		"$KT_DIR/tty.out" >/dev/null 2>&1
	ok "on a terminal Ctrl-D ends it, status 0" test $? = 0
	ok "and each view clears the screen" grep -q "$(printf '\033\\[H\033\\[2J')Every 0.2s: krex status" "$KT_DIR/tty.out"
else
	skip "on a terminal Ctrl-D ends it, status 0" "no script(1)"
	skip "and each view clears the screen" "no script(1)"
fi
"$KREX" status --watch --interval 0 >"$KT_DIR/bad.out" 2>&1
ok "--interval 0 refused (exit 2)" test $? = 2
done_testing
