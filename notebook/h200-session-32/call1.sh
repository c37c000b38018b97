#!/bin/bash
# Device call 1 of session 32 (issue 18; session 31's call3.sh, never run there): the proof's agents part over MPS
# again, now with the burns as CPU time (agents.py, session 31: call 1's
# command-lock windows ran the same loop count at about half the pace of
# KREX's, which stretched the lock's hold from ~2.4 to 3.3 s and flattered
# the ratio) and each ratio's host pace printed beside it (proof_table.py);
# and krexd's new "freeze laggard" lines (b32658b) from the same KREX
# windows: what a freeze at 16 / 24 / 32 sessions waits for
# (entry_split.py).  About 480 s.
. notebook/gpu-call-prologue.sh
export KREX_PROOF_PART=agents KREX_PROOF_MPS=1 # proof.sh's own: its agents step over MPS
CALL=call1 PROOF_LIMIT=540
. notebook/gpu-call-proof.sh
A=/tmp/o/proof/agents
{
	for n in 16 24 32; do
		echo "==== entry_split.py, KREX at $n sessions"
		timeout 60 python3 test/perf/entry_split.py "$A/agents.krex.$n.krexd.log" | sed -n '/^phase/,$p'
	done
	echo "==== the host's pace (agents.py cpu_pace, M loops per CPU s)"
	grep -h "" /tmp/o/proof/agents/agents.csv /tmp/o/proof/agents-cmd/agents.csv |
		awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="cpu_pace") c=i} $1 ~ /^[0-9]/ {print $1, $2, $c}'
} >"$O/call1-split.md" 2>&1
grep -h "freeze laggard" "$A"/agents.krex.*.krexd.log 2>/dev/null | gzip -c >"$O/call1-laggards.txt.gz"
cat "$O/call1-split.md"
