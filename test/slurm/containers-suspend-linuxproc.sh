#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# suspend-linuxproc.sh (the same, proctrack/linuxproc) with every job in a
# pyxis + enroot container: the test as it is, in cluster.sh's containers
# mode (KC_IN_CONTAINERS, containers-setup.sh's containers_mode;
# doc/containers.md "Testing").
KC_IN_CONTAINERS=1 exec "$top_srcdir/test/slurm/suspend-linuxproc.sh"
