#!/bin/bash
# Slurm's scontrol suspend/resume against KREX regions, proctrack/cgroup
# (suspend-checks.sh says what is checked).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
. "$top_srcdir/test/slurm/checks.sh"
. "$top_srcdir/test/slurm/suspend-checks.sh"
cluster_check || skip_all "$CLUSTER_WHY"
[ -w /sys/fs/cgroup/freezer/cgroup.procs ] || skip_all "no cgroup v1 freezer at /sys/fs/cgroup/freezer"
[ -w /sys/fs/cgroup/cpuset/cgroup.procs ] || skip_all "no cgroup v1 cpuset at /sys/fs/cgroup/cpuset"
suspend_run cgroup
