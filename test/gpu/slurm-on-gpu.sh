#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# slurm-on-gpu.sh BUILDDIR [suspend-v2] - the README's main job
# (scripts/demo.sh) on the GPU machine, which has no apt: Debian 12's Slurm
# and munge binaries are carried in .gpu/slurm-bin.tar.gz (unpacked by
# scripts/gpu-build.sh) and a munge user and key are made here.  Run as root
# from the source tree's root.  With suspend-v2, instead: the Slurm tier's
# scontrol suspend/resume checks with Slurm's cgroup/v2 plugin (that machine
# is cgroup v2; the CPU test host's hybrid v1+v2 is refused by slurmd).
set -u
B=${1:?usage: slurm-on-gpu.sh BUILDDIR [suspend-v2]}
export PATH=$PATH:/usr/sbin:/sbin
id munge >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin munge
install -d -o munge -g munge -m 0700 /etc/munge
install -d -o munge -g munge -m 0755 /var/lib/munge /var/log/munge /run/munge
if [ ! -s /etc/munge/munge.key ]; then
	dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
	chown munge:munge /etc/munge/munge.key
	chmod 0400 /etc/munge/munge.key
fi
for b in slurmctld slurmd srun munged; do command -v $b >/dev/null || { echo "SKIP: $b missing"; exit 0; }; done
# the test doubles and workloads the demo uses are check programs
make -C "$B/test/mock" -j"$(nproc)" check >/dev/null 2>&1
make -C "$B/test/workloads" -j"$(nproc)" check >/dev/null 2>&1
if [ "${2:-}" = suspend-v2 ]; then
	make -C "$B/test/integration" -j"$(nproc)" krex-testclient >/dev/null 2>&1
	KC_CGROUP=v2 top_srcdir=$PWD top_builddir=$B timeout 300 bash test/slurm/suspend-cgroup.sh
	exit
fi
KREX_NO_INSTALL=1 KREX_BUILDDIR=$B timeout 300 bash scripts/demo.sh
