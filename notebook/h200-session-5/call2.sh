#!/bin/bash
# One device call: issue 18's proof (fidelity with alone-gapped, entry x3, agents 16/24/32).
set -u
O=${OUT:?}
B=/tmp/krex-build
[ -x "$B/krexd/krexd" ] || B=$(timeout 150 bash scripts/gpu-build.sh 2>"$O/build.err" | tail -1)
[ -x "$B/krexd/krexd" ] || { echo "BUILD FAILED"; tail -30 "$O/build.err"; exit 1; }
mkdir -p /tmp/o
t0=$(date +%s)
OUT=/tmp/o/proof timeout 550 bash test/gpu/proof.sh "$B" >"$O/proof.txt" 2>&1
echo "rc=$? after $(($(date +%s) - t0)) s" >>"$O/proof.txt"
cp /tmp/o/proof/proof.md "$O/" 2>/dev/null
tar czf "$O/proof.tgz" -C /tmp/o/proof . 2>/dev/null
tail -70 "$O/proof.txt"
