#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Every check of checks.sh with its jobs in pyxis + enroot containers
# (doc/containers.md): a one-node cluster (proctrack/cgroup, cgroup v1
# freezer) with pyxis after KREX, each job started by ksbatch or ksrun in
# the Debian 12 image with the work dir and the build tree mounted at their
# host paths, and after each check that starts jobs, that every one of
# them ran its body in the image (containers-setup.sh's ct_verify).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
. "$top_srcdir/test/slurm/checks.sh"
. "$top_srcdir/test/slurm/containers-setup.sh"
cluster_check || skip_all "$CLUSTER_WHY"
# An unprivileged user's job is in enroot's user namespace, where root's
# krexd (and every other uid but the user's) shows as the overflow uid:
# libkrexregion trusts it there only at the system krexd's socket
# (doc/security.md "What a client trusts"), so the node's run dir is
# KREX_RUNDIR/krex-slurm.XXXXXX-NODE (cluster.sh), as spank_krex's default
# KREX_RUNDIR/%n would be, not one under the cluster's /tmp dir.
KC_SYSTEM_RUNDIR=1
containers_setup
containers_jobs_in "$IMG" "$CACHE/rootfs-bookworm" "$KC_USER"
diag "containers-checks: set up in $SECONDS s"
checks_run cgroup
rc=$?
diag "containers-checks: $CT_JOBS jobs ran their bodies in the image; ${SECONDS} s in all"
exit $rc
