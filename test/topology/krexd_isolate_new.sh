#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krexd_isolate_new.sh - every task's CPUs after a region are what they were
# before, also for what appeared or changed during it: a sibling that, while
# it drains, re-asserts its mask with sched_setaffinity (since Linux 6.2 the
# kernel keeps that mask when the cpuset changes), starts a thread and forks
# a child.  The isolation runs only once the siblings are frozen, so the
# mask a draining sibling sees is its whole one (before, it was already the
# others' CPUs, and a library binding to it kept them: triton on the H200).
# A task that had pinned itself inside the others' CPUs before the region
# stays pinned.
# A participant that registers from a cpuset the region narrowed gets its
# own cpuset back with the region's undo.
# With the sibling in a cpuset of its own (cgroup1) and moved by affinity
# (the signal freezer: no cgroup).  Root and a cgroup v1 cpuset and freezer
# (this VM's shape).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/topology/krexd-topo-lib.sh"

need_isolation_host freezer

# tasks_on PID CPUS: every thread of PID may run on CPUS exactly.
tasks_on() {
	local t c good=0
	[ -d "/proc/$1/task" ] || { diag "no process $1"; return 1; }
	for t in /proc/$1/task/*; do
		c=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status" 2>/dev/null)
		[ -z "$c" ] || [ "$c" = "$2" ] || { diag "pid $1 task ${t##*/} on $c, want $2"; good=1; }
	done
	return $good
}

# expand_list 0-2,5: 0,1,2,5
expand_list() {
	echo "$1" | tr ',' '\n' | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done | paste -sd, -
}

# case FREEZER: the sibling moved through its cpuset (cgroup1: krexd's
# p<ID> cpuset) or by affinity (signal: no cgroup of its own, a pid).
case_run() {
	local fz=$1 child held
	ok "$fz: krexd starts" krexd_start -o "freezer=$fz"
	kt_bg sib "$CLIENT" participant --gpus g0 --newcomers-on-drain
	wait_for 5 grep -qs registered "$KT_DIR/sib.out"
	kt_bg own "$CLIENT" region --gpus g0 --hold-ms 500
	ok "$fz: region granted, the sibling forked while held" \
		wait_for 10 grep -qs forked "$KT_DIR/sib.out"
	ok "$fz: draining, the sibling saw all its CPUs ($(sed -n 's/^drain-mask //p' "$KT_DIR/sib.out"))" \
		test "$(sed -n 's/^drain-mask //p' "$KT_DIR/sib.out")" = "$(expand_list "$all")"
	child=$(sed -n 's/^forked //p' "$KT_DIR/sib.out")
	KT_PIDS="$KT_PIDS $child"
	# the sibling's CPUs once the region holds (isolated), not while it
	# drains; its child, frozen, is moved with its cpuset (cgroup1) but
	# not by affinity (signal: the participant's pid only)
	wait_for 10 grep -qs granted "$KT_DIR/own.out"
	held=$(cpus_of "$sib" 2>/dev/null)
	diag "$fz: held: sibling $sib on $held, its child $child on $(cpus_of "${child:-0}" 2>/dev/null) (all: $all)"
	wait_for 10 kt_gone "$own"
	ok "$fz: the sibling's threads (re-pinned, new) back on $all" tasks_on "$sib" "$all"
	ok "$fz: the child it forked during the region back on $all" tasks_on "${child:-0}" "$all"
	# A participant pinned by its own choice inside the others' CPUs
	# before a region keeps that pin after it.
	kt_bg pin taskset -c "${held:-0}" "$CLIENT" participant --gpus g0 --ack-drains
	wait_for 5 grep -qs registered "$KT_DIR/pin.out"
	kt_bg own2 "$CLIENT" region --gpus g0 --hold-ms 200
	ok "$fz: second region granted" wait_for 10 grep -qs granted "$KT_DIR/own2.out"
	wait_for 10 kt_gone "$own2"
	ok "$fz: a self-pinned participant stays on $held" tasks_on "$pin" "${held:-none}"
	kill -KILL "$sib" "$pin" ${child:+"$child"} 2>/dev/null
	krexd_stop
}

kt_setup
kt_conf "gpus = g0"
plan 17
all=$(cpus_of $$)
case_run cgroup1
case_run signal
# A participant that registers while a region holds the cpuset it comes
# from narrowed (a process of the sibling's job registering on its own):
# its new cpuset, a copy of that one, comes back with the region's undo.
ok "late: krexd starts" krexd_start
kt_bg sib "$CLIENT" participant --gpus g0 --ack-drains
wait_for 5 grep -qs registered "$KT_DIR/sib.out"
kt_bg own "$CLIENT" region --gpus g0 --hold-ms 1500
wait_for 10 grep -qs granted "$KT_DIR/own.out"
kt_bg late "$CLIENT" participant --gpus g0 --ack-drains --enter "$(cpuset_dir "$sib")"
ok "late: registered during the region" wait_for 5 grep -qs registered "$KT_DIR/late.out"
diag "late: on $(cpus_of "$late"), its cpuset $(cg_cpus "$late") during the region"
wait_for 10 kt_gone "$own"
ok "late: its cpuset and threads back on $all" \
	test "$(cg_cpus "$late")" = "$all" -a "$(cpus_of "$late")" = "$all"
done_testing
