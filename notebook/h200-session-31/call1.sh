#!/bin/bash
# Device call 1 of session 31 (issue 18): the proof's agents part over MPS
# (KREX at 16, 24, 32 sessions, the command lock at 24 and 32) on the code
# after session 30 (freeze_poll, krexd's CPU waits, the nice -20 fallback's
# autogroup), so that the throughput goals are judged on the current main;
# the last judged run (session 28, call 1) was before those changes.  With
# session 26's split.py and the region log's causes.  About 470 s.
. notebook/gpu-call-prologue.sh
export KREX_PROOF_PART=agents KREX_PROOF_MPS=1 # proof.sh's own: its agents step over MPS
CALL=call1 PROOF_LIMIT=540
. notebook/gpu-call-proof.sh
A=/tmp/o/proof/agents
{
	python3 notebook/h200-session-26/split.py "$A" krex 32 "$A/agents.krex.32.krexd.log"
	echo "==== the region log's causes (all three N)"
	cat "$O/proof-causes.md"
} >"$O/call1-split.md" 2>&1
cat "$O/call1-split.md"
