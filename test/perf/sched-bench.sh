#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# sched-bench.sh - a region's round trip with every core busy, krexd at
# normal scheduling against krexd at SCHED_FIFO (krexd.conf sched_priority),
# side by side in one run: BUSY busy loops (default 2 per core), an owner
# taking REGIONS regions (krex-testclient bench: REGION_BEGIN -> GRANT ->
# REGION_END -> CERT) beside SIBS sibling participants that krexd freezes
# and thaws each time; ROUNDS rounds, each setting once a round, in turn.
# Prints p50/p95 per round and setting.  No GPU (no gate, no drain): the
# cost measured is krexd's and the scheduler's.  As root.
#
#	bash test/perf/sched-bench.sh BUILDDIR [ROUNDS [REGIONS [SIBS [BUSY]]]]
set -u
B=$(cd "${1:?usage: sched-bench.sh BUILDDIR [ROUNDS [REGIONS [SIBS [BUSY]]]]}" && pwd)
ROUNDS=${2:-3}
R=${3:-200}
S=${4:-8}
BUSY=${5:-$((2 * $(nproc)))}
T=$(mktemp -d)
loops=()
cleanup() {
	[ -n "${KD:-}" ] && kill "$KD" 2>/dev/null
	for p in "${loops[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rmdir /sys/fs/cgroup/*/krex-schedbench/*/ /sys/fs/cgroup/*/krex-schedbench 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
chrt -f 1 true 2>/dev/null || echo "# this machine gives root no real-time priority: both settings run normally"
for _ in $(seq "$BUSY"); do
	(while :; do :; done) &
	loops+=($!)
done
echo "# $BUSY busy loops on $(nproc) cores, $S siblings, $R regions a point"
for r in $(seq "$ROUNDS"); do
	for s in 0 1; do
		rm -rf "$T/run"
		mkdir -p "$T/run"
		"$B/krexd/krexd" -F -r "$T/run" -o gpus=g0 -o "cgroup_subtree=krex-schedbench/$r$s" \
			-o "sched_priority=$s" 2>"$T/krexd.log" &
		KD=$!
		for _ in $(seq 100); do [ -S "$T/run/krexd.sock" ] && break; sleep 0.1; done
		out=$(KREX_SOCKET=$T/run/krexd.sock "$B/test/integration/krex-testclient" bench --gpus g0 \
			--siblings "$S" --regions "$R" 2>&1)
		how=$(grep -o "scheduling [a-z-]*" "$T/krexd.log" | head -n 1)
		kill "$KD"
		wait "$KD" 2>/dev/null
		KD=
		echo "round $r sched_priority=$s (${how:-?}): $out"
	done
done
