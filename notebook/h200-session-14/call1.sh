#!/bin/bash
# Device call 1 of session 14 (issue 18, the per-sample extra): a region per
# sample times a 0.1 ms kernel +4-5 % slow in its events with any sibling,
# even busy loops only (session 13, call 2 A), and neither a warm-up by
# time nor NVML takes it off.  Is it host-side (the gated launch after the
# region begins, the thread moved by the isolation) or the GPU's?
# krex-victim --spacer: an untimed kernel right before each sample's start
# event, not waited for, so the event holds the kernel's GPU time only.
#  A. alone (no KREX), 0.1 ms, 400 samples: back to back and after a 7 ms
#     sleep, each without and with a 0.05 ms spacer.
#  B. fidelity.py, no sibling at all: alone, krex with no region (the gate
#     by itself) and with a region per sample, krex-nocap, krex-noiso,
#     alone-gapped; 0.1 and 1 ms; without (a) and with (b) a 0.05 ms
#     spacer, a1 b1 a2 b2.
#  C. fidelity.py per sample with every sibling, without (c) and with (d)
#     the spacer.
. notebook/gpu-call-prologue.sh
{
	date -u; uname -r; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv
} >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
V=$B/test/workloads/krex-victim
st calib
IT=$(timeout 60 "$V" calib 0.1 | tail -1 | awk '{print $NF}')
SP=$(timeout 60 "$V" calib 0.05 | tail -1 | awk '{print $NF}')
echo "0.1 ms = $IT iters, 0.05 ms = $SP iters" >"$O/alone.txt"
a() {
	local it=$1 n=$2 label=$3
	shift 3
	timeout 60 "$V" run "$it" "$n" --warmup 20 --label "$label" "$@" 2>&1 | tail -1 >>"$O/alone.txt"
}
st "A alone 0.1 ms"
a "$IT" 400 b2b
a "$IT" 400 b2b-spacer --spacer "$SP"
a "$IT" 400 sleep7000-w1 --idle sleep:7000 --region-warmup 1
a "$IT" 400 sleep7000-w1-spacer --idle sleep:7000 --region-warmup 1 --spacer "$SP"
a "$IT" 400 b2b-again
a "$IT" 400 b2b-spacer-again --spacer "$SP"
fid() {
	local name=$1 lim=$2
	shift 2
	st "fidelity $name"
	timeout -k 5 "$lim" python3 test/perf/fidelity.py --full --builddir "$B" \
		--srcdir "$PWD" --out "/tmp/o/$name" --budget-s $((lim - 10)) \
		--krexd-opt settle=wait "$@" >"/tmp/o/$name.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/$name.txt"
	{ echo "==== $name: $*"; sed -n '/^| size_ms/,/^$/p' /tmp/o/$name/fidelity.md | head -16; } >>"$O/fidelity.md"
	{ echo "==== $name"; sed -n '/^| size_ms | mode/,/^$/p' /tmp/o/$name/fidelity-entry.md | head -10; } >>"$O/entry.md"
}
nomix=(--sizes 0.1,1 --samples 0.1:600,1:300 --mixes none --sample-mixes none --ablation-mixes none
	--modes alone,krex,krex-nocap,krex-noiso,alone-gapped --regions none,sample --ablation-regions sample)
fid a1 60 "${nomix[@]}"
fid b1 60 "${nomix[@]}" --spacer-ms 0.05
fid a2 60 "${nomix[@]}"
fid b2 60 "${nomix[@]}" --spacer-ms 0.05
all=(--sizes 0.1 --samples 0.1:400 --mixes all --sample-mixes all --modes alone,krex,alone-gapped --regions sample)
fid c1 80 "${all[@]}"
fid d1 80 "${all[@]}" --spacer-ms 0.05
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.jsonl' a1 b1 a2 b2 c1 d1 a1.txt b1.txt a2.txt b2.txt c1.txt d1.txt 2>/dev/null
cat "$O/env.txt"; cat "$O/alone.txt"; cat "$O/fidelity.md"; cat "$O/steps.txt"
