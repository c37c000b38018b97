#!/bin/bash
# Device call 4 of session 17 (issue 18): two more agents.py runs, krex
# only, 24 and 32 sessions, 40 s counted, to meet more siblings that exit
# during a drain (3 in 206 regions in call 1, none in call 2): do they now
# answer status 2 (exiting) and are their regions clean?  summary.sh counts.
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
for i in 1 2; do
	st "agents krex 24,32, run $i"
	timeout -k 10 130 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/ag$i \
		--n 24,32 --modes krex --scale 0.2 --window 50 --warm-s 10 --budget-s 120 \
		--krexd-opt region_log=/tmp/o/regions$i.log >/tmp/o/ag$i.txt 2>&1
	echo "rc=$?" >>/tmp/o/ag$i.txt
	bash notebook/h200-session-17/summary.sh /tmp/o/ag$i /tmp/o/regions$i.log >"$O/summary$i.txt" 2>&1
	rm -rf /tmp/o/ag$i/raw
done
tar czf "$O/call4.tgz" -C /tmp/o ag1 ag1.txt ag2 ag2.txt regions1.log regions2.log
st done
for i in 1 2; do echo "==== run $i"; head -6 /tmp/o/ag$i/agents.md; tail -2 /tmp/o/ag$i.txt; cat "$O/summary$i.txt"; done
cat "$O/steps.txt"
