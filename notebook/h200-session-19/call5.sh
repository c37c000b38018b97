#!/bin/bash
# Device call 5 of session 19: test/gpu/ctxhold.sh: PyTorch, CuPy and JAX
# started (under `krex run`) while another participant's region holds the
# GPU wait at the gate to make their contexts, compute after it, right.
# (Call 4's harmless run passed but held no context: its frameworks made
# theirs before the owner's regions.)
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
st ctxhold
OUT=/tmp/o/ctxhold timeout 280 bash test/gpu/ctxhold.sh "$B" >/tmp/o/ctxhold.txt 2>&1
echo "rc=$?" >>/tmp/o/ctxhold.txt
st done
cp /tmp/o/ctxhold.txt "$O/"
tar czf "$O/call5.tgz" -C /tmp/o ctxhold 2>/dev/null
cat /tmp/o/ctxhold.txt
tail -5 /tmp/o/ctxhold/*.out 2>/dev/null | cut -c1-200
cat "$O/steps.txt"
