#!/bin/bash
# Device call 2 of session 26 (issue 18; planned in session 25 as call4.sh).
# Run when KREX's regions over MPS are clean again (call 1): the proof's
# agents part (KREX_PROOF_PART=agents: KREX at 16, 24, 32 sessions, the
# command lock at 24 and 32) over MPS, so that every throughput goal is
# judged there.  About 470 s.
. notebook/gpu-call-prologue.sh
export KREX_PROOF_PART=agents KREX_PROOF_MPS=1 # proof.sh's own: its agents step over MPS
CALL=call2 PROOF_LIMIT=540
. notebook/gpu-call-proof.sh
