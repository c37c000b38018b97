#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ctxchurn-run.sh BUILD OUT ROUNDS: krex-victim timing 1 ms and 0.1 ms
# kernels (no KREX, no region) alone, beside ctxchurn.py proc and beside
# ctxchurn.py inproc (GPU contexts made and ended all along, no kernel), in
# ROUNDS interleaved rounds; each run's line, with the contexts made during
# its timed samples, into OUT/runs.txt, its samples into OUT/raw/.  Session
# 37, call 3.  Every step under timeout.
set -u
B=$1 O=$2 R=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
V=$B/test/workloads/krex-victim
mkdir -p "$O/raw"
it1=$(timeout 60 "$V" calib 1) && it01=$(timeout 60 "$V" calib 0.1) ||
	{ echo "calib failed" >>"$O/runs.txt"; exit 1; }
echo "calib 1ms=$it1 0.1ms=$it01 ${KREX_CHURN_TAG:-}" >>"$O/runs.txt"
# run TAG COND ITERS SAMPLES
run() {
	local tag=$1 c=$2 it=$3 n=$4 log=$O/raw/$1.churn pid= out i a b
	: >"$log"
	if [ "$c" != none ]; then
		timeout 120 python3 "$here/ctxchurn.py" "$c" 100 "$log" &
		pid=$!
		for i in $(seq 200); do # the churn going: its first context made (<= 20 s)
			grep -q '^made' "$log" && break
			sleep 0.1
		done
	fi
	out=$(timeout 60 "$V" run "$it" "$n" --region none --label "$tag" --raw "$O/raw/$tag.txt")
	if [ -n "$pid" ]; then
		touch "$log.stop"
		wait "$pid"
	fi
	a=$(sed -n 's/.* t_ready=\([0-9.]*\).*/\1/p' <<<"$out")
	b=$(sed -n 's/.* t_end=\([0-9.]*\).*/\1/p' <<<"$out")
	made=$(awk -v a="${a:-0}" -v b="${b:-0}" '$1 == "made" && $2 >= a && $2 <= b { n++ } END { print n + 0 }' "$log")
	echo "$out made_during=$made errors=$(grep -c '^err' "$log")" >>"$O/runs.txt"
}
for r in $(seq "$R"); do
	for c in none proc inproc; do
		run "${KREX_CHURN_TAG:-x}.$c.1.r$r" "$c" "$it1" "${KREX_CHURN_N1:-4000}"
		run "${KREX_CHURN_TAG:-x}.$c.0.1.r$r" "$c" "$it01" "${KREX_CHURN_N01:-10000}"
	done
done
