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

# Containers (test/gpu/containers-on-gpu.sh, doc/containers.md): enroot's
# installed tree and pyxis built for the Slurm carried above, as
# scripts/container-deps.sh leaves them in its cache, into
# .gpu/containers.tar.gz; Debian's mksquashfs and unsquashfs and the
# libraries they and enroot's helpers load (libbsd, libmd, liblzo2, ...),
# glibc's left out, rooted at / into .gpu/containers-sys.tar.gz (unpacked
# there with --skip-old-files, as the Slurm libraries are).  No image: the
# script makes it there from that machine's own programs and libraries (the
# workloads it runs are built there, against its glibc).  Only when present.
cache=${KREX_CONTAINER_CACHE:-/var/cache/krex-test}
sver=$(/usr/sbin/slurmd -V 2>/dev/null | sed -n 's/^slurm[^ ]* \([0-9][0-9.]*\).*/\1/p')
rm -f .gpu/containers.tar.gz .gpu/containers-sys.tar.gz
why=""
[ -x "$cache/enroot/bin/enroot" ] || why="no enroot at $cache/enroot"
[ -n "$why" ] || [ -f "$cache/pyxis-$sver/spank_pyxis.so" ] || why="no pyxis for Slurm ${sver:-?} at $cache/pyxis-$sver"
[ -n "$why" ] || { [ -x /usr/bin/mksquashfs ] && [ -x /usr/bin/unsquashfs ]; } || why="no squashfs-tools here"
if [ -z "$why" ]; then
	# KREX's hook there is made from contrib/enroot with that build's paths
	tar czf .gpu/containers.tar.gz -C "$cache" --exclude=enroot/etc/enroot/hooks.d/50-krex.sh \
		enroot "pyxis-$sver"
	ctbins="usr/bin/mksquashfs usr/bin/unsquashfs"
	ctlibs=$(for f in /usr/bin/mksquashfs /usr/bin/unsquashfs "$cache"/enroot/bin/enroot-*; do ldd "$f" 2>/dev/null || true; done |
		awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
		grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux[^/]*)\.so' |
		sed 's|^/usr/|/|; s|^/|usr/|' | sort -u)
	# shellcheck disable=SC2086
	tar czhf .gpu/containers-sys.tar.gz -C / $ctbins $ctlibs
	echo "carried for containers: enroot, pyxis-$sver, $ctbins, $(for l in $ctlibs; do basename "$l"; done | tr '\n' ' ')"
else
	echo "gpu-carry: nothing carried for containers: $why (scripts/container-deps.sh all builds it); test/gpu/containers-on-gpu.sh will stop there saying so" >&2
fi
ls -la .gpu
total=$(du -sm .gpu | cut -f1)
echo ".gpu: $total MiB (the device call carries 64 MiB in all)"
[ "$total" -le 40 ] || echo "gpu-carry: warning: .gpu is over 40 MiB" >&2
