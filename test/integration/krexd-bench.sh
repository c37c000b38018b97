#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Benchmark (prints figures, never fails on a time): begin -> grant -> end
# round trips, uncontended and with 1, 8 and 64 frozen siblings, p50/p99,
# and the region rate.  KREXD_BENCH_REGIONS (default 100) regions per point;
# KREXD_BENCH_FREEZERS (default: the first this node has) picks the freezers.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

regions=${KREXD_BENCH_REGIONS:-100}
freezers=${KREXD_BENCH_FREEZERS:-$(kt_freezers | cut -d" " -f2)}
kt_setup
kt_conf "gpus = g0"
n=0
for f in $freezers; do n=$((n + 5)); done
plan $n
bench() {
	"$CLIENT" bench --gpus g0 --siblings "$1" --regions "$regions" >"$KT_DIR/bench.out" &&
		diag "freezer=$f $(cat "$KT_DIR/bench.out")"
}
for f in $freezers; do
	ok "$f: krexd starts" krexd_start -o freezer=$f
	for s in 0 1 8 64; do
		ok "$f: $regions regions with $s siblings" bench $s
	done
	krexd_stop
done
done_testing
