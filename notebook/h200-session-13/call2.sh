#!/bin/bash
# Device call 2 of session 13 (issue 18): (A) which sibling makes one region
# per sample at 0.1 ms slower than alone-gapped: fidelity.py with each
# sibling mix alone (cpu, async, sync, torch) and all, KREX_REGION_WARM_US at
# its default (0); (B) test/gpu/proof.sh on this tree (the gate's warm-up by
# time is there, off by default; libregion's region_end_as tidied).
. notebook/gpu-call-prologue.sh
{ date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
st "A mixes"
timeout -k 5 170 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" \
	--out /tmp/o/mixes --sizes 0.1 --samples 0.1:300 --mixes all,cpu,async,sync,torch \
	--sample-mixes all,cpu,async,sync,torch --modes alone,krex,alone-gapped --regions sample \
	--budget-s 150 --krexd-opt settle=wait >/tmp/o/mixes.txt 2>&1
echo "rc=$?" >>/tmp/o/mixes.txt
{ sed -n '/^| size_ms/,/^$/p' /tmp/o/mixes/fidelity.md | head -14; sed -n '/^| size_ms/,/^$/p' /tmp/o/mixes/fidelity-entry.md | head -10; } >"$O/mixes.md"
st proof
OUT=/tmp/o/proof timeout -k 5 400 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
cp /tmp/o/proof.txt "$O/proof.txt"; cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.fatbin.*' --exclude='*.jsonl' mixes proof 2>/dev/null
cat "$O/mixes.md"
echo "---- proof"; sed -n '/| goal |/,$p' /tmp/o/proof.txt | head -20
grep -A5 "Where region entry went" /tmp/o/proof.txt | grep "| krex" | cut -c1-240 | head -6
cat "$O/steps.txt"
