#!/bin/bash
# Device call 3 of session 6: main with the drain's wait for calls inside the
# driver passing parked threads (issue 20, JAX), after issue 23's renovation.
#  - harmless x3 (issue 20's goal: PASS 3 of 3, JAX included)
#  - containers-on-gpu.sh: the README's demo with pyxis + enroot siblings (issue 24)
set -u
O=${OUT:?}
mkdir -p /tmp/o
t0=$(date +%s)
st() { echo "== $(($(date +%s) - t0)) s: $*" | tee -a "$O/steps.txt"; }
st build
B=$(timeout 90 bash scripts/gpu-build.sh 2>"$O/build.err" | tail -1)
[ -x "$B/krexd/krexd" ] || { echo "BUILD FAILED"; tail -30 "$O/build.err"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
st harmless
KREX_HARMLESS_LIMIT=285 timeout 295 bash test/gpu/harmless.sh --builddir "$B" --out /tmp/o/harmless --seconds 20 --runs 3 >/tmp/o/harmless.txt 2>&1
echo "rc=$?" >>/tmp/o/harmless.txt
st containers
KREX_CT_LIMIT=170 OUT=/tmp/o/containers timeout 180 bash test/gpu/containers-on-gpu.sh "$B" >/tmp/o/containers.txt 2>&1
echo "rc=$?" >>/tmp/o/containers.txt
st done
tar czf "$O/detail.tgz" -C /tmp/o . 2>/dev/null
echo "---- harmless"; grep -E "^\| (jax)|Goal|new under|Overall|budget" /tmp/o/harmless.txt | cut -c1-300 | head -20
echo "---- containers"; tail -22 /tmp/o/containers.txt
cat "$O/steps.txt"
