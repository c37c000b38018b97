#!/bin/bash
# Device call 1 of session 36 (session 35's unrun call 5): the default path on the real driver after
# this session's gate change (the gate counts every context being made and
# sends CTX_MAKING around it, whatever ctx_defer is; 06cb2a1):
#   1. test/gpu/ctxhold.sh: PyTorch, CuPy and JAX started under `krex run`
#      while another participant's region holds the GPU wait at the gate to
#      make their context, make it after, and compute the right result;
#   2. the proof's fidelity part (KREX_PROOF_PART=fidelity: per sample and
#      batch at 0.1 / 1 / 10 ms with alone-gapped, the entry three times),
#      without MPS, as session 34's call 2 ran it on an H100.
# About 250 s with the build.
. notebook/gpu-call-prologue.sh
st "ctxhold.sh"
OUT=/tmp/o/ctxhold timeout 150 bash test/gpu/ctxhold.sh "$B" >"$O/ctxhold.txt" 2>&1
echo "rc=$?" >>"$O/ctxhold.txt"
grep -h "CTX_MAKING\|making GPU contexts" /tmp/o/ctxhold/krexd.log 2>/dev/null | head -5 >>"$O/ctxhold.txt"
export KREX_PROOF_PART=fidelity
CALL=call1 PROOF_LIMIT=330 PROOF_MPS=0
. notebook/gpu-call-proof.sh
{
	echo "==== steps.txt"
	cat "$O/steps.txt"
	echo "==== ctxhold.txt"
	cat "$O/ctxhold.txt"
} >>"$O/proof.md" 2>/dev/null && rm -f "$O/steps.txt" "$O/ctxhold.txt"
[ -s "$O/build.err" ] || rm -f "$O/build.err"
tail -45 "$O/proof.md"
ls "$O"
