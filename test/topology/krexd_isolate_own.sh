#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krexd_isolate_own.sh - the cgroup krexd makes for a participant has a
# cpuset of its own, whichever cgroup freezer runs, so a region's isolation
# is one cpuset write per participant and never a move of each thread by
# affinity (issue 15: on the H200's cgroup v2 krexd's cgroups inherited
# their cpuset and the isolation of 4 siblings took 15.6 ms, thread by
# thread).  Counted from krexd's debug "cost" line (iso_cpuset, iso_affinity).
# The move into krexd's cgroup does not widen a participant's CPUs, and the
# region's end restores them.  And the state file is written three times
# per region whatever the number of siblings (the isolation's lines, the
# freezes, the end; it was 2N+3: a write per isolation line and per thaw).
# Root and a cpuset controller (v1 here).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/topology/krexd-topo-lib.sh"

need_isolation_host
freezers=$(kt_freezers | sed 's/ *signal//')
[ -n "$freezers" ] || skip_all "no cgroup freezer"

# cost KEY: KEY's value on the last cost line of krexd's log.
cost() { sed -n "s/.*: cost .*\b$1=\([0-9]*\).*/\1/p" "$KT_DIR/krexd.log" | tail -n 1; }
same() { [ "$1" = "$2" ] || { diag "got '$1', want '$2'"; return 1; }; }

kt_setup
kt_conf "gpus = g0" "log_level = debug"
set -- $freezers
plan $((8 * $#))
mine=$(cat "$(cpuset_dir $$)/cpuset.effective_cpus")
for f in $freezers; do
	: >"$KT_DIR/krexd.log"
	ok "$f: krexd starts" krexd_start -o freezer=$f
	kt_bg s1 "$CLIENT" participant --gpus g0
	kt_bg s2 "$CLIENT" participant --gpus g0
	kt_bg s3 "$CLIENT" participant --gpus g0
	wait_for 5 grep -qs registered "$KT_DIR/s3.out"
	ok "$f: a sibling's cpuset is krexd's own cgroup" \
		sh -c "cat /proc/$s1/cpuset | grep -q '/$KT_SUB/p[0-9]*\$'"
	ok "$f: with the CPUs it came with, not widened" same "$(cg_cpus "$s1")" "$mine"
	kt_bg own "$CLIENT" region --gpus g0 --hold-ms 300
	ok "$f: region granted and ended" wait_for 10 kt_gone "$own"
	grep -q granted "$KT_DIR/own.out" || diag "$(cat "$KT_DIR/own.out")"
	diag "$f: $(grep ': cost ' "$KT_DIR/krexd.log" | tail -n 1 | sed 's/.*: cost //')"
	ok "$f: isolation moved no thread by affinity" same "$(cost iso_affinity)" 0
	ok "$f: one cpuset write each: 3 siblings and the owner" same "$(cost iso_cpuset)" 4
	ok "$f: the sibling's CPUs are back" same "$(cg_cpus "$s2")" "$mine"
	ok "$f: the state file written 3 times in the region, not once per sibling and line" \
		same "$(cost state_writes)" 3
	krexd_stop
	for p in $s1 $s2 $s3; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	KT_PIDS=
	kt_rm_cgroups
done
done_testing
