#!/bin/bash
# Device call 3 of session 26 (issue 18; planned in session 25 as call5.sh).
# With call 2: the proof's fidelity part (KREX_PROOF_PART=fidelity: per
# sample and batch at 0.1 / 1 / 10 ms with alone-gapped, the entry three
# times) over MPS, so that the table judges every goal in the configuration
# call 2 ran.  About 320 s.
. notebook/gpu-call-prologue.sh
export KREX_PROOF_PART=fidelity
CALL=call3 PROOF_LIMIT=420 PROOF_MPS=1
. notebook/gpu-call-proof.sh
