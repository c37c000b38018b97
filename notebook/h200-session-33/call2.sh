#!/bin/bash
# Device call 2 of session 33 (issue 18): KREX alone at 24 and 32 sessions
# over MPS (the proof's KREX windows: 52 s, 44 s counted), on d9b9a8e: a
# slow freeze's laggard tasks followed to the freeze's end (their CPU time
# and their wait for a CPU, /proc/TID/schedstat): whether the runnable
# laggards at 32 sessions wait for a CPU or run in the kernel
# (entry_split.py's "followed" rows); and a second run of KREX's rate at
# 24 / 32 beside call 1's.  About 170 s.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
mps_start
st agents
A=/tmp/o/agents
timeout -k 10 230 python3 test/perf/agents.py --full --builddir "$B" --srcdir . --out "$A" \
	--n 24,32 --modes krex --scale 0.2 --window 52 --warm-s 8 --budget-s 195 \
	--krexd-opt region_log="$A/regions.jsonl" >/tmp/o/agents.txt 2>&1
echo "rc=$?" >>/tmp/o/agents.txt
mps_stop
st done
{
	tables "$A" agents.md agents-breakdown.md agents-siblings.md agents-commands.md
	for n in 24 32; do
		echo "==== entry_split.py, KREX at $n sessions"
		timeout 60 python3 test/perf/entry_split.py "$A/agents.krex.$n.krexd.log" | sed -n '/^phase/,$p'
	done
} >"$O/call2-split.md" 2>&1
grep -h "freeze laggard" "$A"/agents.krex.*.krexd.log 2>/dev/null | gzip -c >"$O/call2-laggards.txt.gz"
grep -h "freeze laggards followed" "$A"/agents.krex.*.krexd.log 2>/dev/null | head -5
[ -f "$A/regions.jsonl" ] && gzip -c "$A/regions.jsonl" >"$O/call2-regions.jsonl.gz"
tar czf "$O/call2.tgz" -C /tmp/o agents.txt agents/agents.csv agents/agents-breakdown.csv \
	agents/agents-commands.csv agents/agents-siblings.csv 2>/dev/null
cat "$O/steps.txt"
tail -3 /tmp/o/agents.txt
grep -E "^====|^phase|^(wait|drain|freeze|settle|isolate) |freezes past|followed|^ +[RDST] +[0-9]+ tasks" "$O/call2-split.md" | head -60
