#!/bin/bash
# Device call 3 of session 19 (issue 18): test/gpu/proof.sh (issue 18's
# goals: fidelity per sample and batch at 0.1/1/10 ms with alone-gapped,
# three entry runs, agents at 16/24/32 against the command lock) on the tree
# with the gate's context hold and krexd's ctx_by.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
st "proof"
OUT=/tmp/o/proof timeout -k 10 520 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
rm -rf /tmp/o/proof/fidelity/raw /tmp/o/proof/entry2/raw /tmp/o/proof/entry3/raw /tmp/o/proof/agents/raw
tar czf "$O/call3.tgz" -C /tmp/o proof proof.txt
st done
sed -n '/## Issue 18/,$p' /tmp/o/proof.txt
grep -h "| krex | all | \(sample\|batch\) |" /tmp/o/proof/fidelity/fidelity.md 2>/dev/null | cut -c1-220
tail -3 /tmp/o/proof.txt
cat "$O/env.txt" "$O/steps.txt"
