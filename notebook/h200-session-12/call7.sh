#!/bin/bash
# Device call 7 of session 12 (issue 18, throughput): call 5's long window for
# KREX at 16 and 24 sessions (100 s, the first 20 s not counted), with
# agents.py's new GPU bound (gpu_bound_per_h) in the bound.  With call 5's 32
# sessions: does KREX's rate fall as N grows, and how far is it from the bound.
. notebook/gpu-call-prologue.sh
{ date -u; uname -r; nproc; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st "agents 16,24 krex"
timeout -k 10 290 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/agents \
	--n 16,24 --modes krex --scale 0.2 --window 100 --warm-s 20 --budget-s 270 >/tmp/o/agents.txt 2>&1
echo "rc=$?" >>/tmp/o/agents.txt
st done
for f in agents.md agents-breakdown.md; do
	[ -f /tmp/o/agents/$f ] && { echo; cat /tmp/o/agents/$f; }
done >"$O/agents-call7.md"
tail -5 /tmp/o/agents.txt >>"$O/agents-call7.md"
cat "$O/agents-call7.md"; cat "$O/steps.txt"
