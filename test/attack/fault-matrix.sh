#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fault-matrix.sh [RUNS] - every fault case RUNS times (default 100) per
# freezer (FREEZERS, default: cgroup1 and signal where the node has them),
# and after each run: no test process left stopped or pinned (on fewer CPUs
# than the script has), no freezer cgroup left FROZEN, no participant FROZEN
# or GATED in STATUS, the gate page open.
# Prints one table line per case and freezer (markdown, for doc/security.md)
# and exits 1 if anything was left.  Needs root (run from the build tree:
# top_srcdir/top_builddir default to the tree this script is in).
#
# Cases: owner SIGKILL, krexd SIGKILL + restart, krexd SIGTERM + restart,
# lease expiry, a sibling that never acks the drain, a sibling that forks
# all the time, 20 clients that never read (slow readers), 1000 idle
# connections of one user (fd exhaustion).  The Slurm cases (scancel,
# slurmd restart mid-region) are test/attack/fault-matrix-slurm.sh.
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
RUNS=${1:-100}
at_setup
kt_conf "gpus = g0" "max_region = 300ms" "drain_timeout = 100ms" "max_conns_per_uid = 2000"
FREEZERS=${FREEZERS:-$(kt_freezers | sed 's/cgroup2//')}

# ---- the checks ----
ALL_CPUS=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
left=""
fm_check() {
	local p st bad=0 d cpus
	for p in $a $b $FORKER_PIDS $(for f in $FORKER_PIDS; do pgrep -P "$f"; done); do
		st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)
		[ "$st" = T ] && { left="$left stopped:$p"; bad=1; }
		# pinned: the isolation left it on fewer CPUs than it started with
		cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null)
		[ -n "$cpus" ] && [ "$cpus" != "$ALL_CPUS" ] && { left="$left pinned:$p:$cpus"; bad=1; }
	done
	for d in /sys/fs/cgroup/freezer/$KT_SUB/p*; do
		[ -f "$d/freezer.state" ] && grep -q FROZEN "$d/freezer.state" && { left="$left frozen:$d"; bad=1; }
	done
	if "$CLIENT" status >"$KT_DIR/fm.status" 2>/dev/null; then
		grep -Eq 'state=[1-3] ' "$KT_DIR/fm.status" && { left="$left status-frozen-or-gated"; bad=1; }
	fi
	[ "$(od -An -tu4 -j 32 -N 4 "$KT_DIR/gate" 2>/dev/null | tr -d ' ')" = 0 ] || { left="$left gate-closed"; bad=1; }
	return $bad
}
# wait until no region is held (the fault ended it), at most 5 s
fm_settle() { wait_for 5 sh -c "! '$CLIENT' status 2>/dev/null | grep -q '^region '"; }

# ---- one run of each case ----
fm_region_nowait() { kt_bg owner "$CLIENT" region --gpus g0 --no-end "$@"; wait_for 5 grep -qs granted "$KT_DIR/owner.out"; }
case_owner_kill() { fm_region_nowait && sleep 0.05; kill -KILL "$owner"; wait "$owner" 2>/dev/null; fm_settle; }
case_krexd_kill() {
	fm_region_nowait && sleep 0.05
	kill -KILL "$KREXD_PID"; wait "$KREXD_PID" 2>/dev/null; KREXD_PID=
	kill -KILL "$owner" 2>/dev/null
	krexd_start -o freezer="$F" && fm_participants
}
case_krexd_term() {
	fm_region_nowait && sleep 0.05
	krexd_stop; kill -KILL "$owner" 2>/dev/null
	krexd_start -o freezer="$F" && fm_participants
}
case_lease() { fm_region_nowait; fm_settle; kill -KILL "$owner" 2>/dev/null; }
case_noack() { fm_region_nowait; sleep 0.05; kill -KILL "$owner"; fm_settle; }
case_forker() { fm_region_nowait; sleep 0.1; kill -KILL "$owner"; fm_settle; }
case_slowread() {
	at_bg atk "$ATTACK" noread 20 1
	fm_region_nowait; sleep 0.1; kill -KILL "$owner"; fm_settle; wait "$atk" 2>/dev/null
}
case_fds() {
	at_bg atk "$ATTACK" conns 1000 1
	wait_for 10 grep -qs open= "$KT_DIR/atk.out"
	fm_region_nowait; sleep 0.05; kill -KILL "$owner"; fm_settle; wait "$atk" 2>/dev/null
}

# participants of the case: two that ack, plus the case's own
FORKER_PIDS=
a=
b=
# only what this script started (never other users' processes)
fm_kill_participants() {
	local p
	for p in $a $b $FORKER_PIDS; do kill -KILL "$p" 2>/dev/null; done
	for p in $a $b $FORKER_PIDS; do wait "$p" 2>/dev/null; done
	a= b= FORKER_PIDS=
}
fm_participants() {
	fm_kill_participants
	kt_participant a --gpus g0 --ack-drains
	case $CASE in
	noack) kt_participant b --gpus g0 --gate-noack ;;
	forker)
		# a sibling that forks a child every 10 ms, registered by root as a participant
		bash -c 'while :; do (sleep 0.02 &); sleep 0.01; done' &
		FORKER_PIDS=$!
		KT_PIDS="$KT_PIDS $!"
		"$CLIENT" as-pid "$FORKER_PIDS" >/dev/null 2>&1 ;;
	*) kt_participant b --gpus g0 --ack-drains ;;
	esac
}

echo "| case | freezer | runs | left frozen, gated or stopped |"
echo "| --- | --- | --- | --- |"
rc=0
for F in $FREEZERS; do
	for CASE in ${CASES:-owner_kill krexd_kill krexd_term lease noack forker slowread fds}; do
		krexd_start -o freezer="$F" || { echo "| $CASE | $F | 0 | krexd did not start |"; rc=1; continue; }
		fm_participants
		bad=0
		left=""
		for i in $(seq 1 "$RUNS"); do
			"case_$CASE"
			fm_check || bad=$((bad + 1))
		done
		echo "| $CASE | $F | $RUNS | $bad${left:+ ($(echo $left | cut -c1-80))} |"
		[ "$bad" = 0 ] || rc=1
		kt_thaw_all
		fm_kill_participants
		krexd_stop
	done
done
exit $rc
