#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Slurm's scontrol suspend/resume against KREX regions, proctrack/linuxproc
# (suspend-checks.sh says what is checked).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
. "$top_srcdir/test/slurm/checks.sh"
. "$top_srcdir/test/slurm/suspend-checks.sh"
cluster_check || skip_all "$CLUSTER_WHY"
suspend_run linuxproc
