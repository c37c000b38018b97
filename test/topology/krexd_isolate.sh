#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krexd_isolate.sh - krexd's isolation hook end to end: during a region the
# sibling participant's cpuset leaves the owner's core and comes back after,
# the certificate says so, and a krexd killed mid-region has its changes
# undone by the next one.  Root and a cgroup v1 cpuset (this VM's shape).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/topology/krexd-topo-lib.sh"

need_isolation_host

same() { [ "$1" = "$2" ] || { diag "got '$1', want '$2'"; return 1; }; }

kt_setup
kt_conf "gpus = g0"
plan 9
ok "krexd starts" krexd_start
kt_bg sib "$CLIENT" participant --gpus g0 --ack-drains
wait_for 5 grep -qs . "/proc/$sib/cpuset"
before=$(cg_cpus "$sib")
kt_bg own "$CLIENT" region --gpus g0 --hold-ms 1500
ok "region granted" wait_for 5 grep -qs granted "$KT_DIR/own.out"
owner_cpus=$(cpus_of "$own")
sib_cpus=$(cg_cpus "$sib")
diag "held: owner on $owner_cpus, sibling's cpuset $sib_cpus (was $before)"
ok "owner and sibling on disjoint CPUs" test -n "$owner_cpus" -a -n "$sib_cpus" -a \
	"$owner_cpus" != "$sib_cpus" -a "$sib_cpus" != "$before"
ok "region ends" wait_for 10 kt_gone "$own"
ok "sibling's cpuset back" same "$(cg_cpus "$sib")" "$before"
known=$(sed -n 's/^known=//p' "$KT_DIR/own.out")
ok "certificate: isolation known (known=$known), one process moved" \
	test $((${known:-0} & 2)) = 2 -a "$(sed -n 's/^moved=//p' "$KT_DIR/own.out")" = 1
# Crash: kill krexd -9 while it holds a region; the next one undoes it.
kt_bg own2 "$CLIENT" region --gpus g0 --hold-ms 20000
wait_for 5 grep -qs granted "$KT_DIR/own2.out"
held=$(cpus_of "$own2")
kill -KILL "$KREXD_PID"
wait "$KREXD_PID" 2>/dev/null
KREXD_PID=
ok "owner pinned when krexd died" test "$held" != "$(cpus_of $$)"
ok "next krexd starts" krexd_start
ok "owner's CPUs restored by the next krexd" same "$(cpus_of "$own2" 2>/dev/null || echo gone)" \
	"$(cpus_of $$)"
done_testing
