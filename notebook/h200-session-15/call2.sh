#!/bin/bash
# Device call 2 of session 15 (issue 18, throughput): the command lock beside
# KREX at 24 and 32 sessions in one run, with sharer_per_h: can any sharing
# reach 4x the command lock here (the perfect sharer's rate / cmd's), and
# where KREX is (call 1: KREX >= share at every N, both 79-94 % of the sharer).
. notebook/gpu-call-prologue.sh
{ date -u; nproc; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st "agents 24,32 cmd,krex"
timeout -k 10 330 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/agents \
	--n 24,32 --modes cmd,krex --scale 0.2 --window 70 --warm-s 15 --budget-s 320 >/tmp/o/agents.txt 2>&1
echo "rc=$?" >>/tmp/o/agents.txt
st done
for f in agents.md agents-breakdown.md; do
	[ -f /tmp/o/agents/$f ] && { echo; cat /tmp/o/agents/$f; }
done >"$O/agents-call2.md"
tail -8 /tmp/o/agents.txt >>"$O/agents-call2.md"
cp /tmp/o/agents/agents.csv /tmp/o/agents/agents-breakdown.csv "$O/" 2>/dev/null
cat "$O/agents-call2.md"; cat "$O/steps.txt"
