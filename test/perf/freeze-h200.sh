#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# freeze-h200.sh BUILDDIR OUTDIR [--mock] [--base KREXD] - issue 15's run on
# the GPU node (cgroup v2, 16 cores), every step under timeout:
#
#  1. freeze-scale.sh: krexd's own cost per region with 8, 32 and 64 idle
#     siblings, then 8 and 32 busy ones, with the cgroup2 and signal
#     freezers; with --base, a krexd of an earlier tree side by side
#     (its log has no "cost" lines: round trip only).
#     -> OUTDIR/freeze-scale/table.txt, OUTDIR/freeze-scale-busy/table.txt
#  2. the region entry split with every sibling of the fidelity mix, one
#     region per sample, 1 ms kernels, krexd at log_level=debug (the
#     measurement of doc/performance.md "One region per sample with every
#     sibling"), then entry_split.py on its krexd log: wait / drain /
#     freeze / settle / isolate p50 and p95, and per region the isolation's
#     cpuset writes and affinity moves (iso_cpuset, iso_affinity).
#     -> OUTDIR/entry-split/, OUTDIR/entry-split.txt
#
# --mock runs step 2 on the mock driver (test/mock; the figures are the
# mock's, not a GPU's: a check that the script works end to end).
set -u
[ $# -ge 2 ] || { echo "usage: freeze-h200.sh BUILDDIR OUTDIR [--mock] [--base KREXD]" >&2; exit 2; }
b=$(cd "$1" && pwd) out=$2
shift 2
mock=''
base=()
while [ $# -gt 0 ]; do
	case $1 in
	--mock) mock="--mock auto" ;;
	--base) base=(--krexd "base=$2" --krexd "now=$b/krexd/krexd"); shift ;;
	*) echo "freeze-h200: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out" || exit 2
export PYTHONDONTWRITEBYTECODE=1
freezers="cgroup2 signal"
grep -qs ' - cgroup2 ' /proc/self/mountinfo || freezers=signal
rc=0
echo "== 1. freeze-scale ($freezers), $(nproc) CPUs, $(uname -r)"
timeout -k 10 240 bash "$src/test/perf/freeze-scale.sh" --builddir "$b" --regions 200 \
	--siblings "8 32 64" --freezers "$freezers" "${base[@]}" "$out/freeze-scale" || rc=1
timeout -k 10 150 bash "$src/test/perf/freeze-scale.sh" --builddir "$b" --regions 100 \
	--siblings "8 32" --freezers "$freezers" --busy "${base[@]}" "$out/freeze-scale-busy" || rc=1
echo "== 2. region entry split, every sibling, one region per sample, 1 ms kernels"
# shellcheck disable=SC2086 # $mock is one option and its value, or nothing
timeout -k 10 300 python3 "$src/test/perf/fidelity.py" --builddir "$b" --srcdir "$src" $mock \
	--mixes all --modes krex --regions sample --region-warmup 0 --sizes 1 --samples 1:200 \
	--krexd-opt log_level=debug --out "$out/entry-split" >"$out/entry-split.log" 2>&1 || rc=1
tail -n 5 "$out/entry-split.log"
logs=$(ls "$out"/entry-split/*.krexd.log 2>/dev/null)
if [ -n "$logs" ]; then
	# shellcheck disable=SC2086 # one path per log, no spaces (fidelity.py names them)
	python3 "$src/test/perf/entry_split.py" $logs | tee "$out/entry-split.txt" || rc=1
else
	echo "freeze-h200: no krexd log from fidelity.py (see $out/entry-split.log)"
	rc=1
fi
exit $rc
