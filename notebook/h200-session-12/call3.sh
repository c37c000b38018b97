#!/bin/bash
# Device call 3 of session 12 (issue 18, warm edges): what brings a 0.1 ms
# kernel back to its back-to-back speed after an idle gap, and does it in
# one region per sample.
#  A. alone (no KREX): krex-victim, 400 samples of the 0.1 ms kernel: back to
#     back; after an idle gap (sleep 1.5 ms, the entry's freeze-to-grant
#     part; 7 ms, a whole entry) followed by K untimed kernels of its own
#     (K = 0, 1, 3, 10, 30: 0 to 3 ms of GPU time); a spin gap.
#  B. fidelity.py, one region per sample, every sibling, alone / krex /
#     alone-gapped, with --region-warmup 1, 3 and 10.
. notebook/gpu-call-prologue.sh
{ date -u; uname -r; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
V=$B/test/workloads/krex-victim
st calib
IT=$(timeout 60 "$V" calib 0.1 | tail -1 | awk '{print $NF}')
echo "0.1 ms = $IT iters" >"$O/alone.txt"
a() {
	local label=$1
	shift
	timeout 60 "$V" run "$IT" 400 --warmup 20 --label "$label" "$@" 2>&1 | tail -1 >>"$O/alone.txt"
}
st "A alone"
a b2b
for gap in 1500 7000; do
	for k in 0 1 3 10 30; do a "sleep$gap-warm$k" --idle "sleep:$gap" --region-warmup "$k"; done
done
a spin1500-warm0 --idle spin:1500
a spin1500-warm3 --idle spin:1500 --region-warmup 3
a b2b-again
for k in 1 3 10; do
	st "B fidelity warm $k"
	timeout -k 5 90 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" \
		--out "/tmp/o/w$k" --sizes 0.1 --samples 0.1:400 --mixes all --sample-mixes all \
		--modes alone,krex,alone-gapped --regions sample --budget-s 80 --krexd-opt settle=wait \
		--region-warmup "$k" >"/tmp/o/w$k.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/w$k.txt"
	{ echo "==== region-warmup $k"; sed -n '/^| size_ms/,/^$/p' /tmp/o/w$k/fidelity.md | head -12; } >>"$O/fidelity.md"
done
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.jsonl' w1 w3 w10 2>/dev/null
cat "$O/alone.txt"; cat "$O/fidelity.md"; cat "$O/steps.txt"
