#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krexd-movehold.sh - KREXD_MOVE_HOLD_MS (krexd(8)): the mover thread's moves
# not begun wait from a region's close to its grant, at most that long from
# the close (doc/architecture.md "Making a participant": on cgroup v2 a
# freeze's writes wait behind a move under way).  A sibling whose drain acks
# wait for a file holds a region in its drain for as long as the test
# chooses (drain_timeout 60 s): a REGISTER that comes meanwhile is answered
# only after the grant, its move logged as held; with a bound of 300 ms it
# is answered while the region still drains; without the variable it is not
# held; a region whose owner is killed during its drain releases the hold;
# krexd stops promptly with a move held.  Waits on krexd's log, its status
# and the clients' output.  One cgroup freezer (the hold is the mover's,
# whichever freezer it moves for).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

need_root
kt_setup
F=
for f in $(kt_freezers); do [ "$f" != signal ] && [ -z "$F" ] && F=$f; done
[ -n "$F" ] || skip_all "no cgroup freezer here (the signal freezer moves nothing)"
MET=$KT_DIR/krex.prom
kt_conf "gpus = g0" "log_level = debug" "drain_timeout = 60s" "metrics_file = $MET"
# the metrics file's sum of the moves' holds, over 0
held_metric() {
	v=$(python3 "$top_srcdir/test/integration/promcheck.py" --value krex_participant_move_held_seconds_total "$MET" 2>/dev/null)
	awk "BEGIN { exit !(${v:-0} > 0) }"
}
LOG=$KT_DIR/krexd.log
ACK=$KT_DIR/ack
logs() { grep -q "$1" "$LOG" || { diag "no '$1' in krexd's log"; return 1; }; }
# line N of krexd's log that has TEXT (the first), for their order
line_of() { grep -n "$1" "$LOG" | head -n 1 | cut -d: -f1; }
# a region's gates closed (its drain waits for the sibling's ack)
draining() { wait_for 10 grep -qs "region [0-9]*: gates closed" "$LOG"; }
granted() { grep -qs '^outcome=' "$KT_DIR/$1.out"; }
registered() { grep -qs registered "$KT_DIR/$1.out"; }
# held_us PID: what krexd's line for PID's move says was held for regions' entries
held_us() { sed -n "s/.*: pid $1 .*, \\([0-9]*\\) us of it held for regions' entries.*/\\1/p" "$LOG" | head -n 1; }
# start KREXD_MOVE_HOLD_MS: a krexd of its own with that hold ("": none)
start() {
	krexd_stop
	: >"$LOG"
	rm -f "$ACK"
	for v in $KT_PIDS; do kill -KILL "$v" 2>/dev/null; done
	KT_PIDS=
	KREXD_MOVE_HOLD_MS=$1 krexd_start -o freezer=$F && kt_participant s --ack-after "$ACK"
}
plan 20

ok "$F, KREXD_MOVE_HOLD_MS=600000: krexd starts, a sibling whose acks wait for a file" start 600000
ok "... krexd says the hold is on" logs "KREXD_MOVE_HOLD_MS=600000: moves not begun wait while a region enters"
kt_bg r "$CLIENT" region --gpus g0 --hold-ms 10
ok "a region enters and drains (the sibling's ack held)" draining
kt_bg a "$CLIENT" participant
ok "a REGISTER meanwhile: its move goes to the mover thread" \
	wait_for 10 grep -q "pid $a goes into cgroup .* on the mover thread" "$LOG"
ok "... and is held: krexd's status lists it as moving while the region drains" \
	sh -c "'$CLIENT' status | grep -q ' pid=$a uid=[0-9]* state=16 ' && ! grep -qs '^outcome=' '$KT_DIR/r.out'"
touch "$ACK"
ok "the sibling acks: the region is granted" wait_for 20 granted r
ok "... the REGISTER is answered" wait_for 10 registered a
ok "... its move logged after the grant" \
	test "$(line_of "pid $a .*moved in by the mover thread")" -gt "$(line_of "region [0-9]*: granted")"
ok "... with the time it was held ($(held_us "$a") us)" test "$(held_us "$a")" -gt 0
ok "... and the metrics file sums it" wait_for 10 held_metric

ok "KREXD_MOVE_HOLD_MS=300: krexd restarts" start 300
kt_bg r "$CLIENT" region --gpus g0 --hold-ms 10
draining
kt_bg b "$CLIENT" participant
ok "a REGISTER during a drain longer than the bound is answered while it drains" \
	eval 'wait_for 10 registered b && ! granted r'
ok "... its move held at most the bound ($(held_us "$b") us)" test "$(held_us "$b")" -le 300000 -a -n "$(held_us "$b")"

ok "no KREXD_MOVE_HOLD_MS: krexd restarts" start ""
kt_bg r "$CLIENT" region --gpus g0 --hold-ms 10
draining
kt_bg c "$CLIENT" participant
ok "a REGISTER during a drain is answered while it drains, not held" \
	eval 'wait_for 10 registered c && ! granted r && test "$(held_us "$c")" = 0'

ok "KREXD_MOVE_HOLD_MS=600000: krexd restarts" start 600000
kt_bg r "$CLIENT" region --gpus g0 --hold-ms 10
draining
kt_bg d "$CLIENT" participant
wait_for 10 grep -q "pid $d goes into cgroup .* on the mover thread" "$LOG"
kill -KILL "$r"
ok "the region's owner killed during its drain: the held REGISTER is answered" wait_for 20 registered d
ok "... not granted, held no longer than the drain ($(held_us "$d") us)" \
	eval '! granted r && test -n "$(held_us "$d")"'

kt_bg r "$CLIENT" region --gpus g0 --hold-ms 10
wait_for 10 sh -c "test \$(grep -c 'gates closed' '$LOG') -ge 2"
kt_bg h "$CLIENT" participant
wait_for 10 grep -q "pid $h goes into cgroup .* on the mover thread" "$LOG"
kill -TERM "$KREXD_PID"
ok "krexd stops promptly with a move held" wait_for 10 kt_gone "$KREXD_PID"
KREXD_PID=
ok "... and leaves no cgroup of its own" eval '! ls -d /sys/fs/cgroup/*/"$KT_SUB"/p* /sys/fs/cgroup/"$KT_SUB"/p* >/dev/null 2>&1'
kt_thaw_all
for v in $KT_PIDS; do kill -KILL "$v" 2>/dev/null; done
kt_rm_cgroups
done_testing
