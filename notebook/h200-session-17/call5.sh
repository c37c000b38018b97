#!/bin/bash
# Device call 5 of session 17 (issue 18): KREX against the command lock at
# 24 sessions with windows long enough for the lock's count (95 s counted
# each; session 15 had 55 s, 16-21 benchmarks of the lock): the ">= 4x at
# 24" goal, measured again on this build.
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st "agents cmd,krex at 24, 95 s counted"
timeout -k 10 270 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/ag \
	--n 24 --modes cmd,krex --scale 0.2 --window 110 --warm-s 15 --budget-s 260 >/tmp/o/ag.txt 2>&1
echo "rc=$?" >>/tmp/o/ag.txt
rm -rf /tmp/o/ag/raw
tar czf "$O/call5.tgz" -C /tmp/o ag ag.txt
st done
cat /tmp/o/ag/agents.md; tail -2 /tmp/o/ag.txt
cat "$O/steps.txt"
