#!/bin/bash
# Device call 5 of session 12 (issue 18, throughput): the proof's agents
# windows (24 s, 18 s counted) hold about one 12.4 s iteration a session, so
# its benchmarks/h at 16-32 sessions are noise (the sessions move nearly in
# step; a window catches part of a wave).  One long window each for the
# command lock and KREX at 32 sessions (100 s, the first 20 s not counted),
# with the breakdown of an iteration and the bound.
. notebook/gpu-call-prologue.sh
{ date -u; uname -r; nproc; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st "agents 32"
timeout -k 10 300 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/agents \
	--n 32 --modes cmd,krex --scale 0.2 --window 100 --warm-s 20 --budget-s 280 >/tmp/o/agents.txt 2>&1
echo "rc=$?" >>/tmp/o/agents.txt
st done
for f in agents.md agents-breakdown.md agents-siblings.md; do
	[ -f /tmp/o/agents/$f ] && { echo; cat /tmp/o/agents/$f; }
done >"$O/agents-call5.md"
tail -5 /tmp/o/agents.txt >>"$O/agents-call5.md"
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.jsonl' agents 2>/dev/null
cat "$O/agents-call5.md"; cat "$O/steps.txt"
