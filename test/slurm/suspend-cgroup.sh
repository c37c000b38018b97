#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Slurm's scontrol suspend/resume against KREX regions, proctrack/cgroup
# (suspend-checks.sh says what is checked).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
. "$top_srcdir/test/slurm/checks.sh"
. "$top_srcdir/test/slurm/suspend-checks.sh"
cluster_check || skip_all "$CLUSTER_WHY"
if [ "${KC_CGROUP:-v1}" = v2 ]; then
	# Slurm's cgroup/v2 plugin (KC_CGROUP=v2): a cgroup v2 host (slurmd refuses a hybrid one)
	grep -q ' - cgroup ' /proc/self/mountinfo && skip_all "KC_CGROUP=v2 on a host with v1 hierarchies (slurmd: hybrid mode is not supported)"
else
	[ -w /sys/fs/cgroup/freezer/cgroup.procs ] || skip_all "no cgroup v1 freezer at /sys/fs/cgroup/freezer"
	[ -w /sys/fs/cgroup/cpuset/cgroup.procs ] || skip_all "no cgroup v1 cpuset at /sys/fs/cgroup/cpuset"
fi
suspend_run cgroup
