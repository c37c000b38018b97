#!/bin/bash
# Device call 3 of session 28: the fix for cudaDeviceReset going past the
# gate (cudart 13 asks cuGetProcAddress for CUDA 7.0's
# cuDevicePrimaryCtxReset; call 2's cuda-reset sibling died of SIGSEGV in
# its first reset under KREX).  1. scripts/cudart-procs.py on every
# libcudart.so on the machine (the gate hooks each ABI it asks for);
# 2. harmless.sh with every real sibling, cuda-reset among them, 30 s a
# pass (ONLY=a,b and SECS=S: those siblings, S s a pass).  About 300 s.
. notebook/gpu-call-prologue.sh
st cudart-procs
{
	for f in $(timeout 60 find / -xdev -name 'libcudart.so*' -type f 2>/dev/null | sort -u | head -8); do
		timeout 60 python3 scripts/cudart-procs.py "$f" gate/cuda_hooks.def
		echo "rc=$?"
	done
} >"$O/cudart-procs.txt" 2>&1
cat "$O/cudart-procs.txt"
st harmless
KREX_BUILDDIR=$B KREX_HARMLESS_LIMIT=330 timeout 345 bash test/gpu/harmless.sh --seconds "${SECS:-30}" \
	${ONLY:+--only "$ONLY"} --min-regions 50 --out /tmp/o/harmless >"$O/harmless.txt" 2>&1
echo "harmless rc=$?" >>"$O/harmless.txt"
st done
mkdir -p "$O/err"
for f in /tmp/o/harmless/run1/krex/*.err; do
	[ -f "$f" ] && tail -c 4000 "$f" >"$O/err/krex-$(basename "$f")"
done
cp /tmp/o/harmless/env.txt "$O/harmless-env.txt" 2>/dev/null
grep -E '^\||Goal|Overall|All regions' "$O/harmless.txt"
cat "$O/steps.txt"
