#!/bin/bash
# Device call 3 of session 36: test/gpu/ownctx-on-gpu.sh on the real driver
# with the kernel in a sibling's only context of its own (as session 34's
# call 2) and in the last of 40 (KREX_OWNCTX_N=40), on the code where the
# gate notes up to 1024 contexts of a process's own (it noted 16: the
# mock's ctx_reset.sh and ownctx_mock.sh showed the 17th's kernel not
# waited for by a drain).  Each: the drain waits for the kernel, the region
# clean, the sibling's result right.  About 120 s with the build.
. notebook/gpu-call-prologue.sh
for n in 1 40; do
	st "ownctx-on-gpu.sh, KREX_OWNCTX_N=$n"
	OUT=/tmp/o/ownctx$n KREX_OWNCTX_N=$n timeout 150 bash test/gpu/ownctx-on-gpu.sh "$B" \
		>"$O/ownctx$n.txt" 2>&1
	echo "rc=$?" >>"$O/ownctx$n.txt"
	grep -h "own\|warn" /tmp/o/ownctx$n/own.log /tmp/o/ownctx$n/work/own.log 2>/dev/null |
		head -5 >>"$O/ownctx$n.txt"
done
st done
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv >>"$O/steps.txt" 2>&1
[ -s "$O/build.err" ] || rm -f "$O/build.err"
cat "$O/steps.txt" "$O"/ownctx*.txt
