#!/bin/bash
# Device call 1 of session 29: the full harmless run on a real driver with
# session 28's fix (cudaDeviceReset's 7.0 ABI hooked) and this session's
# (cuGreenCtxDestroy gated as a context end): every real sibling, the new
# cuda-green among them, 30 s a pass (ONLY=a,b and SECS=S: those siblings,
# S s a pass).  About 330 s with the build.
. notebook/gpu-call-prologue.sh
st harmless
KREX_BUILDDIR=$B KREX_HARMLESS_LIMIT=360 timeout 380 bash test/gpu/harmless.sh --seconds "${SECS:-30}" \
	${ONLY:+--only "$ONLY"} --min-regions 50 --out /tmp/o/harmless >"$O/harmless.txt" 2>&1
echo "harmless rc=$?" >>"$O/harmless.txt"
st done
mkdir -p "$O/err"
for f in /tmp/o/harmless/run1/krex/*.err /tmp/o/harmless/run1/base/*.err; do
	[ -f "$f" ] && tail -c 4000 "$f" >"$O/err/$(basename "$(dirname "$f")")-$(basename "$f")"
done
for f in /tmp/o/harmless/run1/krex/cuda-green.out /tmp/o/harmless/run1/base/cuda-green.out; do
	[ -f "$f" ] && tail -c 2000 "$f" >"$O/err/$(basename "$(dirname "$f")")-cuda-green.out"
done
cp /tmp/o/harmless/env.txt "$O/harmless-env.txt" 2>/dev/null
grep -E '^\||Goal|Overall|All regions' "$O/harmless.txt"
cat "$O/steps.txt"
