#!/bin/bash
# Device call 2 of session 14 (issue 18): the gate no longer bounds a region
# owner's launches while it holds the region (68df9e1).  Call 1 found the
# bounded queue's calls were most of the per-sample extra at 0.1 ms.
#  A. fidelity.py, no sibling: alone, krex and krex-nocap one region per
#     sample, alone-gapped; 0.1 and 1 ms; twice (call 1's a1/a2 with the
#     old gate are the "before").
#  B. test/gpu/proof.sh on this tree.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
for n in e1 e2; do
	st "A fidelity $n"
	timeout -k 5 50 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" \
		--out /tmp/o/$n --budget-s 40 --krexd-opt settle=wait --sizes 0.1,1 \
		--samples 0.1:600,1:300 --mixes none --sample-mixes none --ablation-mixes none \
		--modes alone,krex,krex-nocap,alone-gapped --regions sample --ablation-regions sample \
		>/tmp/o/$n.txt 2>&1
	echo "rc=$?" >>/tmp/o/$n.txt
	{ echo "==== $n"; sed -n '/^| size_ms/,/^$/p' /tmp/o/$n/fidelity.md | head -10; } >>"$O/fidelity.md"
done
st proof
OUT=/tmp/o/proof timeout -k 5 420 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
cp /tmp/o/proof.txt "$O/proof.txt"; cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.fatbin.*' --exclude='*.jsonl' e1 e2 proof e1.txt e2.txt 2>/dev/null
cat "$O/fidelity.md"
echo "---- proof"; sed -n '/| goal |/,$p' /tmp/o/proof.txt | head -24
grep -A5 "Where region entry went" /tmp/o/proof.txt | grep "| krex" | cut -c1-240 | head -6
cat "$O/steps.txt"
