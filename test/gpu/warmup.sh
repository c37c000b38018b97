#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# warmup.sh BUILDDIR - is the wall-time cost of the first kernel after region
# entry removed by one untimed kernel inside the region?  Victim kernels of 1
# and 10 ms, 10 samples per region, an async sibling of 5 ms kernels, with
# --region-warmup 0 and 1 (doc/performance.md "H200").  Prints victim lines.
set -u
B=${1:?usage: warmup.sh BUILDDIR}
WL=$B/test/workloads
export KREX_WL_MODULE=$WL/fma.fatbin KREX_GATE_LIB=$B/gate/.libs/libkrexgate.so
R=$(mktemp -d)
"$B/krexd/krexd" -F -r "$R" -o queue_cap=2 -o "cgroup_subtree=krex-warmup-$$" >"$R/krexd.log" 2>&1 &
KD=$!
export KREX_SOCKET=$R/krexd.sock
for _ in $(seq 50); do [ -S "$KREX_SOCKET" ] && break; sleep 0.1; done
declare -A IT
for ms in 1 10; do IT[$ms]=$("$WL/krex-victim" calib $ms); done
H=$("$WL/krex-victim" calib 5)
for ms in 1 10; do "$WL/krex-victim" run "${IT[$ms]}" 200 --label "alone-$ms"; done
"$B/krex/krex" run -- "$WL/krex-hog" "$H" --seconds 60 >/dev/null 2>&1 &
HOG=$!
sleep 2
for ms in 1 10; do
	for wu in 0 1; do
		timeout 60 "$B/krex/krex" run -- "$WL/krex-victim" run "${IT[$ms]}" 300 --region batch \
			--batch 10 --region-warmup $wu --label "krex-$ms-warmup$wu"
	done
done
pkill -P $HOG 2>/dev/null
kill $HOG 2>/dev/null
kill $KD
wait 2>/dev/null
rm -rf "$R"
