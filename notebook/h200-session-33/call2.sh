#!/bin/bash
# Device call 2 of session 33 (issue 18): call 1 again (the proof's agents
# part over MPS: KREX at 16 / 24 / 32, the command lock at 24 / 32, a second
# like-for-like ratio on the same kind of card) on 4e355c6: a slow freeze's
# laggard tasks followed to the freeze's end (their CPU time and their wait
# for a CPU, /proc/TID/schedstat; entry_split.py's "followed" rows), and
# every nominal clocks read timed ("nominal clocks (thread)").  About 480 s.
. notebook/gpu-call-prologue.sh
export KREX_PROOF_PART=agents KREX_PROOF_MPS=1 # proof.sh's own: its agents step over MPS
CALL=call2 PROOF_LIMIT=540
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
} >"$O/call2-split.md" 2>&1
grep -h "freeze laggard" "$A"/agents.krex.*.krexd.log 2>/dev/null | gzip -c >"$O/call2-laggards.txt.gz"
cat "$O/call2-split.md"
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
