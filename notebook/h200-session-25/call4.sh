#!/bin/bash
# Device call 4 planned in session 25 (issue 18; not run in session 25).
# Run it when KREX's regions over MPS are clean again (calls 2-3): the proof's
# agents part (KREX_PROOF_PART=agents: KREX at 16, 24, 32 sessions, the
# command lock at 24 and 32) over MPS, so that every throughput goal is
# judged there.  About 470 s.
. notebook/gpu-call-prologue.sh
export KREX_PROOF_PART=agents KREX_PROOF_MPS=1 # proof.sh's own: its agents step over MPS
CALL=call4 PROOF_LIMIT=540
. notebook/gpu-call-proof.sh
