#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Per-uid quotas: connections, participants, queued regions, buffered bytes
# (partial frames) with clear errors, memory back after the connections
# close, and the cap on region time per minute.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
at_setup
plan 9
kt_conf "gpus = g0" "freezer = signal" "max_conns_per_uid = 50" "max_parts_per_uid = 5" \
	"max_queued_per_uid = 1" "max_buffer_per_uid = 1048576" "region_time_per_uid = 300ms"
krexd_start

as_user "$ATTACK" conns 100 1 >"$KT_DIR/c.out" 2>&1
diag "$(tr '\n' ' ' <"$KT_DIR/c.out")"
closed=$(sed -n 's/^closed_by_krexd=//p' "$KT_DIR/c.out")
ok "connections past max_conns_per_uid are refused" test "${closed:-0}" -ge 50
ok "with a clear error" grep -qs 'reply=error 14 uid .*max_conns_per_uid' "$KT_DIR/c.out"

as_user "$ATTACK" register 10 g0 >"$KT_DIR/p.out" 2>&1
diag "$(tr '\n' ' ' <"$KT_DIR/p.out")"
ok "participants past max_parts_per_uid are refused" grep -qs 'registered=5 failed=5' "$KT_DIR/p.out"
ok "with a clear error" grep -qs 'last_error=error 14 .*max_parts_per_uid' "$KT_DIR/p.out"

rss0=$(at_rss_kb "$KREXD_PID")
as_user "$ATTACK" partial 40 1 >"$KT_DIR/f.out" 2>&1
rss1=$(at_rss_kb "$KREXD_PID")
diag "$(tr '\n' ' ' <"$KT_DIR/f.out") rss before ${rss0} kB after ${rss1} kB"
closed=$(sed -n 's/^closed_by_krexd=//p' "$KT_DIR/f.out")
ok "partial frames past max_buffer_per_uid are refused" test "${closed:-0}" -ge 20
ok "memory is back after they close (< 4 MB kept)" test $((rss1 - rss0)) -lt 4096

at_bg hold "$CLIENT" region --gpus g0 --hold-ms 250
wait_for 5 grep -qs granted "$KT_DIR/hold.out"
as_user "$CLIENT" region --gpus g0 >"$KT_DIR/q.out" 2>&1
diag "$(tr '\n' ' ' <"$KT_DIR/q.out")"
ok "a second region of the uid past max_queued_per_uid is refused" grep -qs 'error 14 .*max_queued_per_uid' "$KT_DIR/q.out"
wait_for 5 grep -qs outcome= "$KT_DIR/hold.out"
as_user "$CLIENT" region --gpus g0 --max-ms 10000 --hold-ms 600 >"$KT_DIR/t1.out" 2>&1
diag "$(grep -E 'outcome|lease_us' "$KT_DIR/t1.out" | tr '\n' ' ')"
ok "a lease is cut to what is left of region_time_per_uid" grep -qs 'outcome=expired' "$KT_DIR/t1.out"
as_user "$CLIENT" region --gpus g0 >"$KT_DIR/t2.out" 2>&1
diag "$(tr '\n' ' ' <"$KT_DIR/t2.out")"
ok "then the next region in the minute is refused" grep -qs 'error 14 .*region_time_per_uid' "$KT_DIR/t2.out"
done_testing
