#!/bin/bash
# Device call 2 of session 34: on the code of this session's gate change
# (af5b263: a context the program made itself outlives the primary
# context's last release; cuStreamGetCtx before it):
#   1. test/gpu/ownctx-on-gpu.sh on the real driver (its first run on a GPU;
#      the mock dry run, ownctx_mock.sh, passes here): a 1.5 s kernel in a
#      sibling's own context, the primary context's last release, then an
#      owner's region: the drain waits for the kernel, the region clean,
#      the result right;
#   2. the proof's fidelity part (KREX_PROOF_PART=fidelity: per sample and
#      batch at 0.1 / 1 / 10 ms with alone-gapped, the entry three times),
#      without MPS, on the H100 the device tool now lends (session 30 ran
#      it over MPS on an H100; sessions 33-34's H100 calls so far ran the
#      agents part only).  [Comment corrected after the call: it first said
#      the part had never run on an H100.]
# About 420 s with the build.
. notebook/gpu-call-prologue.sh
st "ownctx-on-gpu.sh"
OUT=/tmp/o/ownctx timeout 120 bash test/gpu/ownctx-on-gpu.sh "$B" >"$O/ownctx.txt" 2>&1
echo "rc=$?" >>"$O/ownctx.txt"
cp /tmp/o/ownctx/work/krexd.log /tmp/o/ownctx-krexd.log 2>/dev/null
export KREX_PROOF_PART=fidelity
CALL=call2 PROOF_LIMIT=400 PROOF_MPS=0
. notebook/gpu-call-proof.sh
# At most 8 files come back: the steps and the ownctx table into proof.md.
{
	echo "==== steps.txt"
	cat "$O/steps.txt"
	echo "==== ownctx.txt"
	cat "$O/ownctx.txt"
	echo "==== ownctx krexd log (drain lines)"
	grep -h "acknowledged the drain\|region 1:" /tmp/o/ownctx-krexd.log 2>/dev/null | head -20
} >>"$O/proof.md" 2>/dev/null && rm -f "$O/steps.txt" "$O/ownctx.txt"
[ -s "$O/build.err" ] || rm -f "$O/build.err"
cat "$O/proof.md" | tail -40
ls "$O"
