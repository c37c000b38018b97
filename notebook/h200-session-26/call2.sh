#!/bin/bash
# Device call 2 of session 26 (issue 18; planned in session 25 as call4.sh).
# The proof's agents part (KREX_PROOF_PART=agents: KREX at 16, 24, 32
# sessions, the command lock at 24 and 32) over MPS, so that every
# throughput goal is judged there, on the code that lists a late MPS client
# held at the gate without noting it (3a35267).  Call 1 (the same question
# alone at 32 sessions) was refused three times; this call answers it too:
# the region log's causes (proof-causes.md) and, at 32 sessions, the timed
# samples of clean regions with and without a late MPS client not noted
# (split.py).  About 470 s.
. notebook/gpu-call-prologue.sh
export KREX_PROOF_PART=agents KREX_PROOF_MPS=1 # proof.sh's own: its agents step over MPS
CALL=call2 PROOF_LIMIT=540
. notebook/gpu-call-proof.sh
A=/tmp/o/proof/agents
{
	python3 notebook/h200-session-26/split.py "$A" krex 32 "$A/agents.krex.32.krexd.log"
	echo "==== krexd's logs: late processes listed over MPS, not noted, per N"
	for n in 16 24 32; do
		echo "$n: $(grep -c "is listed (an MPS client" "$A/agents.krex.$n.krexd.log" 2>/dev/null)"
	done
	echo "==== the region log's causes (all three N)"
	cat "$O/proof-causes.md"
} >"$O/call2-split.md" 2>&1
cat "$O/call2-split.md"
