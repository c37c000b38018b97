#!/bin/bash
# One device call: build, issue 19's power proof, issue 20's Slurm cgroup/v2 suspend and harmless x3.
set -u
O=${OUT:?}
mkdir -p /tmp/o
t0=$(date +%s)
st() { echo "== $(($(date +%s) - t0)) s: $*" | tee -a "$O/steps.txt"; }
st build
B=$(timeout 150 bash scripts/gpu-build.sh 2>"$O/build.err" | tail -1)
[ -x "$B/krexd/krexd" ] || { echo "BUILD FAILED"; tail -30 "$O/build.err"; exit 1; }
{ date -u; uname -r; nproc; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
st power-proof
OUT=/tmp/o/power timeout 200 bash test/gpu/power-proof.sh "$B" >"$O/power.txt" 2>&1
echo "rc=$?" >>"$O/power.txt"
st suspend-v2
timeout 110 bash test/gpu/slurm-on-gpu.sh "$B" suspend-v2 >"$O/suspend-v2.txt" 2>&1
echo "rc=$?" >>"$O/suspend-v2.txt"
st harmless
KREX_HARMLESS_LIMIT=230 timeout 240 bash test/gpu/harmless.sh --builddir "$B" --out /tmp/o/harmless --seconds 20 --runs 3 >"$O/harmless.txt" 2>&1
echo "rc=$?" >>"$O/harmless.txt"
st done
tar czf "$O/detail.tgz" -C /tmp/o . 2>/dev/null
echo "---- power"; tail -28 "$O/power.txt"
echo "---- suspend-v2"; tail -14 "$O/suspend-v2.txt"
echo "---- harmless"; tail -32 "$O/harmless.txt"
cat "$O/steps.txt"
