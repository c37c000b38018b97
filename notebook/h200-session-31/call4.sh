#!/bin/bash
# Device call 4 of session 31 (issue 18), a short stand-in for call3.sh
# (refused six times; 659 s of the round left): over MPS, KREX and the
# command lock at 24 sessions only, the proof's windows (52 s / 140 s), the
# burns as CPU time and each window's host pace (cpu_pace), judged by
# proof_table.py; and krexd's "freeze laggard" lines of the KREX window
# (entry_split.py).  About 280 s.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
P=/tmp/o/proof
mkdir -p $P
mps_start
st "agents krex 24"
timeout -k 10 110 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out $P/agents \
	--n 24 --modes krex --scale 0.2 --window 52 --warm-s 8 --budget-s 95 >$P/agents.txt 2>&1
st "agents cmd 24"
timeout -k 10 200 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out $P/agents-cmd \
	--n 24 --modes cmd --scale 0.2 --window 140 --warm-s 15 --budget-s 185 >$P/agents-cmd.txt 2>&1
mps_stop
st done
{
	timeout 30 python3 test/gpu/proof_table.py $P | grep -E "^\| (goal|---|benchmarks)"
	tables $P agents/agents.md agents/agents-breakdown.md agents/agents-commands.md \
		agents-cmd/agents.md agents-cmd/agents-breakdown.md agents-cmd/agents-commands.md
	echo "==== entry_split.py, KREX at 24"
	timeout 60 python3 test/perf/entry_split.py $P/agents/agents.krex.24.krexd.log | sed -n '/^phase/,$p'
} >"$O/call4.md" 2>&1
grep -h "freeze laggard" $P/agents/agents.krex.24.krexd.log 2>/dev/null | gzip -c >"$O/call4-laggards.txt.gz"
cut -c1-400 "$O/call4.md"
cat "$O/steps.txt"
