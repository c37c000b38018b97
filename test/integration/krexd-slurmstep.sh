#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A process in a Slurm step's cgroup stays in it (cgroup v1 freezer and
# cpuset, on a Slurm-like tree slurm_X/uid_0/job_7/step_0): its own
# registration joins the participant the SPANK plugin (root, naming the
# step's cgroup) registered; with none (krexd restarted under a running job,
# as a slurmd restart does) it is refused with a message that says why,
# instead of being moved into krexd's own cgroups, out of Slurm's reach
# (seen in the fault matrix: scancel then failed, "Kill task failed", the
# job stayed COMPLETING and its processes ran on).  A process outside any
# Slurm step still registers as before.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
need_root
FZ=/sys/fs/cgroup/freezer
CS=/sys/fs/cgroup/cpuset
[ -w "$FZ/cgroup.procs" ] && [ -w "$CS/cgroup.procs" ] || skip_all "no cgroup v1 freezer and cpuset"
TREE=slurm_krextest$$
STEP=$TREE/uid_0/job_7/step_0

step_rm() {
	local m d
	for m in "$FZ" "$CS"; do
		for d in "$STEP" "$TREE/uid_0/job_7" "$TREE/uid_0" "$TREE"; do
			[ -d "$m/$d" ] && rmdir "$m/$d" 2>/dev/null
		done
	done
	return 0
}
kt_setup
trap 'echo THAWED >"$FZ/$STEP/freezer.state" 2>/dev/null; kt_cleanup; step_rm' EXIT
kt_conf "gpus = g0"
for d in $TREE $TREE/uid_0 $TREE/uid_0/job_7 $STEP; do
	mkdir -p "$FZ/$d" "$CS/$d" || skip_all "cannot make $d"
	cat "$CS/$(dirname "$d")/cpuset.cpus" >"$CS/$d/cpuset.cpus"
	cat "$CS/$(dirname "$d")/cpuset.mems" >"$CS/$d/cpuset.mems"
done
plan 9

# in_step NAME ARGS...: a participant started inside the step's cgroups.
in_step() {
	local name=$1
	shift
	kt_bg "$name" sh -c "echo \$\$ >$FZ/$STEP/cgroup.procs && echo \$\$ >$CS/$STEP/cgroup.procs &&
		exec $CLIENT participant --counter $KT_DIR/$name.count $*"
}
cg_of() { sed -n "s/^[0-9]*:$2:\(.*\)/\1/p" "/proc/$1/cgroup"; }

krexd_start -o freezer=cgroup1
ok "krexd starts with the cgroup v1 freezer" "$CLIENT" status

# No participant for the step (krexd restarted under the job): refused, kept in the step.
in_step a --gpus g0
wait_for 5 grep -qs -e registered -e error "$KT_DIR/a.out"
diag "$(cat "$KT_DIR/a.out")"
ok "a task of a Slurm step registering itself with no participant for the step is refused" \
	grep -q "error .*Slurm step" "$KT_DIR/a.out"
ok "the message names the step's cgroup" grep -q "/$STEP" "$KT_DIR/a.out"
none_in() { ! ls -d "$1/$KT_SUB"/p* >/dev/null 2>&1; }
ok "krexd made no freezer cgroup of its own for it" none_in "$FZ"
ok "nor a cpuset cgroup" none_in "$CS"

# The SPANK plugin's way: root names the step's cgroup; a task of it joins that participant.
kt_bg spank "$CLIENT" participant --cgroup "/$STEP" --gpus g0 --counter "$KT_DIR/spank.count"
wait_for 5 grep -qs registered "$KT_DIR/spank.out"
in_step b --gpus g0
wait_for 5 grep -qs -e registered -e error "$KT_DIR/b.out"
ok "with the step registered by root, a task of it registers (joins it)" \
	grep -q registered "$KT_DIR/b.out"
ok "and stays in the step's freezer cgroup" test "$(cg_of "$b" freezer)" = "/$STEP"

# Outside any Slurm step: as before, a participant with krexd's own cgroup.
kt_participant c --gpus g0
ok "a process outside a Slurm step registers itself" grep -q registered "$KT_DIR/c.out"
ok "into krexd's own freezer cgroup" sh -c "grep -q ':freezer:/$KT_SUB/p' /proc/$c/cgroup"
done_testing
