#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ungated-on-gpu.sh - siblings that never joined the gate, on a real GPU, in
# one call (doc/containers.md "What a region's certificate says about an
# ungated task").
#
#	bash test/gpu/ungated-on-gpu.sh [BUILDDIR]     (from the source tree's root, as root)
#
# A private krexd on GPU 0 and, in turn, as siblings of an owner's `krex
# region --json -- true`:
#   cpu      `krex run --no-gate -- sleep`: no gate, no CUDA context
#   gpu      + `krex run --no-gate -- python3 settle_job.py hog` (torch
#            matmuls): no gate, a CUDA context; NVML lists its pid
#   gated    the GPU hog stopped; the same hog under `krex run` (gated)
# Expected: cpu: ungated 1, ungated_gpu 0, no "never joined" cause; gpu:
# ungated 2, ungated_gpu 1, degraded, the note naming the hog's pid; gated:
# ungated 1 (the sleep), ungated_gpu 0, no "never joined" cause.  Prints a
# table (step, expected, got, PASS/FAIL) last; the certificates under $OUT
# (default ./ungated-out).  About 1 minute; every step has a limit.
#
# KREX_GPU_MOCK=1: a dry run on the mock NVML and the mock CUDA driver
# (TEST DOUBLES), no GPU or torch: the mock NVML does not see the mock
# driver's processes, so the script puts the GPU hog's pid on it (pids=)
# where the real NVML would list it; it checks the script, not NVML.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/test/gpu/gpu-lib.sh"
gpu_out ungated-out
gpu_start "${1:-}"
gpu_krex_env ungated
export PYTHONDONTWRITEBYTECODE=1
[ "$MOCK" = 1 ] && export KREX_SETTLE_MOCK=1
HOG="python3 $src/test/gpu/settle_job.py hog --size 2048 --seconds 150"
gpu_rows
child() { [ -n "$1" ] && pgrep -P "$1" | head -n 1; }
# sib NAME [krex run options] -- CMD...: a sibling under krex run (timeout ->
# krex run's watcher -> the participant -> the command); the command's pid
# into $W/NAME.pid once it runs.
sib() {
	local name=$1 w cmd
	shift
	timeout 200 "$KREX" run --label "$name" "$@" >"$W/$name.log" 2>&1 &
	w=$!
	PIDS="$PIDS $w"
	for _ in $(seq 100); do
		cmd=$(child "$(child "$(child "$w")")")
		[ -n "$cmd" ] && { echo "$cmd" >"$W/$name.pid"; echo "$w" >"$W/$name.w"; return 0; }
		sleep 0.1
	done
	echo "FAIL: sibling $name did not start (see $W/$name.log)"
	exit 1
}
# owner STEP: one region around `true`; its certificate in $OUT/STEP.json.
owner() {
	timeout 60 "$KREX" region --json -- true 2>"$OUT/$1.json" >/dev/null ||
		echo "warning: krex region $1 failed: $(tail -2 "$OUT/$1.json")"
}
j() { # j STEP KEY: a member of STEP's certificate (its last JSON line; null; strings unquoted)
	python3 -c '
import json, sys
c = [ln for ln in open(sys.argv[1]) if ln.startswith("{")][-1]
v = json.loads(c).get(sys.argv[2])
print("null" if v is None else v)' "$OUT/$1.json" "$2" 2>/dev/null || echo "?"
}
# Wait until NVML lists pid $1 (the hog's CUDA context exists): nvidia-smi,
# or the mock's script written by the test.
on_gpu() {
	if [ "$MOCK" = 1 ]; then
		printf 'max=1980 app=1980\n0 sm=1980 reasons=0 temp=40 pids=%s\n' "$1" >"$W/nvml.tmp" &&
			mv "$W/nvml.tmp" "$KREX_MOCK_NVML"
		return 0
	fi
	for _ in $(seq 300); do
		nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -qx "$1" && return 0
		sleep 0.1
	done
	return 1
}
off_gpu() {
	[ "$MOCK" = 1 ] && printf 'max=1980 app=1980\n0 sm=1980 reasons=0 temp=40\n' >"$KREX_MOCK_NVML"
	return 0
}

echo "build: $B; GPU before: $(gpu_clocks)"
mkdir -p "$W/run"
krexd_up "$W/krexd.log" -v -r "$W/run" -o gpus=0 -o "cgroup_subtree=krex-ungated-$$"

# cpu: a sibling without gate and without a CUDA context
sib cpu --no-gate -- sleep 300
owner cpu
gpu_row "cpu: ungated/ungated_gpu" "1/0" "$(j cpu ungated)/$(j cpu ungated_gpu)"
gpu_row "cpu: named not on the GPU" "participant [0-9]+ \\(pid [0-9]+\\) not on the GPU" "$(j cpu ungated_who)"
gpu_row "cpu: no 'never joined' cause (outcome $(j cpu outcome))" "0" "$(j cpu note | grep -c 'never joined')"

# gpu: a torch sibling without gate, its context on the GPU
sib gpu --no-gate -- $HOG
GPID=$(cat "$W/gpu.pid")
on_gpu "$GPID" || echo "warning: NVML did not list the GPU hog's pid $GPID within 30 s"
sleep 1
owner gpu
gpu_row "gpu: ungated/ungated_gpu" "2/1" "$(j gpu ungated)/$(j gpu ungated_gpu)"
gpu_row "gpu: degraded" "degraded" "$(j gpu outcome)"
gpu_row "gpu: the cause names the hog's process" "1" \
	"$(j gpu note | grep -c "never joined the gate and its process $GPID is on the GPU")"

# gated: the GPU hog stopped, the same hog under the gate
kill_tree "$(cat "$W/gpu.w")"
for _ in $(seq 100); do kill -0 "$GPID" 2>/dev/null || break; sleep 0.1; done
off_gpu
sib gated -- $HOG
on_gpu "$(cat "$W/gated.pid")" || echo "warning: NVML did not list the gated hog within 30 s"
sleep 1
owner gated
gpu_row "gated: ungated/ungated_gpu (the sleep only)" "1/0" "$(j gated ungated)/$(j gated ungated_gpu)"
gpu_row "gated: drained" "1" "$(j gated drained)"
gpu_row "gated: no 'never joined' cause (outcome $(j gated outcome): $(j gated note))" "0" \
	"$(j gated note | grep -c 'never joined')"
stop_all
krexd_down
left=$(grep -l '^State:.*T (stopped)' /proc/[0-9]*/status 2>/dev/null | wc -l)
echo "GPU after: $(gpu_clocks); stopped processes left on the machine: $left"
gpu_table ungated-on-gpu step
