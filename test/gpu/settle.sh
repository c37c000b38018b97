#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# settle.sh - the proof of issue 11 on a real GPU, in one call (doc/performance-gpu.md
# "Settle: the GPU's clock in the region").
#
#	bash test/gpu/settle.sh [BUILDDIR]        (from the source tree's root, as root)
#
# BUILDDIR: a built tree (default $KREX_BUILDDIR, else the source tree; if
# neither has krexd it builds, as run-gpu.sh does).
# A power-hungry sibling (torch, 8192x8192 fp16 matmuls back to back, under
# `krex run`) and a measuring job that takes REGIONS regions, each after
# GAP_MS ms in which the sibling runs, timing SAMPLES 4096x4096 fp16 matmuls
# with CUDA events inside each; side by side:
#   alone  no sibling, no krexd (the reference)
#   off    sibling, krexd settle = off (no wait, the edges judged: starts capped = degraded)
#   mark   sibling, krexd settle = mark (no wait; a throttled region is degraded)
#   wait   sibling, krexd settle = wait (waits for the clock, then judges)
#   chain  sibling, settle = wait, two measuring jobs at once with no gap:
#          each one's next region waits behind the other's, so krexd chains
#          them (doc/design.md "Chained regions"); the report splits the
#          settle by the region's place in its chain (only a chain's first
#          region should wait; a chain is cut after chain_max, CHAIN_MAX=1s;
#          krexd's first grant waits for both owners' requests, a test hook,
#          so the second owner's first region is always chained)
#   alone-end  the reference again, last, on the GPU the sibling heated
# Prints p50/p95 versus alone, the settle time, clean/degraded counts and the
# two checks of the issue; writes every region's certificate fields as JSON
# lines and table.md under $OUT (default ./settle-out).  MODES="alone off wait"
# picks modes.  Reads GPU clocks, never sets them.  Each step has a time
# limit; the whole stays under ~6 minutes with the defaults.
#
# KREX_GPU_MOCK=1: a dry run on the mock NVML (test/mock/mock_nvml.c, a TEST
# DOUBLE) and the mock CUDA driver, without a GPU or torch: it checks the
# script, the settle modes and the counting; its timings MEAN NOTHING.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/test/gpu/gpu-lib.sh"
gpu_out settle-out
MODES=${MODES:-alone off mark wait chain}
REGIONS=${REGIONS:-30}
SAMPLES=${SAMPLES:-20}
GAP_MS=${GAP_MS:-300}
HEAT_S=${HEAT_S:-5}
CHAIN_MAX=${CHAIN_MAX:-1s} # krexd's chain_max (its default)

gpu_start "${1:-}"
JOB="python3 $src/test/gpu/settle_job.py"
gpu_krex_env settle
if [ "$MOCK" = 1 ]; then
	export KREX_SETTLE_MOCK=1
	HEAT_S=${HEAT_S_MOCK:-1}
fi

echo "build: $B; modes: $MODES; $REGIONS regions x $SAMPLES samples, ${GAP_MS} ms sibling gap"
echo "GPU before: $(gpu_clocks)"
for m in $MODES; do
	rm -f "$OUT/$m.jsonl"
	if [ "$m" = alone ] || [ "$m" = alone-end ]; then
		# alone-end: the reference again after the sibling has heated the GPU
		KREX_UNPROTECTED=1 KREX_SOCKET=$W/none.sock timeout 120 $JOB measure --label "$m" \
			--out "$OUT/$m.jsonl" --regions "$REGIONS" --samples "$SAMPLES" --gap-ms 50 \
			>"$W/$m.log" 2>&1 || { echo "FAIL: $m (see $W/$m.log)"; tail -n 5 "$W/$m.log"; exit 1; }
		echo "$m: done; GPU: $(gpu_clocks)"
		continue
	fi
	mkdir -p "$W/run"
	# chain: krexd's first grant waits until both owners' requests are queued
	# (a test hook, HACKING.md), so the second is chained on any machine
	KREX_TEST_GRANT_QUEUED=0
	[ "$m" = chain ] && KREX_TEST_GRANT_QUEUED=2
	export KREX_TEST_GRANT_QUEUED
	krexd_up "$W/krexd-$m.log" -v -r "$W/run" -o gpus=0 -o "settle=${m/chain/wait}" -o "chain_max=$CHAIN_MAX" -o "cgroup_subtree=krex-settle-$$"
	timeout 300 "$KREX" run -- $JOB hog >"$W/hog-$m.log" 2>&1 &
	PIDS=$!
	sleep "$HEAT_S" # to the power cap
	echo "$m: GPU with the sibling: $(gpu_clocks)"
	if [ "$m" = chain ]; then
		# two owners, no gap: chained regions (their records, in turn, in chain.jsonl)
		rm -rf "$W/barrier"
		mkdir -p "$W/barrier"
		timeout 150 "$KREX" run -- $JOB measure --label chain-a --out "$W/chain-a.jsonl" \
			--regions "$REGIONS" --samples "$SAMPLES" --gap-ms 0 --story-once \
			--barrier "$W/barrier" >"$W/measure-chain-a.log" 2>&1 &
		ca=$!
		timeout 150 "$KREX" run -- $JOB measure --label chain-b --out "$W/chain-b.jsonl" \
			--regions "$REGIONS" --samples "$SAMPLES" --gap-ms 0 --story-once \
			--barrier "$W/barrier" >"$W/measure-chain-b.log" 2>&1
		rb=$?
		wait "$ca"
		ra=$?
		[ "$ra" = 0 ] && [ "$rb" = 0 ] || { echo "FAIL: measure chain (exit a $ra, b $rb; see $W/measure-chain-[ab].log)"; tail -n 20 "$W/measure-chain-a.log" "$W/measure-chain-b.log" "$W/krexd-chain.log"; exit 1; }
		cat "$W/chain-a.jsonl" "$W/chain-b.jsonl" >"$OUT/chain.jsonl"
	else
		# mock: off and mark judge a region that starts capped; their story's
		# GPU stays capped (10 min), so it does whatever the machine's load
		story=500
		[ "$m" = wait ] || story=600000
		timeout 150 "$KREX" run -- $JOB measure --label "$m" --out "$OUT/$m.jsonl" \
			--regions "$REGIONS" --samples "$SAMPLES" --gap-ms "$GAP_MS" --story-ms "$story" \
			>"$W/measure-$m.log" 2>&1 ||
			{ echo "FAIL: measure $m (see $W/measure-$m.log)"; tail -n 5 "$W/measure-$m.log"; exit 1; }
	fi
	stop_all
	krexd_down
	echo "$m: done"
done
echo "GPU after: $(gpu_clocks)"
echo
python3 "$src/test/gpu/settle_job.py" report "$OUT"
