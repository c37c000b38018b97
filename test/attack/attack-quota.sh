#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Per-uid quotas: connections, participants, queued regions, buffered bytes
# (partial frames) with clear errors, memory back after the connections
# close, and the cap on region time per minute, also for regions queued
# together: the time is charged when a region is granted, not when it ends.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
at_setup
plan 12
kt_conf "gpus = g0" "freezer = signal" "max_conns_per_uid = 50" "max_parts_per_uid = 5" \
	"max_queued_per_uid = 1" "max_buffer_per_uid = 1048576"
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

# the user holds one region until root releases it (an event, not a time)
at_bg hold "$CLIENT" region --gpus g0 --hold-ms 30000 --max-ms 60000
wait_for 5 grep -qs granted "$KT_DIR/hold.out"
as_user "$CLIENT" region --gpus g0 >"$KT_DIR/q.out" 2>&1
diag "$(tr '\n' ' ' <"$KT_DIR/q.out")"
ok "a second region of the uid past max_queued_per_uid is refused" grep -qs 'error 14 .*max_queued_per_uid' "$KT_DIR/q.out"
"$CLIENT" release "$(sed -n 's/^granted //p' "$KT_DIR/hold.out")" >/dev/null 2>&1
wait_for 5 kt_gone "$hold"
krexd_stop

# region_time_per_uid, on a fresh krexd (nothing used yet: no margin of time)
: >"$KT_DIR/krexd.conf"
kt_conf "gpus = g0" "freezer = signal" "region_time_per_uid = 300ms"
krexd_start
as_user "$CLIENT" region --gpus g0 --max-ms 10000 --hold-ms 600 >"$KT_DIR/t1.out" 2>&1
diag "$(grep -E 'outcome|lease_us|error' "$KT_DIR/t1.out" | tr '\n' ' ')"
ok "a lease is cut to what is left of region_time_per_uid (300 ms of 10 s asked)" \
	sh -c "grep -qs 'outcome=expired' '$KT_DIR/t1.out' && grep -qs '^lease_us=300000$' '$KT_DIR/t1.out'"
as_user "$CLIENT" region --gpus g0 >"$KT_DIR/t2.out" 2>&1
diag "$(tr '\n' ' ' <"$KT_DIR/t2.out")"
ok "then the next region in the minute is refused" grep -qs 'error 14 .*region_time_per_uid' "$KT_DIR/t2.out"
krexd_stop

# Four regions queued at once behind root's, each asking for 10 s with a
# cap of 1 s a minute: each is cut to 1 s when queued (nothing used yet), so
# charging only at the end let them hold 4 s.  Charged at the grant: the
# first holds (at most) the 1 s, the three others are refused when their
# turn comes.
: >"$KT_DIR/krexd.conf"
kt_conf "gpus = g0" "freezer = signal" "max_queued_per_uid = 8" "region_time_per_uid = 1s"
krexd_start
kt_bg hold2 "$CLIENT" region --gpus g0 --hold-ms 30000 --max-ms 60000
wait_for 5 grep -qs granted "$KT_DIR/hold2.out"
for i in 1 2 3 4; do
	at_bg "q$i" "$CLIENT" region --gpus g0 --max-ms 10000 --hold-ms 1500
done
wait_for 10 sh -c "[ \$(\"$CLIENT\" status | grep -c 'state=queued') = 4 ]"
rid=$("$CLIENT" status | sed -n 's/^region \([0-9]*\) .*state=held.*/\1/p' | head -n 1)
"$CLIENT" release "$rid" >/dev/null 2>&1
for i in 1 2 3 4; do wait_for 20 grep -qs 'outcome=\|error' "$KT_DIR/q$i.out"; done
held=0
for i in 1 2 3 4; do
	h=$(kt_field "$KT_DIR/q$i.out" held_us)
	held=$((held + ${h:-0}))
done
diag "held in all: $held us; $(cat "$KT_DIR"/q?.out | grep -E 'outcome|lease_us|error' | tr '\n' ' ')"
ok "one of the four queued regions is granted" test "$(cat "$KT_DIR"/q?.out | grep -c '^outcome=')" = 1
ok "the three others are refused at their turn with error 14 (region_time_per_uid)" \
	test "$(cat "$KT_DIR"/q?.out | grep -c 'error 14 .*region_time_per_uid')" = 3
ok "the lease granted is what was left: at most the cap (1 s)" \
	sh -c "[ \"\$(cat '$KT_DIR'/q?.out | sed -n 's/^lease_us=//p')\" -le 1000000 ]"
done_testing
