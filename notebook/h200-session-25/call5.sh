#!/bin/bash
# Device call 5 planned in session 25 (issue 18; not run in session 25).
# With call 4: the proof's fidelity part (KREX_PROOF_PART=fidelity: per
# sample and batch at 0.1 / 1 / 10 ms with alone-gapped, the entry three
# times) over MPS, so that the table judges every goal in the configuration
# call 4 ran.  About 320 s.
. notebook/gpu-call-prologue.sh
export KREX_PROOF_PART=fidelity
CALL=call5 PROOF_LIMIT=420 PROOF_MPS=1
. notebook/gpu-call-proof.sh
