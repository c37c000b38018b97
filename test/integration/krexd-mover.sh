#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krexd-mover.sh - a new participant's pid goes into its cgroup on krexd's
# mover thread, not on its loop (doc/architecture.md "Making a participant"):
# the write waits for an RCU grace period on a busy node, and the loop
# serves every region meanwhile.  KREX_TEST_MOVE_HOLD=FILE holds each move
# while FILE exists, so that the test acts while a move is surely under way:
# the loop answers a status and grants and ends another participant's region
# meanwhile; the REGISTER is answered only once its pid is in its cgroup; a
# second REGISTER of the same pid waits with it and gets the same
# participant; anything else on that connection is refused meanwhile; a pid
# that dies during its move leaves no participant and no cgroup; krexd stops
# with a move held; KREXD_MOVE_INLINE=1 moves on the loop, as before.  Each
# cgroup freezer of the node (v1, v2), the mover being theirs alone.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

need_root
kt_setup
HOLD=$KT_DIR/hold
export KREX_TEST_MOVE_HOLD="$HOLD"
kt_conf "gpus = g0" "log_level = debug"
LOG=$KT_DIR/krexd.log

FZ=
for f in $(kt_freezers); do [ "$f" != signal ] && FZ="$FZ $f"; done
[ -n "$FZ" ] || skip_all "no cgroup freezer here (the signal freezer moves nothing)"
n=0
for f in $FZ; do n=$((n + 20)); done
plan $n

# The mount of each hierarchy, and PID's cgroup in the freezer's.
V1=$(awk '$9 == "cgroup" && $NF ~ /(^|,)freezer(,|$)/ { print $5; exit }' /proc/self/mountinfo)
V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
cgof() {
	if [ "$F" = cgroup1 ]; then
		sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}freezer\(,[^:]*\)\{0,1\}://p' "/proc/$1/cgroup"
	else
		sed -n 's/^0:://p' "/proc/$1/cgroup"
	fi
}
# incg PID: PID is in a participant cgroup of this test's krexd
incg() { cgof "$1" | grep -q "^/$KT_SUB/p[0-9]*\$"; }
logs() { grep -q "$1" "$LOG" || { diag "no '$1' in krexd's log"; return 1; }; }
held() { wait_for 10 grep -q "pid $1 goes into cgroup .* on the mover thread" "$LOG"; }
# the cgroup krexd said pid $1 goes into
cg_said() { sed -n "s/.*: pid $1 goes into cgroup \\(.*\\) on the mover thread.*/\\1/p" "$LOG" | head -n 1; }
KREX=$top_builddir/krex/krex
# status lists pid $1's participant as moving (state bit 0x10, and nothing else)
status_moving() {
	"$CLIENT" status >"$KT_DIR/st.out" && grep -q " pid=$1 uid=[0-9]* state=16 " "$KT_DIR/st.out" ||
		{ diag "$(cat "$KT_DIR/st.out")"; return 1; }
}
# krex status, text and JSON, says "moving" for it
krex_says_moving() {
	"$KREX" status >"$KT_DIR/ks.out" && grep -q "$1.*moving" "$KT_DIR/ks.out" &&
		"$KREX" status --json | grep -q "\"pid\":$1,[^}]*\"state\":\"moving\"" ||
		{ diag "$(cat "$KT_DIR/ks.out")"; return 1; }
}
both_one() {
	a=$(sed -n 's/^1 registered //p' "$KT_DIR/p.out")
	b=$(sed -n 's/^2 registered //p' "$KT_DIR/p.out")
	[ -n "$a" ] && [ "$a" = "$b" ] || { diag "$(cat "$KT_DIR/p.out")"; return 1; }
}
# a region of participant s (its process put in s's cgroup first: it joins s, nothing to move)
region_of_s() {
	sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" region --gpus g0 --hold-ms 20' sh \
		"$ROOT$(cgof "$s")" "$CLIENT" >"$KT_DIR/r.out" 2>&1 &&
		grep -q '^outcome=' "$KT_DIR/r.out" || { diag "$(cat "$KT_DIR/r.out")"; return 1; }
}
no_cgroups() { ! ls -d "$ROOT/$KT_SUB"/p* >/dev/null 2>&1; }

