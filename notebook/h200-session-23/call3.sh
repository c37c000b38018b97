#!/bin/bash
# Device call 3 of session 23 (issue 18): call 2 again (the same tree), on
# whichever machine the loan gives: does the proof with 6 interleaved rounds
# hold from one run to the next?
. notebook/gpu-call-prologue.sh
CALL=call3 PROOF_LIMIT=560
. notebook/gpu-call-proof.sh
