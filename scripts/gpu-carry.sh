#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# gpu-carry.sh - fill .gpu/ (ignored by git, carried to the GPU machine by the
# device tool): a `make dist` tarball of this tree, and Debian 12's Slurm and
# munge binaries with Slurm's headers (the GPU machine has no apt).  Symbolic
# links are followed (-h): Debian points /usr/sbin/slurmd at /etc/alternatives.
# Run here, after building.  doc/gpu.md says how the files are used there.
#
# With them go the shared libraries they and every Slurm plugin load (ldd),
# glibc's own left out: Slurm's cgroup/v2 plugin needs libdbus-1.so.3 (and
# through it libsystemd's), which an Ubuntu image without D-Bus lacks, and
# slurmd dies at start when a plugin it is configured with does not load.
# scripts/gpu-build.sh unpacks them with --skip-old-files: a library the GPU
# machine has already is kept, only the missing ones are added.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu
make dist >/dev/null
cp krex-*.tar.gz .gpu/
bins="usr/sbin/slurmctld usr/sbin/slurmd usr/sbin/slurmstepd usr/bin/srun usr/bin/sbatch
	usr/bin/squeue usr/bin/sinfo usr/bin/scontrol usr/bin/scancel usr/bin/salloc
	usr/sbin/munged usr/bin/munge usr/bin/unmunge"
plugdir=usr/lib/x86_64-linux-gnu/slurm-wlm
# Every library ldd resolves for them, under the name the loader looks for
# (the soname; -h stores the file it points at), by its path under /usr
# (usrmerge: /lib is a link to usr/lib on both systems, and tar must not
# replace that link with a directory).
libs=$(for f in $bins /$plugdir/*.so; do ldd "/${f#/}" 2>/dev/null || true; done |
	awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
	grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux[^/]*)\.so' |
	sed 's|^/usr/|/|; s|^/|usr/|' | grep -v "^$plugdir/" | sort -u)
# shellcheck disable=SC2086
tar czhf .gpu/slurm-bin.tar.gz -C / $bins $plugdir usr/include/slurm $libs
echo "carried libraries ($(echo "$libs" | wc -l)): $(for l in $libs; do basename "$l"; done | tr '\n' ' ')"
ls -la .gpu
