#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# telemetry-bench.sh - how long krexd's telemetry at a region's start takes
# (the NVML process list mapped to participants; acks wait meanwhile) with
# N participants whose processes the mock NVML (TEST DOUBLE) lists on the
# GPU, as with N agent sessions on one GPU.  Prints p50/p95/max in us.
#
#	bash test/perf/telemetry-bench.sh BUILDDIR [N [REGIONS]]   (as root)
#
# KREXD=path runs another krexd binary (a before/after comparison).
set -u
B=$(cd "${1:?usage: telemetry-bench.sh BUILDDIR [N [REGIONS]]}" && pwd)
N=${2:-32}
R=${3:-40}
KREXD=${KREXD:-$B/krexd/krexd}
T=$(mktemp -d)
export KREX_MOCK_GPU=/krex-telbench-$$
export LD_LIBRARY_PATH=$B/test/mock/nvml/.libs:$B/test/mock/.libs:$B/libregion/.libs
export KREX_MOCK_NVML=$T/nvml.txt KREX_SOCKET=$T/run/krexd.sock KREX_GPUS=0
SUB=krex-telbench/$$
pids=()
cleanup() {
	local p c
	for p in "${pids[@]}"; do # krex run, its child (the participant), the command
		for c in $(pgrep -P "$p"); do pkill -KILL -P "$c"; kill -KILL "$c"; done 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	[ -n "${KD:-}" ] && kill "$KD" 2>/dev/null
	wait 2>/dev/null
	for d in /sys/fs/cgroup/*/$SUB /sys/fs/cgroup/$SUB; do
		[ -d "$d" ] && { rmdir "$d"/* "$d" 2>/dev/null; }
	done
	rm -rf "$T" "/dev/shm$KREX_MOCK_GPU"
}
trap cleanup EXIT
printf "max=1980 app=1980\n0 sm=1980 reasons=0 temp=40\n" >"$KREX_MOCK_NVML"
mkdir -p "$T/run"
"$KREXD" -F -r "$T/run" -o gpus=0 -o log_level=debug -o "cgroup_subtree=$SUB" -o settle=off 2>"$T/krexd.log" &
KD=$!
for _ in $(seq 100); do [ -S "$KREX_SOCKET" ] && break; sleep 0.1; done
for i in $(seq "$N"); do
	"$B/krex/krex" run --gpus 0 --no-gate -- sleep 600 &
	pids+=($!)
done
# every participant's command (krex run's grandchild: the participant is
# krex run's child) running, then all of them listed on the GPU: processes
# of a participant, not the participant itself, as a job's python is
cmds() { for p in "${pids[@]}"; do pgrep -P "$(pgrep -P "$p" | head -n 1)" 2>/dev/null; done; }
for _ in $(seq 200); do
	[ "$(cmds | wc -l)" -ge "$N" ] && break
	sleep 0.1
done
list=$(cmds | tr '\n' , | sed 's/,$//')
printf "max=1980 app=1980\n0 sm=1980 reasons=0 temp=40 pids=%s\n" "$list" >"$KREX_MOCK_NVML"
for _ in $(seq "$R"); do "$B/krex/krex" region --gpus 0 -- true >"$T/region.out" 2>&1; done
[ -n "${KREX_BENCH_SHOW:-}" ] && { cat "$KREX_MOCK_NVML" "$T/region.out"; tail -5 "$T/krexd.log"; }
grep -o "telemetry at start [0-9]* us" "$T/krexd.log" | awk '{ print $4 }' | sort -n |
	awk -v n="$N" -v k="$KREXD" '{ a[NR] = $1 } END {
		if (!NR) { print "no telemetry lines (krexd too old, or no region)"; exit 1 }
		i95 = int(NR * 0.95); if (i95 < 1) i95 = 1
		printf "%s: %d participants on the GPU, %d regions: telemetry at start p50 %d us, p95 %d us, max %d us\n",
		       k, n, NR, a[int((NR + 1) * 0.5)], a[i95], a[NR] }'
