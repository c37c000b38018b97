#!/bin/bash
# Device call 1 of session 24 (issue 18): test/gpu/proof.sh's agents part
# (KREX_PROOF_PART=agents): KREX at 16, 24, 32 sessions in 52 s windows, the
# command lock at 24 and 32 in 140 s windows, so that every throughput goal
# is judged from >= 30 benchmarks a point (the whole proof's 24 s windows
# never were: TOO FEW in sessions 22 and 23).
. notebook/gpu-call-prologue.sh
export KREX_PROOF_PART=agents
CALL=call1 PROOF_LIMIT=560
. notebook/gpu-call-proof.sh
