#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Files krexd writes as root in places an admin chooses (the region log,
# the metrics file and its .tmp): in a world-writable directory an
# unprivileged user may have put something there first.  krexd refuses a
# file owned by another uid (the user's file never receives other users'
# entries), a FIFO (the writer thread never blocks on it, krexd stops at
# once), a symlink, and a .tmp it did not make; it logs each refusal once.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
at_setup
plan 14
P=$KT_DIR/pub
mkdir -m 1777 "$P"

# 1. a regular file of the user in place of the region log and of the metrics .tmp
as_user sh -c "umask 0; : >'$P/regions.jsonl'; : >'$P/krex.prom.tmp'"
kt_conf "gpus = g0" "freezer = signal" "region_log = $P/regions.jsonl" "metrics_file = $P/krex.prom"
krexd_start
"$CLIENT" region --gpus g0 --count 2 --quiet
wait_for 5 grep -q "region log $P/regions.jsonl" "$KT_DIR/krexd.log"
wait_for 5 grep -q "metrics file $P/krex.prom" "$KT_DIR/krexd.log"
"$CLIENT" region --gpus g0 --quiet
diag "$(grep -E 'region log|metrics file' "$KT_DIR/krexd.log" | tr '\n' '|')"
ok "the user's file in place of the region log received nothing" test ! -s "$P/regions.jsonl"
ok "the refusal names the owner" grep -q "region log $P/regions.jsonl: .*owned by uid $AT_UID" "$KT_DIR/krexd.log"
ok "and is logged once" test "$(grep -c "region log $P/regions.jsonl: .*owned by uid" "$KT_DIR/krexd.log")" = 1
ok "the user's .tmp received nothing" test ! -s "$P/krex.prom.tmp"
ok "the metrics file is never the user's file" sh -c "[ ! -e '$P/krex.prom' ] || [ \"\$(stat -c %u '$P/krex.prom')\" = 0 ]"
ok "the .tmp refusal is logged once" test "$(grep -c "metrics file $P/krex.prom: .*krex.prom.tmp" "$KT_DIR/krexd.log")" = 1
krexd_stop

# 2. a FIFO in place of the region log and of the metrics .tmp, nobody reading
rm -f "$P/regions.jsonl" "$P/krex.prom.tmp" "$P/krex.prom"
as_user mkfifo -m 0666 "$P/regions.jsonl" "$P/krex.prom.tmp"
: >"$KT_DIR/krexd.log"
krexd_start
"$CLIENT" region --gpus g0 --quiet
ok "a FIFO as the region log is refused" wait_for 5 grep -q "region log $P/regions.jsonl: .*not a regular file" "$KT_DIR/krexd.log"
ok "a FIFO as the metrics .tmp is refused" wait_for 5 grep -q "metrics file $P/krex.prom: .*krex.prom.tmp" "$KT_DIR/krexd.log"
kill -TERM "$KREXD_PID"
ok "krexd stops at once (its writer thread is not blocked)" wait_for 5 kt_gone "$KREXD_PID"
ok "without waiting for the writer" sh -c "! grep -q 'still writing after' '$KT_DIR/krexd.log'"
krexd_stop

# 3. a FIFO with the user reading it: the open succeeds (a reader is there),
# the check after it refuses; the reader gets nothing
rm -f "$P/regions.jsonl" "$P/krex.prom.tmp"
as_user mkfifo -m 0666 "$P/regions.jsonl"
: >"$KT_DIR/krexd.log"
at_bg reader sh -c "exec 3<>'$P/regions.jsonl'; touch '$P/reading'; while [ ! -e '$P/go' ]; do sleep 0.05; done; timeout 1 cat <&3 >'$P/leak'; touch '$P/read'"
wait_for 5 test -e "$P/reading"
krexd_start
"$CLIENT" region --gpus g0 --quiet
ok "a FIFO someone reads is refused too" wait_for 5 grep -q "region log $P/regions.jsonl: .*not a regular file (a FIFO)" "$KT_DIR/krexd.log"
touch "$P/go"
wait_for 5 test -e "$P/read"
ok "and its reader got nothing" test ! -s "$P/leak"
krexd_stop

# 4. a symlink in place of the region log (to a file of root's)
rm -f "$P/regions.jsonl" "$P/krex.prom.tmp"
echo secret >"$KT_DIR/target"
as_user ln -s "$KT_DIR/target" "$P/regions.jsonl"
: >"$KT_DIR/krexd.log"
krexd_start
"$CLIENT" region --gpus g0 --quiet
wait_for 5 grep -q "region log $P/regions.jsonl" "$KT_DIR/krexd.log"
ok "a symlink as the region log is not followed" test "$(cat "$KT_DIR/target")" = secret
ok "and its refusal is logged" grep -q "region log $P/regions.jsonl" "$KT_DIR/krexd.log"
done_testing
