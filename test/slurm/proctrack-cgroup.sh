#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Slurm tier with proctrack/cgroup and task/cgroup (cgroup v1 freezer):
# a one-node cluster, every check of checks.sh against it.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
. "$top_srcdir/test/slurm/checks.sh"
cluster_check || skip_all "$CLUSTER_WHY"
[ -w /sys/fs/cgroup/freezer/cgroup.procs ] || skip_all "no cgroup v1 freezer at /sys/fs/cgroup/freezer"
[ -w /sys/fs/cgroup/cpuset/cgroup.procs ] || skip_all "no cgroup v1 cpuset at /sys/fs/cgroup/cpuset"
checks_run cgroup