for F in $FZ; do
	if [ "$F" = cgroup1 ]; then ROOT=$V1; else ROOT=$V2; fi
	: >"$LOG"
	rm -f "$HOLD"
	ok "$F: krexd starts" krexd_start -o freezer=$F
	kt_participant s --ack-drains
	ok "$F: a participant made with no hold is in its own cgroup" incg "$s"
	ok "... its pid moved in by the mover thread" logs "pid $s .*moved in by the mover thread"

	touch "$HOLD"
	kt_bg a "$CLIENT" participant --counter "$KT_DIR/a.count"
	ok "$F: a REGISTER whose move is held: its pid goes in on the mover thread" held "$a"
	ok "... it is not answered yet" eval '! grep -qs registered "$KT_DIR/a.out"'
	ok "... and its pid is not in its cgroup yet" eval '! incg "$a"'
	ok "... krexd's loop answers a status meanwhile, which lists its participant as moving" \
		status_moving "$a"
	ok "... and krex status says so, in text and in JSON" krex_says_moving "$a"
	ok "... and grants and ends another participant's region meanwhile" region_of_s
	rm -f "$HOLD"
	ok "... the REGISTER is answered once the move is done" wait_for 10 grep -qs registered "$KT_DIR/a.out"
	ok "... its pid in its own cgroup" incg "$a"
	ok "... krexd logs the move's time and its wait" \
		logs "pid $a .*(made in [0-9]* us); moved in by the mover thread in [0-9]* us after [0-9]* us queued"

	touch "$HOLD"
	kt_bg p "$CLIENT" pipelined "$KT_DIR/p.end"
	held "$p"
	ok "$F: a STATUS behind a held REGISTER on its connection is refused at once" \
		wait_for 10 grep -qs "^1 error 4 .*not answered yet" "$KT_DIR/p.out"
	rm -f "$HOLD"
	ok "... two REGISTERs of that pid get one participant when its move is done" wait_for 10 both_one
	ok "... and krexd moved it once" test "$(grep -c "pid $p goes into cgroup" "$LOG")" = 1
	touch "$KT_DIR/p.end"

	touch "$HOLD"
	kt_bg d "$CLIENT" participant
	held "$d"
	dcg=$(cg_said "$d")
	kill -KILL "$d"
	wait "$d" 2>/dev/null
	rm -f "$HOLD"
	ok "$F: a pid killed during its move: no participant, and krexd says why" \
		wait_for 10 grep -q "participant [0-9]*: pid $d not moved into cgroup" "$LOG"
	ok "... its cgroup removed" test -n "$dcg" -a ! -d "$dcg"

	touch "$HOLD"
	kt_bg h "$CLIENT" participant
	held "$h"
	kill -TERM "$KREXD_PID"
	ok "$F: krexd stops with a move held, and removes every cgroup it made" \
		eval 'wait_for 10 kt_gone "$KREXD_PID" && no_cgroups'
	krexd_stop
	rm -f "$HOLD"
	kt_thaw_all
	for v in $KT_PIDS; do kill -KILL "$v" 2>/dev/null; done

	: >"$LOG"
	touch "$HOLD"
	export KREXD_MOVE_INLINE=1
	krexd_start -o freezer=$F
	unset KREXD_MOVE_INLINE
	kt_participant i
	ok "$F, KREXD_MOVE_INLINE=1: a participant is made in its cgroup, the hold notwithstanding" incg "$i"
	ok "... on the loop: no mover thread" eval '! grep -qE "on the mover thread|by the mover thread" "$LOG"'
	krexd_stop
	rm -f "$HOLD"
	for v in $KT_PIDS; do kill -KILL "$v" 2>/dev/null; done
	kt_rm_cgroups
done
done_testing
