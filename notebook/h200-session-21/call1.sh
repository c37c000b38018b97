#!/bin/bash
# Device call 1 of session 21 (issue 18): where the 0.1 ms per-sample excess
# is.  edge.py (this folder): one region per sample at 0.1 ms, krex-victim
# --host-split (the host's time in each call of a sample), variants in
# rotated rounds under one krexd (settle=wait): no sibling (alone, alone with
# a sleeping / spinning 0.3 ms gap, the gate with no region, the region's
# variants), then every sibling (the region's variants), then alone again.
# Region variants: the default, --warm-events, KREX_REGION_SPIN_US=20000,
# both, KREX_REGION_WARM_US=300 and 1000.  The host's idle states beside.
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
{
	echo "governor: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>&1)"
	echo "driver: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_driver 2>&1)"
	echo "idle driver: $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>&1)"
	for d in /sys/devices/system/cpu/cpu0/cpuidle/state*; do
		echo "$(basename $d): $(cat $d/name 2>/dev/null) latency $(cat $d/latency 2>/dev/null) us disabled $(cat $d/disable 2>/dev/null)"
	done
	lscpu | grep -E "Model name|^CPU\(s\)|MHz"
} >"$O/host.txt" 2>&1
st edge
timeout -k 10 420 python3 notebook/h200-session-21/edge.py --builddir "$B" --out /tmp/o/edge \
	--rounds 3 --samples 1500 --all-samples 800 >"$O/edge.txt" 2>&1
echo "rc=$?" >>"$O/edge.txt"
st done
tar czf "$O/edge-raw.tgz" -C /tmp/o edge 2>/dev/null
tail -40 "$O/edge.txt"; cat "$O/host.txt" "$O/steps.txt"
