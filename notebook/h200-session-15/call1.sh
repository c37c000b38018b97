#!/bin/bash
# Device call 1 of session 15 (issue 18, throughput): where KREX's 14-17 %
# below the bound goes.  agents.py's new share mode (no lock, no KREX: the
# driver time-slices every kernel) beside krex at 16, 24 and 32 sessions, with
# sharer_per_h (sharer.py: the same model on a perfect sharer).  sharer ->
# share is what the GPU's own time-slicing costs; share -> krex what KREX's
# regions cost on top.
. notebook/gpu-call-prologue.sh
{ date -u; nproc; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st "agents 16,24,32 share,krex"
timeout -k 10 430 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/agents \
	--n 16,24,32 --modes share,krex --scale 0.2 --window 65 --warm-s 15 --budget-s 420 >/tmp/o/agents.txt 2>&1
echo "rc=$?" >>/tmp/o/agents.txt
st done
for f in agents.md agents-breakdown.md; do
	[ -f /tmp/o/agents/$f ] && { echo; cat /tmp/o/agents/$f; }
done >"$O/agents-call1.md"
tail -8 /tmp/o/agents.txt >>"$O/agents-call1.md"
cp /tmp/o/agents/agents.csv /tmp/o/agents/agents-breakdown.csv "$O/" 2>/dev/null
cat "$O/agents-call1.md"; cat "$O/steps.txt"
