#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# telemetry-bench.sh - what NVML's process list at a region's start costs
# the region's entry, with N participants whose processes the mock NVML
# (TEST DOUBLE) lists on the GPU, as with N agent sessions on one GPU, and
# the list taking PROCS_MS (the H200 took 11-28 ms at 16-32 sessions).  Two
# passes side by side: the list on krexd's event loop (KREXD_PROCS_INLINE=1,
# as before krexd/gpuprocs.c) and on its thread (the default).  Prints, per
# pass, the telemetry at start on the loop, the list itself and the entry
# (close to grant), p50/p95/max in us.
#
#	bash test/perf/telemetry-bench.sh BUILDDIR [N [REGIONS [PROCS_MS]]]   (as root)
#
# KREXD=path runs another krexd binary (a before/after comparison).
set -u
B=$(cd "${1:?usage: telemetry-bench.sh BUILDDIR [N [REGIONS [PROCS_MS]]]}" && pwd)
N=${2:-32}
R=${3:-40}
MS=${4:-20}
KREXD=${KREXD:-$B/krexd/krexd}
T=$(mktemp -d)
export KREX_MOCK_GPU=/krex-telbench-$$
export LD_LIBRARY_PATH=$B/test/mock/nvml/.libs:$B/test/mock/.libs:$B/libregion/.libs
export KREX_MOCK_NVML=$T/nvml.txt KREX_SOCKET=$T/run/krexd.sock KREX_GPUS=0
SUB=krex-telbench/$$
pids=()
stop_all() {
	local p c
	for p in "${pids[@]}"; do # krex run, its child (the participant), the command
		for c in $(pgrep -P "$p"); do pkill -KILL -P "$c"; kill -KILL "$c"; done 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	pids=()
	[ -n "${KD:-}" ] && kill "$KD" 2>/dev/null
	wait 2>/dev/null
	KD=
	for d in /sys/fs/cgroup/*/$SUB /sys/fs/cgroup/$SUB; do
		[ -d "$d" ] && { rmdir "$d"/* "$d" 2>/dev/null; }
		rmdir "${d%/*}" 2>/dev/null # krex-telbench, once no other run has its folder there
	done
}
cleanup() {
	stop_all
	rm -rf "$T" "/dev/shm$KREX_MOCK_GPU"
}
trap cleanup EXIT
# every participant's command (krex run's grandchild: the participant is
# krex run's child): processes of a participant, not the participant
# itself, as a job's python is
cmds() { for p in "${pids[@]}"; do pgrep -P "$(pgrep -P "$p" | head -n 1)" 2>/dev/null; done; }
# stats LABEL: p50/p95/max of the numbers on stdin
stats() {
	sort -n | awk -v l="$1" '{ a[NR] = $1 } END {
		if (!NR) { printf "  %-24s none\n", l; exit }
		i95 = int(NR * 0.95); if (i95 < 1) i95 = 1
		printf "  %-24s p50 %6d us  p95 %6d us  max %6d us  (%d)\n", l, a[int((NR + 1) * 0.5)], a[i95], a[NR], NR }'
}
# pass MODE: inline or thread
pass() {
	local mode=$1 log=$T/krexd-$1.log list
	rm -rf "$T/run"
	mkdir -p "$T/run"
	printf "max=1980 app=1980 procs_ms=%s\n0 sm=1980 reasons=0 temp=40\n" "$MS" >"$KREX_MOCK_NVML"
	if [ "$mode" = inline ]; then export KREXD_PROCS_INLINE=1; else unset KREXD_PROCS_INLINE; fi
	"$KREXD" -F -r "$T/run" -o gpus=0 -o log_level=debug -o "cgroup_subtree=$SUB" -o settle=off 2>"$log" &
	KD=$!
	unset KREXD_PROCS_INLINE
	for _ in $(seq 100); do [ -S "$KREX_SOCKET" ] && break; sleep 0.1; done
	for i in $(seq "$N"); do
		"$B/krex/krex" run --gpus 0 --no-gate -- sleep 600 &
		pids+=($!)
	done
	for _ in $(seq 200); do
		[ "$(cmds | wc -l)" -ge "$N" ] && break
		sleep 0.1
	done
	list=$(cmds | tr '\n' , | sed 's/,$//')
	printf "max=1980 app=1980 procs_ms=%s\n0 sm=1980 reasons=0 temp=40 pids=%s\n" "$MS" "$list" >"$KREX_MOCK_NVML"
	for _ in $(seq "$R"); do "$B/krex/krex" region --gpus 0 -- true >"$T/region.out" 2>&1; done
	[ -n "${KREX_BENCH_SHOW:-}" ] && { cat "$KREX_MOCK_NVML" "$T/region.out"; tail -5 "$log"; }
	stop_all
	echo "$mode: $N participants on the GPU, $R regions, the list takes $MS ms (mock)"
	grep -o "telemetry at start [0-9]* us" "$log" | awk '{ print $4 }' | stats "telemetry at start"
	grep -o "processes on the GPU: [0-9]* listed in [0-9]* us" "$log" | awk '{ print $8 }' |
		stats "the list (thread)"
	grep -o "entry_us=[0-9]*" "$log" | cut -d= -f2 | stats "entry"
	grep -o "its certificate waited [0-9]* us" "$log" | awk '{ print $4 }' | stats "certificate waited"
}
echo "$KREXD"
pass inline
pass thread
