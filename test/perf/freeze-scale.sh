#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# freeze-scale.sh - where krexd's own time per region goes with many siblings.
#
#   test/perf/freeze-scale.sh [--builddir B] [--regions N] [--siblings "8 32 64"]
#       [--freezers "cgroup1 cgroup2 signal"] [--busy] [--krexd LABEL=PATH]... OUTDIR
#
# For each krexd given (default: B/krexd/krexd, label "now"), each
# freezer and each sibling count: a krexd of its own (log_level=debug, a
# cgroup subtree of its own), krex-testclient bench with that many idle
# sibling participants on its GPU (no gate: no drain, krexd's own cost) and
# N regions; with --busy the siblings spin (a freeze must stop running
# processes; on a small machine that is mostly the scheduler's time).  krexd logs one "region N: cost ..." line per region; this
# prints p50/p95/p99 per phase (freeze prepare/start/poll, isolation, undo,
# thaw, state file writes, entry and exit) and the owner's round trip, per
# krexd side by side, the krexds taking turns point by point.  A benchmark:
# figures only, it fails only when a run breaks.  Needs root for the cgroup
# freezers.  Everything goes under OUTDIR (table.txt, one .log per run).
set -u
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=$srcdir
regions=200
sibs="8 32 64"
freezers=
busy=0
krexds=()
while [ $# -gt 1 ]; do
	case $1 in
	--busy) busy=1; shift; continue ;;
	--builddir) builddir=$2 ;;
	--regions) regions=$2 ;;
	--siblings) sibs=$2 ;;
	--freezers) freezers=$2 ;;
	--krexd) krexds+=("$2") ;;
	*) echo "freeze-scale: unknown option $1" >&2; exit 2 ;;
	esac
	shift 2
done
[ $# = 1 ] || { echo "usage: freeze-scale.sh [options] OUTDIR" >&2; exit 2; }
out=$1
client=$builddir/test/integration/krex-testclient
[ -x "$client" ] || { echo "freeze-scale: $client not built (make -C test/integration krex-testclient)" >&2; exit 2; }
[ ${#krexds[@]} -gt 0 ] || krexds=("now=$builddir/krexd/krexd")
for k in "${krexds[@]}"; do
	[ -x "${k#*=}" ] || { echo "freeze-scale: krexd ${k#*=} not found" >&2; exit 2; }
done
if [ -z "$freezers" ]; then
	[ "$(id -u)" = 0 ] && grep -qs ' - cgroup .*freezer' /proc/self/mountinfo && freezers="$freezers cgroup1"
	[ "$(id -u)" = 0 ] && grep -qs ' - cgroup2 ' /proc/self/mountinfo && freezers="$freezers cgroup2"
	freezers="$freezers signal"
fi
mkdir -p "$out" || exit 2
run=$(mktemp -d /tmp/krex-fscale.XXXXXX) || exit 2
chmod 755 "$run"
sub=krex-fscale/s$$
kpid=

# Every krexd started here is stopped (it thaws and removes what it made);
# what a killed one left is thawed and removed too.
cleanup() {
	local d
	[ -n "$kpid" ] && kill -TERM "$kpid" 2>/dev/null && wait "$kpid" 2>/dev/null
	for d in /sys/fs/cgroup/freezer/$sub/p* /sys/fs/cgroup/unified/$sub/p* /sys/fs/cgroup/$sub/p*; do
		[ -f "$d/freezer.state" ] && echo THAWED >"$d/freezer.state" 2>/dev/null
		[ -f "$d/cgroup.freeze" ] && echo 0 >"$d/cgroup.freeze" 2>/dev/null
	done
	for d in /sys/fs/cgroup/freezer /sys/fs/cgroup/cpuset /sys/fs/cgroup/unified /sys/fs/cgroup; do
		rmdir "$d/$sub"/p* "$d/$sub" "$d/krex-fscale" 2>/dev/null
	done
	rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# one LABEL KREXD FREEZER SIBLINGS: one point; its log and the bench line go to OUTDIR/LABEL-FREEZER-SIBLINGS.*.
one() {
	local bin=$2 f=$3 n=$4 tag=$1-$3-$4 _
	rm -f "$run/krexd.sock"
	printf 'gpus = g0\nlog_level = debug\n' >"$run/krexd.conf"
	"$bin" -F -c "$run/krexd.conf" -r "$run" -o "cgroup_subtree=$sub" -o "freezer=$f" \
		>"$out/$tag.log" 2>&1 &
	kpid=$!
	for _ in $(seq 50); do
		"$client" -s "$run/krexd.sock" status >/dev/null 2>&1 && break
		sleep 0.1
	done
	timeout -k 5 300 "$client" -s "$run/krexd.sock" bench --gpus g0 --siblings "$n" \
		--regions "$regions" --busy $busy >"$out/$tag.bench" 2>&1 || echo "freeze-scale: $tag: bench failed: $(tail -1 "$out/$tag.bench")" >&2
	kill -TERM "$kpid" 2>/dev/null
	wait "$kpid" 2>/dev/null
	kpid=
}

echo "freeze-scale: $(uname -r), $(nproc) CPUs, regions=$regions siblings=$sibs busy=$busy freezers=$freezers" | tee "$out/table.txt"
for f in $freezers; do
	for n in $sibs; do
		for k in "${krexds[@]}"; do
			one "${k%%=*}" "${k#*=}" "$f" "$n"
		done
	done
done
labels=$(for k in "${krexds[@]}"; do printf '%s ' "${k%%=*}"; done)
python3 "$srcdir/test/perf/entry_split.py" --cost-table "$out" $labels | tee -a "$out/table.txt"
