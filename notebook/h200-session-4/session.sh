#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# One H200 call, most important first (the device budget may end it):
# build, python do_bench (issue 13), the gate under many async siblings
# (issue 15 / 10), freeze and thaw cost on cgroup v2 (issue 15).
set -u
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a "$OUT/steps.txt"; }
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv >"$OUT/gpu.txt" 2>&1
B=$(timeout 150 bash scripts/gpu-build.sh .gpu/krex-*.tar.gz 2>"$OUT/build.err" | tail -1)
el "build: $B"
[ -x "$B/krexd/krexd" ] || { tail -30 "$OUT/build.err"; exit 1; }
timeout 60 nvcc -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
	-o "$B/test/workloads/fma.fatbin" test/workloads/fma.cu 2>"$OUT/nvcc.err"
el "fatbin rc=$?"
OUT=$OUT/dobench timeout -k 5 100 bash test/gpu/python-dobench.sh "$B" >"$OUT/dobench.txt" 2>&1
el "dobench rc=$?"
tail -22 "$OUT/dobench.txt"
KREX_GC_REAL=1 KREX_GC_SECONDS=5 KREX_GC_POINTS="4:5 16:5 32:1" top_srcdir=$PWD top_builddir=$B \
	timeout -k 5 75 bash test/perf/gate-contention.sh >"$OUT/gc.txt" 2>&1
el "gate-contention rc=$?"
tail -12 "$OUT/gc.txt"
timeout -k 5 45 bash test/perf/freeze-scale.sh --builddir "$B" --regions 100 --siblings "8 64" \
	--freezers cgroup2 "$OUT/freeze" >"$OUT/freeze.txt" 2>&1
el "freeze rc=$?"
head -50 "$OUT/freeze/table.txt" 2>/dev/null
