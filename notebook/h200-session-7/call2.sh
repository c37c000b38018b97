#!/bin/bash
# Device call 2 of session 7 (issue 18): test/gpu/proof.sh, the one-command
# proof (fidelity 0.1/1/10 ms with alone-gapped, entry x3, agents 16/24/32),
# now with the drain per sibling (test/perf/krexlog.py).
set -u
O=${OUT:?}
t0=$(date +%s)
B=$(timeout 90 bash scripts/gpu-build.sh 2>"$O/build.err" | tail -1)
[ -x "$B/krexd/krexd" ] || { echo "BUILD FAILED"; tail -30 "$O/build.err"; exit 1; }
echo "build: $(($(date +%s) - t0)) s"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
OUT=/tmp/proof timeout -k 10 520 bash test/gpu/proof.sh "$B" >/tmp/proof.txt 2>&1
echo "proof rc=$? after $(($(date +%s) - t0)) s"
cp /tmp/proof.txt "$O/proof.txt"
cp /tmp/proof/proof.md "$O/" 2>/dev/null
tar czf "$O/proof.tgz" -C /tmp proof 2>/dev/null
ls -la "$O" | tail -5
tail -60 /tmp/proof.txt
