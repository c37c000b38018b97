#!/bin/bash
# Device call 5 of session 22 (issue 18): throughput at 24 and 32 sessions on
# the session's final code (krexd's defaults, favordynmods off), as session
# 20's call 1 ran it: agents.py KREX only, 65 s windows (53 s counted).
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
for n in 24 32; do
	st "agents $n krex"
	timeout -k 10 110 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" \
		--out /tmp/o/a$n --n $n --modes krex --scale 0.2 --window 65 --warm-s 12 --budget-s 100 \
		>/tmp/o/a$n.txt 2>&1
	echo "rc=$?" >>/tmp/o/a$n.txt
	{ echo "==== $n"; sed -n '/^## Agent sessions per hour/,/^## A GPU command/p' /tmp/o/a$n.txt; } >>"$O/call5-summary.txt"
	rm -rf /tmp/o/a$n/raw
done
st done
cat "$O/call5-summary.txt" "$O/steps.txt"
