#!/bin/bash
# Device call 6 of session 19 (issue 18): a third pair at 32 sessions,
# hold first this time (call 1: pass first, call 2: pass first), 55 s windows
# (43 s counted), to see whether the hold's price at 32 (-1.5 and -10.2 %
# in calls 1 and 2) is more than the run-to-run spread.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
run() { # NAME N CONTEXTS
	st "agents $2 krex, KREX_GATE_CONTEXTS=$3"
	KREX_GATE_CONTEXTS=$3 timeout -k 10 90 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" \
		--out /tmp/o/$1 --n $2 --modes krex --scale 0.2 --window 55 --warm-s 12 --budget-s 80 \
		--krexd-opt region_log=/tmp/o/$1.regions >/tmp/o/$1.txt 2>&1
	echo "rc=$?" >>/tmp/o/$1.txt
	rm -rf /tmp/o/$1/raw
}
run h32 32 hold
run p32 32 pass
st done
for d in h32 p32; do
	f=/tmp/o/$d.regions
	echo "==== $d: regions $(grep -c '"outcome"' $f 2>/dev/null), clean $(grep -c '"outcome": *"clean"' $f 2>/dev/null), late-noted $(grep -c 'made during the region' $f 2>/dev/null), not watched $(grep -c 'not watched' $f 2>/dev/null)"
	grep -o '"outcome": *"[a-z]*"' $f 2>/dev/null | sort | uniq -c
	cat /tmp/o/$d/agents.md /tmp/o/$d/agents-breakdown.md /tmp/o/$d/agents-commands.md 2>/dev/null
	tail -2 /tmp/o/$d.txt
done >"$O/summary.txt" 2>&1
tar czf "$O/call6.tgz" -C /tmp/o h32 p32 h32.txt p32.txt h32.regions p32.regions 2>/dev/null
grep -E '^(====| +[0-9]+ "outcome|[|] (16|24|32) [|] krex [|])' "$O/summary.txt"
cat "$O/env.txt" "$O/steps.txt"
