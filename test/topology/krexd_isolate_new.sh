#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krexd_isolate_new.sh - every task's CPUs after a region are what they were
# before, also for what appeared or changed during it: a sibling that, while
# a region holds it on the others' CPUs, re-asserts that mask with
# sched_setaffinity (since Linux 6.2 the kernel keeps that mask when the
# cpuset widens again), starts a thread and forks a child.  A task that had
# pinned itself inside the others' CPUs before the region stays pinned.
# Root and a cgroup v1 cpuset (this VM's shape).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/topology/krexd-topo-lib.sh"

need_isolation_host

# tasks_on PID CPUS: every thread of PID may run on CPUS exactly.
tasks_on() {
	local t c good=0
	for t in /proc/$1/task/*; do
		c=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status" 2>/dev/null)
		[ -z "$c" ] || [ "$c" = "$2" ] || { diag "pid $1 task ${t##*/} on $c, want $2"; good=1; }
	done
	return $good
}

kt_setup
kt_conf "gpus = g0"
plan 6
ok "krexd starts" krexd_start
all=$(cpus_of $$)
kt_bg sib "$CLIENT" participant --gpus g0 --newcomers-on-drain
wait_for 5 grep -qs registered "$KT_DIR/sib.out"
kt_bg own "$CLIENT" region --gpus g0 --hold-ms 500
ok "region granted, the sibling forked while held" \
	wait_for 10 grep -qs forked "$KT_DIR/sib.out"
child=$(sed -n 's/^forked //p' "$KT_DIR/sib.out")
KT_PIDS="$KT_PIDS $child"
held=$(cpus_of "${child:-0}" 2>/dev/null)
diag "held: sibling's child on $held (all: $all)"
wait_for 10 kt_gone "$own"
ok "the sibling's threads (re-pinned, new) back on $all" tasks_on "$sib" "$all"
ok "the child it forked during the region back on $all" test -n "$child" && tasks_on "$child" "$all"
# A participant pinned by its own choice inside the others' CPUs before a
# region keeps that pin after it.
kt_bg pin taskset -c "$held" "$CLIENT" participant --gpus g0 --ack-drains
wait_for 5 grep -qs registered "$KT_DIR/pin.out"
kt_bg own2 "$CLIENT" region --gpus g0 --hold-ms 200
ok "second region granted" wait_for 10 grep -qs granted "$KT_DIR/own2.out"
wait_for 10 kt_gone "$own2"
ok "a self-pinned participant stays on $held" test -n "$held" -a "$held" != "$all" && tasks_on "$pin" "$held"
done_testing
