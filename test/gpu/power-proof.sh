#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# power-proof.sh - the proof of issue 19 on a real GPU, in one call
# (doc/performance-gpu.md "Power-honest certificates").
#
#	bash test/gpu/power-proof.sh [BUILDDIR]     (from the source tree's root, as root)
#
# BUILDDIR: a built tree (default $KREX_BUILDDIR, else the source tree; built
# if it has no krexd, as settle.sh does).  An owner timing power-hungry
# kernels (torch fp16 matmuls of 4096, 6144 and 8192, a region each, about
# REGION_MS ms of them; test/gpu/power_job.py) beside a power-hungry torch
# sibling (8192x8192 fp16 matmuls back to back, under `krex run`):
#   alone  no sibling, no krexd: the same regions (the reference)
#   wait   sibling, krexd settle = wait
#   off    sibling, krexd settle = off
# A mode may come several times (the default interleaves three alone blocks
# with three wait blocks, so that a drift of the GPU over the run, seen as
# +-2.4 % between two alone runs 2 minutes apart, falls on both sides); the
# blocks of a mode are pooled and the table shows each block's p50 beside.
# Prints the table: regions, clean / degraded, degraded for the owner's own
# cap (goal 0 with wait), own cap reached, regions that started capped and
# how many of them were degraded (goal: all, with off), the settle, p50 per
# size versus alone (goal within 2 % with wait); and a verdict.  Writes every
# region's certificate fields as JSON lines and table.md under $OUT (default
# ./power-out).  MODES, REGIONS (24 a block), REGION_MS (120), GAP_MS (300),
# HEAT_S (5) change the run; the defaults take about 3-4 minutes.
# Reads GPU clocks (nvidia-smi), never sets them.  Every step has a limit.
#
# KREX_GPU_MOCK=1: a dry run on the mock NVML (test/mock/mock_nvml.c, a TEST
# DOUBLE) and the mock CUDA driver, without a GPU or torch: a sibling's cap
# inherited at each region and the owner's own cap inside it are scripted; it
# checks the script and the counts; its timings MEAN NOTHING.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/test/gpu/gpu-lib.sh"
gpu_out power-out
MODES=${MODES:-alone wait alone wait alone wait off}
REGIONS=${REGIONS:-24}
REGION_MS=${REGION_MS:-120}
GAP_MS=${GAP_MS:-300}
HEAT_S=${HEAT_S:-5}

gpu_start "${1:-}"
JOB="python3 $src/test/gpu/power_job.py"
HOG="python3 $src/test/gpu/settle_job.py hog"
export PYTHONDONTWRITEBYTECODE=1
gpu_krex_env power
if [ "$MOCK" = 1 ]; then
	export KREX_POWER_MOCK=1 KREX_SETTLE_MOCK=1
	HEAT_S=${HEAT_S_MOCK:-1}
fi

measure() { # CMD...: the owner's regions of block $k of mode $m, appended to $OUT/$m.jsonl
	timeout 150 "$@" $JOB measure --label "$m" --block "$k" --out "$OUT/$m.jsonl" \
		--regions "$REGIONS" --region-ms "$REGION_MS" --gap-ms "$GAP_MS" \
		>"$W/measure-$m-$k.log" 2>&1 ||
		{ echo "FAIL: measure $m block $k (see $W/measure-$m-$k.log)"; tail -5 "$W/measure-$m-$k.log"; exit 1; }
}

echo "build: $B; modes: $MODES; $REGIONS regions of ~${REGION_MS} ms, ${GAP_MS} ms sibling gap"
echo "GPU before: $(gpu_clocks)"
rm -f "$OUT"/*.jsonl
seen=" "
for m in $MODES; do
	[ "$m" = alone-end ] && m=alone # the name of an older run's second reference
	k=$(($(printf %s "$seen" | tr ' ' '\n' | grep -cx "$m") + 1))
	seen="$seen$m "
	case $m in
	alone)
		measure env KREX_UNPROTECTED=1 KREX_SOCKET="$W/none.sock"
		echo "$m (block $k): done; GPU: $(gpu_clocks)"
		continue
		;;
	wait | off | mark) ;;
	*) echo "FAIL: unknown mode $m"; exit 1 ;;
	esac
	mkdir -p "$W/run"
	krexd_up "$W/krexd-$m-$k.log" -v -r "$W/run" -o gpus=0 -o "settle=$m" -o "cgroup_subtree=krex-power-$$"
	timeout 200 "$KREX" run -- $HOG >"$W/hog-$m-$k.log" 2>&1 &
	PIDS=$!
	sleep "$HEAT_S" # to the power cap
	echo "$m (block $k): GPU with the sibling: $(gpu_clocks)"
	measure "$KREX" run --
	stop_all
	krexd_down
	echo "$m (block $k): done"
done
echo "GPU after: $(gpu_clocks)"
echo
python3 "$src/test/gpu/power_job.py" report "$OUT"
