#!/bin/bash
# Device call 1 of session 6 (2026-12-01, from main before issue 23's renovation):
#  - issue 19: test/gpu/power-proof.sh with interleaved alone/wait blocks (pooled p50)
#  - issue 18: where the entry's drain tail comes from: fidelity.py entry runs
#    (1 ms, one region per sample) per sibling mix (async, sync, torch, all), with
#    every process's gate counts (KREX_GATE_COUNTS: queue waits, give-ups, drains).
set -u
O=${OUT:?}
mkdir -p /tmp/o
t0=$(date +%s)
st() { echo "== $(($(date +%s) - t0)) s: $*" | tee -a "$O/steps.txt"; }
st build
B=$(timeout 150 bash scripts/gpu-build.sh 2>"$O/build.err" | tail -1)
[ -x "$B/krexd/krexd" ] || { echo "BUILD FAILED"; tail -30 "$O/build.err"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
st power
OUT=/tmp/o/power timeout 300 bash test/gpu/power-proof.sh "$B" >"$O/power.txt" 2>&1
echo "rc=$?" >>"$O/power.txt"
cp /tmp/o/power/*.jsonl /tmp/o/power/table.md "$O/" 2>/dev/null
st entry-mixes
NVCC=/usr/local/cuda/bin/nvcc
timeout 120 $NVCC -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
	-o /tmp/o/fma.fatbin test/workloads/fma.cu >/tmp/o/nvcc.log 2>&1
export KREX_WL_MODULE=/tmp/o/fma.fatbin
KREX_GATE_COUNTS=/tmp/o/counts.txt timeout -k 10 200 python3 test/perf/fidelity.py --full \
	--builddir "$B" --srcdir . --out /tmp/o/entry --sizes 1 --samples 1:300 \
	--mixes async,sync,torch,all --sample-mixes async,sync,torch,all --modes krex \
	--regions sample --budget-s 160 --krexd-opt settle=wait >"$O/entry.txt" 2>&1
echo "rc=$?" >>"$O/entry.txt"
cp /tmp/o/entry/fidelity-entry.md /tmp/o/entry/fidelity.md /tmp/o/counts.txt "$O/" 2>/dev/null
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' . 2>/dev/null
echo "---- power"; tail -28 "$O/power.txt"
echo "---- entry"; grep -A8 "Where region entry" "$O/entry.txt" | cut -c1-400
echo "---- gate counts (nonzero queue/drain counts per pid)"
awk '$2 ~ /^gate\./ && $3 != 0' /tmp/o/counts.txt | sort -k2,2 -k3,3n | tail -40
cat "$O/steps.txt"
