#!/bin/bash
# Device call 6 of session 35: call 5's first step alone (call 5 was not
# started: no machine came, 180 s of the round gone; 305 s left).
# test/gpu/ctxhold.sh on the default path after this session's gate change
# (06cb2a1: the gate counts every context being made and sends CTX_MAKING
# around it): PyTorch, CuPy and JAX started under `krex run` while another
# participant's region holds the GPU wait at the gate to make their context,
# make it after, and compute the right result.  About 50 s with the build.
. notebook/gpu-call-prologue.sh
st "ctxhold.sh"
OUT=/tmp/o/ctxhold timeout 120 bash test/gpu/ctxhold.sh "$B" >"$O/ctxhold.txt" 2>&1
echo "rc=$?" >>"$O/ctxhold.txt"
st done
{
	echo "==== krexd's CTX_MAKING lines (first 8)"
	grep -h "CTX_MAKING" /tmp/o/ctxhold/krexd.log 2>/dev/null | head -8
	echo "==== steps"
	cat "$O/steps.txt"
} >>"$O/ctxhold.txt" && rm -f "$O/steps.txt"
[ -s "$O/build.err" ] || rm -f "$O/build.err"
cat "$O/ctxhold.txt"
