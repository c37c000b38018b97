#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# suspend-checks.sh (Slurm's scontrol suspend/resume against KREX regions,
# proctrack/cgroup) with every job in a pyxis + enroot container, as
# containers-checks.sh runs checks.sh.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
. "$top_srcdir/test/slurm/checks.sh"
. "$top_srcdir/test/slurm/suspend-checks.sh"
. "$top_srcdir/test/slurm/containers-setup.sh"
cluster_check || skip_all "$CLUSTER_WHY"
containers_setup
containers_jobs_in "$IMG" "$CACHE/rootfs-bookworm"
suspend_run cgroup
rc=$?
diag "containers-suspend: $CT_JOBS jobs ran their bodies in the image; ${SECONDS} s in all"
exit $rc
