#!/bin/bash
# Device call 1 of session 33 (issue 18): session 32's call1.sh again on the
# code of e175aea, i.e. with the nominal clocks read after a region's
# process list (fd6ebcb), never measured on the GPU: the proof's agents part
# over MPS (KREX at 16 / 24 / 32, the command lock at 24 / 32: the ratio
# like for like in one run), entry_split.py on each KREX window's krexd log
# ("in after the close", "certificate waited for it", the entry's "other"),
# the freeze laggard lines, and each window's host pace (the column this
# time: agents.py's CSVs end their lines in \r\n).  About 480 s.
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
