#!/bin/bash
# Device call 2 of session 12 (issue 18): test/gpu/proof.sh on the tree of
# call 1 (libregion keeps its connection to krexd between regions; krexd at
# its default, sched_priority = 0), on the machine call 1 left warm.
. notebook/gpu-call-prologue.sh
{ date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
st proof
OUT=/tmp/o/proof timeout -k 5 400 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
cp /tmp/o/proof.txt "$O/proof.txt"; cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.fatbin.*' --exclude='*.jsonl' proof 2>/dev/null
echo "---- proof"; sed -n '/| goal |/,$p' /tmp/o/proof.txt | head -20
grep -A5 "Where region entry went" /tmp/o/proof.txt | grep "| krex" | cut -c1-240 | head -6
find /tmp/o/proof -name "*.krexd.log" -exec grep -ho "scheduling [a-z -]*[0-9]*" {} + 2>/dev/null | sort | uniq -c
cat "$O/steps.txt"
