#!/bin/bash
# Device call 2 of session 23 (issue 18): test/gpu/proof.sh with its
# fidelity in 6 interleaved rounds (3 before; call 1 found alone's own wall
# p95 at 0.1 ms 107.7-112.3 us between rounds, the host's launch path
# 3.3-4.4 us from process to process) and the standard error of alone's
# rounds beside each interleaved verdict.  (As it ran, the proof's lines
# were in this file; notebook/gpu-call-proof.sh holds them since, unchanged
# but for the limit and the tarball's name as variables.)
. notebook/gpu-call-prologue.sh
CALL=call2 PROOF_LIMIT=560
. notebook/gpu-call-proof.sh
