#!/bin/bash
# Device call 1 of session 13 (issue 18, warm edges): session 12 found a
# 0.1 ms kernel after an idle gap +3.2-4.6 % slower (event p95) when the
# host thread slept through the gap, +0.8 % when it spun.  Is a host that is
# awake again for a while before the first timed kernel enough, and does the
# gate's new warm-up by time (KREX_REGION_WARM_US: warm kernels one after
# another, the owner's thread polling, until N us after the grant) bring one
# region per sample closer to back to back?
#  A. alone (no KREX), krex-victim, 0.1 ms (400 samples) and 1 ms (300):
#     back to back; a 7 ms sleep, then S us of host spin (S = 0, 300, 1000,
#     3000) or S us of empty kernels (--warm-us), then 1 untimed kernel;
#     a 7 ms spin gap.
#  B. fidelity.py one region per sample, every sibling, 0.1 and 1 ms,
#     KREX_REGION_WARM_US = 0 / 1000, alternated A B A B.
. notebook/gpu-call-prologue.sh
{
	date -u; uname -r; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv
	echo "governor: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>&1)"
	echo "driver: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_driver 2>&1)"
	for d in /sys/devices/system/cpu/cpu0/cpuidle/state*; do
		echo "idle $(cat $d/name 2>&1) latency=$(cat $d/latency 2>&1)us disable=$(cat $d/disable 2>&1)"
	done
	grep -m1 "model name" /proc/cpuinfo
} >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
V=$B/test/workloads/krex-victim
st calib
IT=$(timeout 60 "$V" calib 0.1 | tail -1 | awk '{print $NF}')
IT1=$(timeout 60 "$V" calib 1 | tail -1 | awk '{print $NF}')
echo "0.1 ms = $IT iters, 1 ms = $IT1 iters" >"$O/alone.txt"
a() {
	local it=$1 n=$2 label=$3
	shift 3
	timeout 60 "$V" run "$it" "$n" --warmup 20 --label "$label" "$@" 2>&1 | tail -1 >>"$O/alone.txt"
}
st "A alone 0.1 ms"
a "$IT" 400 b2b
a "$IT" 400 sleep7000-w1 --idle sleep:7000 --region-warmup 1
for s in 300 1000 3000; do
	a "$IT" 400 "sleep7000-spin$s-w1" --idle "sleep:7000+spin:$s" --region-warmup 1
	a "$IT" 400 "sleep7000-empty$s-w1" --idle sleep:7000 --warm-us "$s" --region-warmup 1
done
a "$IT" 400 spin7000-w1 --idle spin:7000 --region-warmup 1
a "$IT" 400 b2b-again
st "A alone 1 ms"
a "$IT1" 300 b2b-1ms
a "$IT1" 300 sleep7000-w1-1ms --idle sleep:7000 --region-warmup 1
a "$IT1" 300 sleep7000-spin1000-w1-1ms --idle "sleep:7000+spin:1000" --region-warmup 1
a "$IT1" 300 sleep7000-empty1000-w1-1ms --idle sleep:7000 --warm-us 1000 --region-warmup 1
a "$IT1" 300 b2b-1ms-again
run() {
	local name=$1 us=$2
	st "B fidelity $name"
	KREX_REGION_WARM_US=$us timeout -k 5 100 python3 test/perf/fidelity.py --full --builddir "$B" \
		--srcdir "$PWD" --out "/tmp/o/$name" --sizes 0.1,1 --samples 0.1:400,1:300 --mixes all \
		--sample-mixes all --modes alone,krex,alone-gapped --regions sample --budget-s 90 \
		--krexd-opt settle=wait >"/tmp/o/$name.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/$name.txt"
	{ echo "==== $name (KREX_REGION_WARM_US=$us)"; sed -n '/^| size_ms/,/^$/p' /tmp/o/$name/fidelity.md | head -12; } >>"$O/fidelity.md"
}
run a1-w0 0
run b1-w1000 1000
run a2-w0 0
run b2-w1000 1000
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.jsonl' a1-w0 b1-w1000 a2-w0 b2-w1000 2>/dev/null
cat "$O/env.txt"; cat "$O/alone.txt"; cat "$O/fidelity.md"; cat "$O/steps.txt"
