#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Slurm tier with proctrack/linuxproc: a one-node cluster, every check
# of checks.sh against it.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
. "$top_srcdir/test/slurm/checks.sh"
cluster_check || skip_all "$CLUSTER_WHY"
checks_run linuxproc
