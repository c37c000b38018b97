#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# firstlaunch.sh BUILDDIR - where does the wall-time cost of the first kernel
# after a region entry come from (issue "clean means clean": fidelity with one
# region per sample)?  Side by side in one run, 1 ms and 0.1 ms victim kernels:
#   alone                        the kernel, back to back
#   alone+sleep / alone+spin     the thread sleeps / spins US before each sample,
#                                GPU idle: a host wake-up cost vs a GPU idle cost
#   region-nosib[-noiso]         a region per sample, no sibling (isolation on/off)
#   region-hog[-noiso|-warm1]    a region per sample, an async hog sibling
#   region-hog-wiN               the warm-up kernel with N FMAs a thread
#                                (KREX_FL_WARM_ITERS="N ..."; KREX_FL_QUICK=1
#                                skips the idle and no-isolation rows)
#   region-hog-warmctx           the warm-up on the gate's own stream only
#                                (KREX_REGION_WARM=ctx), not the owner's last
#   region-hog-nowarm            the same with the library's warm-up off
#                                (KREX_REGION_WARM=0): the cost it removes
# Prints victim lines (test/workloads/victim.c) into $OUT/firstlaunch.txt.
# Reads GPU clocks, never sets them.  Needs root (freezing).
set -u
B=${1:?usage: firstlaunch.sh BUILDDIR}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
WL=$B/test/workloads
export KREX_WL_MODULE=$WL/fma.fatbin KREX_GATE_LIB=$B/gate/.libs/libkrexgate.so
N=${KREX_FL_SAMPLES:-300}
IDLE=${KREX_FL_IDLE_US:-6000}
R=$(mktemp -d)
KD=
HOG=
cleanup() {
	[ -n "$HOG" ] && { pkill -CONT -P "$HOG" 2>/dev/null; pkill -P "$HOG" 2>/dev/null; kill "$HOG" 2>/dev/null; }
	[ -n "$KD" ] && kill "$KD" 2>/dev/null
	sleep 0.5
	rm -rf "$R"
}
trap cleanup EXIT
start_krexd() { # ARGS: -o options
	[ -n "$KD" ] && { kill "$KD"; wait "$KD" 2>/dev/null; }
	"$B/krexd/krexd" -F -r "$R" -o "cgroup_subtree=krex-firstlaunch-$$" "$@" \
		>>"$OUT/firstlaunch-krexd.log" 2>&1 &
	KD=$!
	export KREX_SOCKET=$R/krexd.sock
	for _ in $(seq 50); do [ -S "$KREX_SOCKET" ] && break; sleep 0.1; done
}
v() { timeout 120 "$@" | tee -a "$OUT/firstlaunch.txt"; }
nvidia-smi --query-gpu=clocks.sm,clocks_event_reasons.active,power.draw,temperature.gpu --format=csv >"$OUT/firstlaunch-clocks.txt" 2>&1
declare -A IT
for ms in 10 1 0.1; do IT[$ms]=$(timeout 60 "$WL/krex-victim" calib $ms); done
H=$(timeout 60 "$WL/krex-victim" calib 5)
v "$WL/krex-victim" run "${IT[10]}" "$N" --label "alone-10"
for ms in 1 0.1; do
	v "$WL/krex-victim" run "${IT[$ms]}" "$N" --label "alone-$ms"
	[ -n "${KREX_FL_QUICK:-}" ] && continue
	v "$WL/krex-victim" run "${IT[$ms]}" "$N" --idle "sleep:$IDLE" --label "alone+sleep$IDLE-$ms"
	v "$WL/krex-victim" run "${IT[$ms]}" "$N" --idle "spin:$IDLE" --label "alone+spin$IDLE-$ms"
	v "$WL/krex-victim" run "${IT[$ms]}" "$N" --idle "sleep:300" --label "alone+sleep300-$ms"
done
for iso in participants ${KREX_FL_QUICK:+-}none; do
	[ "$iso" = -none ] && continue
	start_krexd -o isolate=$iso
	sfx=$([ $iso = none ] && echo -noiso)
	for ms in 1 0.1; do
		v "$B/krex/krex" run -- "$WL/krex-victim" run "${IT[$ms]}" "$N" --region sample --label "region-nosib$sfx-$ms"
	done
	"$B/krex/krex" run -- "$WL/krex-hog" "$H" --seconds 200 >/dev/null 2>&1 &
	HOG=$!
	sleep 2
	for ms in ${KREX_FL_HOG_SIZES:-10 1 0.1}; do
		v "$B/krex/krex" run -- "$WL/krex-victim" run "${IT[$ms]}" "$N" --region sample --label "region-hog$sfx-$ms"
		for wi in ${KREX_FL_WARM_ITERS:-}; do
			[ $iso = participants ] && KREX_REGION_WARM_ITERS=$wi v "$B/krex/krex" run -- "$WL/krex-victim" run "${IT[$ms]}" "$N" --region sample --label "region-hog-wi$wi-$ms"
		done
		[ $iso = participants ] && KREX_REGION_WARM=ctx v "$B/krex/krex" run -- "$WL/krex-victim" run "${IT[$ms]}" "$N" --region sample --label "region-hog-warmctx-$ms"
		[ $iso = participants ] && KREX_REGION_WARM=0 v "$B/krex/krex" run -- "$WL/krex-victim" run "${IT[$ms]}" "$N" --region sample --label "region-hog-nowarm-$ms"
		[ $iso = participants ] && v "$B/krex/krex" run -- "$WL/krex-victim" run "${IT[$ms]}" "$N" --region sample --region-warmup 1 --label "region-hog-warm1-$ms"
	done
	pkill -P "$HOG" 2>/dev/null
	kill "$HOG" 2>/dev/null
	HOG=
	sleep 0.5
done
nvidia-smi --query-gpu=clocks.sm,clocks_event_reasons.active,power.draw,temperature.gpu --format=csv >>"$OUT/firstlaunch-clocks.txt" 2>&1
