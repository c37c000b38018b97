#!/bin/bash
# Device call 1 of session 37 (issue 18): the proof's agents part over MPS
# (KREX at 16 / 24 / 32, the command lock at 24 / 32: the ratio like for
# like in one run) on the code landed by session 36 (4bc63bd: the gate
# counting every context being made, CTX_MAKING, the table of 1024 own
# contexts), unrun since session 34's call 4 (on 9358eb1); entry_split.py per
# N, the laggard lines, each window's pace.  Session 34's call4.sh with this
# call's name.  About 480 s.
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
	echo "==== the host's pace (agents.py cpu_pace, M loops per CPU s): n mode cpu_pace"
	for f in /tmp/o/proof/agents/agents.csv /tmp/o/proof/agents-cmd/agents.csv; do
		tr -d '\r' <"$f" | awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="cpu_pace") c=i} NR>1 && c {print $1, $2, $c}'
	done
} >"$O/call1-split.md" 2>&1
grep -h "freeze laggard" "$A"/agents.krex.*.krexd.log 2>/dev/null | gzip -c >"$O/call1-laggards.txt.gz"
cat "$O/call1-split.md"
# At most 8 files come back (call 1 lost proof.md and steps.txt): the steps
# and proof-fidelity.md (env) go into proof.md, an empty build.err goes.
{
	echo "==== steps.txt"
	cat "$O/steps.txt"
	echo "==== proof-fidelity.md"
	cat "$O/proof-fidelity.md"
} >>"$O/proof.md" 2>/dev/null && rm -f "$O/steps.txt" "$O/proof-fidelity.md"
[ -s "$O/build.err" ] || rm -f "$O/build.err"
ls "$O"
