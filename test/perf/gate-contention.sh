#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Jobs per GPU against the gate's bounded queue (doc/scale.md "Jobs per
# GPU"): for each "HOGS:KERNEL_MS" in KREX_GC_POINTS (default "2:5 3:5 4:5
# 4:1 8:1"), that many async hogs (krex-hog, kernels of KERNEL_MS alone:
# calibrated by krex-victim calib on a GPU) share one GPU under a private krexd for
# KREX_GC_SECONDS (default 8); half way KREX_GC_REGIONS regions (default 3)
# are taken beside them.  Prints per point the launches of each hog, the
# bounded queue's waits and give-ups (gate.queue_gave_up: a wait for a mark
# that passed its 50 ms and let the stream queue on) and each region's outcome
# and drain time.  A benchmark: fails only when a point does not run.
#
# The mock GPU driver by default; KREX_GC_REAL=1 runs the real driver (a GPU
# machine: test/workloads/fma.fatbin built, GPU "0" as NVML names it).
#
# With $OUT set (the GPU machine's result folder) the output is also written
# to $OUT/gate-contention.txt.
#
#	top_srcdir=$PWD top_builddir=$PWD bash test/perf/gate-contention.sh
#	KREX_GC_REAL=1 KREX_GC_POINTS="4:5 8:5 16:5 8:1 16:1 32:1" top_srcdir=$PWD top_builddir=$B bash test/perf/gate-contention.sh
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

[ -z "${OUT:-}" ] || { mkdir -p "$OUT" && exec > >(tee "$OUT/gate-contention.txt") 2>&1; }
points=${KREX_GC_POINTS:-2:5 3:5 4:5 4:1 8:1}
secs=${KREX_GC_SECONDS:-8}
regions=${KREX_GC_REGIONS:-3}
MOCKLIB=$top_builddir/test/mock/.libs
WL=$top_builddir/test/workloads
KREX=$top_builddir/krex/krex
[ -x "$WL/krex-hog" ] && [ -x "$KREX" ] || skip_all "krex-hog or krex not built"
LIBS=$top_builddir/libregion/.libs
if [ "${KREX_GC_REAL:-0}" = 1 ]; then
	GPU=0
	[ -r "$WL/fma.fatbin" ] || skip_all "no $WL/fma.fatbin (KREX_GC_REAL=1 needs a GPU build)"
	export KREX_WL_MODULE=$WL/fma.fatbin
else
	GPU=mock0
	[ -r "$MOCKLIB/libcuda.so.1" ] || skip_all "mock driver not built"
	LIBS=$MOCKLIB:$LIBS
	export KREX_MOCK_GPU=/krex-gc-$$
fi
kt_setup
kt_conf "gpus = $GPU"
export KREX_GPUS=$GPU LD_LIBRARY_PATH=$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KREX_GATE_LIB=$top_builddir/gate/.libs/libkrexgate.so
GC_PIDS=""
# the hogs (krex run and its child) first, then krexd and the cgroups
gc_cleanup() {
	local p
	for p in $GC_PIDS; do
		pkill -KILL -P "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	kt_cleanup
	[ -z "${KREX_MOCK_GPU:-}" ] || rm -f "/dev/shm$KREX_MOCK_GPU"
}
trap gc_cleanup EXIT
n=0
for p in $points; do n=$((n + 1)); done
plan "$n"

# sum KEY: the gate counter KEY over every hog of the point
sum() { cat "$KT_DIR"/counts.* 2>/dev/null | awk -v k="$1" '$2 == k { s += $3 } END { print s + 0 }'; }
point() {
	local hogs=${1%%:*} ms=${1#*:} it i pids="" outs=""
	rm -f "$KT_DIR"/counts.* "$KT_DIR"/hog.*
	# the mock's kernels take ITERS microseconds; a real GPU's are calibrated
	if [ "$GPU" = mock0 ]; then
		it=$(awk -v m="$ms" 'BEGIN { print int(m * 1000) }')
	else
		it=$(timeout 60 "$WL/krex-victim" calib "$ms") || return 1
	fi
	krexd_start || return 1
	for i in $(seq "$hogs"); do
		"$KREX" run --gpus "$GPU" -- env KREX_GATE_COUNTS="$KT_DIR/counts.$i" \
			"$WL/krex-hog" "$it" --seconds "$secs" --counter "$KT_DIR/hog.$i" &
		pids="$pids $!"
	done
	GC_PIDS=$pids
	sleep $((secs / 2))
	for i in $(seq "$regions"); do
		rm -f "$KT_DIR/cert"
		timeout 30 "$KREX" region --gpus "$GPU" --json --cert "$KT_DIR/cert" -- sleep 0.05 2>/dev/null ||
			{ krexd_stop; return 1; }
		outs="$outs $(sed -n 's/.*"outcome":"\([a-z]*\)".*"drain_us":\([0-9]*\).*/\1,drain=\2us/p' "$KT_DIR/cert")"
	done
	wait $pids
	krexd_stop
	diag "$hogs hogs of $ms ms kernels ($it iterations), $secs s: launches $(cat "$KT_DIR"/hog.* | tr '\n' ' ')(GPU time $(cat "$KT_DIR"/hog.* | awk -v m="$ms" '{ s += $1 } END { printf "%.1f", s * m / 1e3 }') s); queue waits $(sum gate.queue_waits), gave up $(sum gate.queue_gave_up); regions:$outs"
}
for p in $points; do
	ok "async hogs:kernel_ms $p" point "$p"
done
done_testing
