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
. "$(dirname "$0")/gpu-lib.sh"
gpu_munge_key
for b in slurmctld slurmd srun munged; do command -v $b >/dev/null || { echo "SKIP: $b missing"; exit 0; }; done
# the test doubles and workloads the demo uses are check programs
make -C "$B/test/mock" -j"$(nproc)" check >/dev/null 2>&1
make -C "$B/test/workloads" -j"$(nproc)" check >/dev/null 2>&1
if [ "${2:-}" = suspend-v2 ]; then
	# What would stop slurmd before the checks start, said first: a daemon or
	# a plugin of this configuration with a library missing (slurmd dies at
	# start: "plugin_load_from_file: dlopen(...cgroup_v2.so): libdbus-1.so.3:
	# cannot open shared object file"), or no cgroup v2 freezer.
	missing=""
	plugdir=${KREX_SLURM_PLUGDIR:-/usr/lib/x86_64-linux-gnu/slurm-wlm} # another: a test of this check
	for f in "$(command -v slurmd)" "$(command -v slurmctld)" "$(command -v slurmstepd)" \
		"$plugdir"/cgroup_v2.so "$plugdir"/proctrack_cgroup.so "$plugdir"/task_cgroup.so \
		"$plugdir"/task_affinity.so "$plugdir"/auth_munge.so "$plugdir"/cred_munge.so; do
		[ -e "$f" ] || { missing="$missing ${f##*/} (absent)"; continue; }
		for l in $(ldd "$f" 2>/dev/null | awk '/not found/ {print $1}'); do
			missing="$missing ${f##*/}: $l not found;"
		done
	done
	[ -n "$missing" ] && { echo "1..0 # SKIP Slurm cannot load:$missing (scripts/gpu-carry.sh carries the libraries; was .gpu/ unpacked by scripts/gpu-build.sh?)"; exit 0; }
	[ -f /sys/fs/cgroup/cgroup.controllers ] ||
		{ echo "1..0 # SKIP /sys/fs/cgroup is not a cgroup v2 mount"; exit 0; }
	make -C "$B/test/integration" -j"$(nproc)" krex-testclient >/dev/null 2>&1 ||
		{ echo "1..0 # SKIP cannot build krex-testclient in $B/test/integration"; exit 0; }
	KC_CGROUP=v2 top_srcdir=$PWD top_builddir=$B timeout 300 bash test/slurm/suspend-cgroup.sh
	exit
fi
KREX_NO_INSTALL=1 KREX_BUILDDIR=$B timeout 300 bash scripts/demo.sh
