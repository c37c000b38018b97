#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# gpu-carry.sh - fill .gpu/ (ignored by git, carried to the GPU machine by the
# device tool): a `make dist` tarball of this tree, and Debian 12's Slurm and
# munge binaries with Slurm's headers (the GPU machine has no apt).  Symbolic
# links are followed (-h): Debian points /usr/sbin/slurmd at /etc/alternatives.
# Run here, after building.  doc/gpu.md says how the files are used there.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu
make dist >/dev/null
cp krex-*.tar.gz .gpu/
tar czhf .gpu/slurm-bin.tar.gz -C / usr/sbin/slurmctld usr/sbin/slurmd usr/sbin/slurmstepd \
	usr/bin/srun usr/bin/sbatch usr/bin/squeue usr/bin/sinfo usr/bin/scontrol usr/bin/scancel \
	usr/bin/salloc usr/lib/x86_64-linux-gnu/slurm-wlm usr/include/slurm usr/sbin/munged \
	usr/bin/munge usr/bin/unmunge usr/lib/x86_64-linux-gnu/libnuma.so.1
ls -la .gpu
