#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# slurm-on-gpu.sh BUILDDIR - the README's main job (scripts/demo.sh) on the GPU
# machine, which has no apt: Debian 12's Slurm and munge binaries are carried
# in .gpu/slurm-bin.tar.gz (unpacked by scripts/gpu-build.sh) and a munge
# user and key are made here.  Run as root from the source tree's root.
set -u
B=${1:?usage: slurm-on-gpu.sh BUILDDIR}
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
KREX_NO_INSTALL=1 KREX_BUILDDIR=$B timeout 300 bash scripts/demo.sh
