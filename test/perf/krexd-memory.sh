#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# What krexd's memory and fds grow with (doc/scale.md): for each count of
# participants N (KREXD_MEM_PARTS, default "0 1 64 256 1024") a fresh krexd
# (the node's first freezer, or KREXD_MEM_FREEZER), N registered siblings on
# one GPU (krex-testclient bench: each a process with its connection) and
# KREXD_MEM_REGIONS regions (default 5) that freeze and thaw all of them; then
# krexd's peak RSS (VmHWM), its fds at their most (sampled every 10 ms) and its
# RSS once they left.  Prints TAP and a table; fails only when a point does not
# run, never on a figure.  Needs root for the cgroup freezers.
#
#	top_srcdir=$PWD top_builddir=$PWD bash test/perf/krexd-memory.sh
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

parts=${KREXD_MEM_PARTS:-0 1 64 256 1024}
regions=${KREXD_MEM_REGIONS:-5}
freezer=${KREXD_MEM_FREEZER:-$(kt_freezers | cut -d" " -f2)}
[ -x "$CLIENT" ] || skip_all "krex-testclient not built (make -C test/integration krex-testclient)"
kt_setup
kt_conf "gpus = g0"
BENCH=
# a bench stopped half way: its siblings (children, paused) first
mem_cleanup() {
	[ -z "$BENCH" ] || { pkill -KILL -P "$BENCH"; kill -KILL "$BENCH"; } 2>/dev/null
	kt_cleanup
}
trap mem_cleanup EXIT
n=0
for p in $parts; do n=$((n + 1)); done
plan "$n"

kb() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status"; }
# fdmax PID FILE: sample PID's fd count into FILE until FILE.stop exists
fdmax() {
	local m=0 f
	while [ ! -e "$2.stop" ]; do
		f=(/proc/"$1"/fd/*)
		[ ${#f[@]} -gt $m ] && m=${#f[@]}
		sleep 0.01
	done
	echo "$m" >"$2"
}

ROWS=""
point() {
	local n=$1 idle idlefd hwm after fd t fdp
	krexd_start -o freezer="$freezer" || return 1
	idle=$(kb "$KREXD_PID" VmRSS)
	idlefd=$(ls "/proc/$KREXD_PID/fd" | wc -l)
	rm -f "$KT_DIR/fd" "$KT_DIR/fd.stop"
	fdmax "$KREXD_PID" "$KT_DIR/fd" &
	fdp=$!
	t=$(date +%s%N)
	# in the background, so that the EXIT trap can stop it and its siblings
	"$CLIENT" bench --gpus g0 --siblings "$n" --regions "$regions" >"$KT_DIR/bench.out" 2>&1 &
	BENCH=$!
	wait "$BENCH" || { diag "$(cat "$KT_DIR/bench.out")"; touch "$KT_DIR/fd.stop"; wait "$fdp"; krexd_stop; return 1; }
	BENCH=
	t=$((($(date +%s%N) - t) / 1000000))
	touch "$KT_DIR/fd.stop"
	wait "$fdp"
	fd=$(cat "$KT_DIR/fd")
	hwm=$(kb "$KREXD_PID" VmHWM)
	sleep 0.5 # the siblings' exits reach krexd
	after=$(kb "$KREXD_PID" VmRSS)
	krexd_stop
	diag "participants=$n $(cat "$KT_DIR/bench.out")"
	ROWS="$ROWS$(printf '| %5d | %6d | %6d | %s | %5d | %5d | %6d | %6d |' "$n" "$idle" "$hwm" \
		"$([ "$n" -gt 0 ] && awk -v a="$hwm" -v b="$idle" -v n="$n" 'BEGIN { printf "%7.2f", (a - b) / n }' || echo '      -')" \
		"$idlefd" "$fd" "$after" "$t")
"
}
for p in $parts; do
	ok "krexd ($freezer) with $p participants, $regions regions" point "$p"
done
diag "krexd memory and fds by participants (freezer $freezer, $(nproc) CPUs, $(uname -r)):"
diag "| participants | RSS idle (kB) | VmHWM with them (kB) | per participant (kB) | fds idle | fds most | RSS after (kB) | bench (ms) |"
printf '%s' "$ROWS" | sed 's/^/# /'
done_testing
