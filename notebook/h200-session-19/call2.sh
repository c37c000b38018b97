#!/bin/bash
# Device call 2 of session 19 (issue 18): the gate's context hold with
# krexd keeping new contexts held until its list at a region's end (the gate
# page's ctx_by; call 1 found one region marked by a command released at the
# open), against pass (the behaviour before the hold) again at 24 and 32,
# and the hold at 16: agents.py, KREX mode, 65 s windows (53 s counted),
# each run with its own region log (the late-participant notes counted).
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
run() { # NAME N CONTEXTS
	st "agents $2 krex, KREX_GATE_CONTEXTS=$3"
	KREX_GATE_CONTEXTS=$3 timeout -k 10 110 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" \
		--out /tmp/o/$1 --n $2 --modes krex --scale 0.2 --window 65 --warm-s 12 --budget-s 100 \
		--krexd-opt region_log=/tmp/o/$1.regions >/tmp/o/$1.txt 2>&1
	echo "rc=$?" >>/tmp/o/$1.txt
	rm -rf /tmp/o/$1/raw
}
run h24 24 hold
run p24 24 pass
run h16 16 hold
run p32 32 pass
run h32 32 hold
st done
for d in h24 p24 h16 p32 h32; do
	f=/tmp/o/$d.regions
	echo "==== $d: regions $(grep -c '"outcome"' $f 2>/dev/null), clean $(grep -c '"outcome": *"clean"' $f 2>/dev/null), late-noted $(grep -c 'made during the region' $f 2>/dev/null), not watched $(grep -c 'not watched' $f 2>/dev/null)"
	grep -o '"outcome": *"[a-z]*"' $f 2>/dev/null | sort | uniq -c
	cat /tmp/o/$d/agents.md /tmp/o/$d/agents-breakdown.md /tmp/o/$d/agents-commands.md 2>/dev/null
	tail -2 /tmp/o/$d.txt
done >"$O/summary.txt" 2>&1
tar czf "$O/call2.tgz" -C /tmp/o h24 p24 h16 p32 h32 h24.txt p24.txt h16.txt p32.txt h32.txt h24.regions p24.regions h16.regions p32.regions h32.regions 2>/dev/null
grep -E '^(====| +[0-9]+ "outcome|[|] (16|24|32) [|] krex [|])' "$O/summary.txt"
cat "$O/env.txt" "$O/steps.txt"
