#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# container-deps.sh - what the container tests need, built once and cached
# (doc/containers.md "Testing"): enroot and pyxis from ../shared/deps, and
# small Debian root file systems squashed for enroot.  Needs root.
#
#	scripts/container-deps.sh [enroot|pyxis|images|all]...
#
# Everything goes under $KREX_CONTAINER_CACHE (default /var/cache/krex-test):
#	enroot/			enroot 4.1.2 installed with prefix=that dir
#	pyxis-SLURMVER/		spank_pyxis.so built against the Slurm in PATH
#				(or $KREX_SLURM_PREFIX, as the Slurm tier runs it)
#	rootfs-bookworm/, bookworm.sqsh	Debian 12 (glibc 2.36), debootstrap minbase + python3
#	rootfs-bullseye/, bullseye.sqsh	Debian 11 (glibc 2.31): older than the build
#	rootfs-busybox/, busybox.sqsh	Debian's static busybox alone: no glibc
# Idempotent: what is there is kept (remove it to rebuild); one run at a
# time per cache (a lock in it).  Exit status: 0
# done, 77 a source or a tool is missing (the reason on stderr), 1 a failure.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${KREX_CONTAINER_CACHE:-/var/cache/krex-test}
# ../shared/deps (scripts/deps-dir.sh says where it is looked for)
deps=$("$top/scripts/deps-dir.sh")
mirror=${KREX_DEBIAN_MIRROR:-http://deb.debian.org/debian}

skip() { echo "container-deps: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root"
mkdir -p "$cache"
# One builder at a time per cache (two test runs side by side): the second
# waits, then finds everything there.
exec 9>"$cache/.lock"
flock 9

# Debian packages, installed when missing (apt-get only).
need_pkgs() {
	local p missing=""
	for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
	[ -z "$missing" ] && return 0
	command -v apt-get >/dev/null || skip "missing packages:$missing (no apt-get)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >"$cache/apt.log" 2>&1 ||
		skip "apt-get install$missing failed (see $cache/apt.log)"
}

# enroot without its git submodules (musl, makeself, linux-headers): against
# glibc, with Debian's makeself and libbsd (../shared/deps/README.md).
build_enroot() {
	local tb=$deps/enroot-4.1.2.tar.gz src=$cache/build/enroot-4.1.2
	[ -x "$cache/enroot/bin/enroot" ] && return 0
	[ -f "$tb" ] || skip "no enroot source at $tb"
	need_pkgs makeself libbsd-dev squashfs-tools
	rm -rf "$src"
	mkdir -p "$cache/build"
	tar -C "$cache/build" -xzf "$tb"
	mkdir -p "$src/deps/makeself" "$src/deps/linux-headers" "$src/deps/dist/linux/include"
	cp /usr/bin/makeself "$src/deps/makeself/makeself.sh"
	touch "$src/deps/linux-headers/.stamp"
	# glibc 2.36 has no strlcpy: the vendored libbsd.a, and the soname for the rest
	make -C "$src" FORCE_GLIBC=1 LDLIBS="-l:libbsd.a -l:libbsd.so.0" \
		install prefix="$cache/enroot.tmp" >"$cache/enroot-build.log" 2>&1 ||
		{ tail -20 "$cache/enroot-build.log" >&2; return 1; }
	rm -rf "$cache/enroot"
	mv "$cache/enroot.tmp" "$cache/enroot"
	# prefix= is compiled in: the tree moved, so say where it is now
	sed -i "s;$cache/enroot.tmp;$cache/enroot;g" "$cache/enroot/bin/enroot"
}

# pyxis against the headers of the Slurm the tier runs (plugins load only
# into the MAJOR.MINOR they were built for).
slurm_version() { slurmd -V 2>/dev/null | sed -n 's/^slurm[^ ]* \([0-9][0-9.]*\).*/\1/p'; }
build_pyxis() {
	local tb=$deps/pyxis-0.24.0.tar.gz src=$cache/build/pyxis-0.24.0 ver inc=/usr/include
	[ -n "${KREX_SLURM_PREFIX:-}" ] && PATH=$KREX_SLURM_PREFIX/sbin:$PATH && inc=$KREX_SLURM_PREFIX/include
	ver=$(slurm_version)
	[ -n "$ver" ] || skip "no slurmd in PATH"
	[ -f "$inc/slurm/spank.h" ] || skip "no $inc/slurm/spank.h (libslurm-dev)"
	[ -f "$cache/pyxis-$ver/spank_pyxis.so" ] && return 0
	[ -f "$tb" ] || skip "no pyxis source at $tb"
	rm -rf "$src"
	mkdir -p "$cache/build"
	tar -C "$cache/build" -xzf "$tb"
	CPPFLAGS="-I$inc" make -C "$src" >"$cache/pyxis-build.log" 2>&1 ||
		{ tail -20 "$cache/pyxis-build.log" >&2; return 1; }
	mkdir -p "$cache/pyxis-$ver"
	cp "$src/spank_pyxis.so" "$cache/pyxis-$ver/"
}

# has_devices IMAGE: the squashfs image holds a character or block device.
has_devices() { [ "$(unsquashfs -lls "$1" 2>/dev/null | grep -c '^[cb]')" -gt 0 ]; }

# A Debian root file system (minbase) and its squashfs image.
build_image() {
	local r=$1
	if [ ! -d "$cache/rootfs-$r" ]; then
		need_pkgs debootstrap
		rm -rf "$cache/rootfs-$r.tmp"
		# bookworm with python3 (the Python package's test); bullseye bare
		debootstrap --variant=minbase ${2:+--include=$2} "$r" "$cache/rootfs-$r.tmp" "$mirror" \
			>"$cache/debootstrap-$r.log" 2>&1 ||
			skip "debootstrap $r from $mirror failed (see $cache/debootstrap-$r.log)"
		mv "$cache/rootfs-$r.tmp" "$cache/rootfs-$r"
	fi
	# No device files (enroot mounts /dev itself): an unprivileged user's
	# unsquashfs cannot make them, and enroot fails.  An image made before
	# with them is made again.
	[ -f "$cache/$r.sqsh" ] && ! has_devices "$cache/$r.sqsh" && return 0
	need_pkgs squashfs-tools
	mksquashfs "$cache/rootfs-$r" "$cache/$r.sqsh.tmp.$$" -noappend -quiet -no-progress \
		-wildcards -e 'dev/*' >/dev/null 2>&1 || { rm -f "$cache/$r.sqsh.tmp.$$"; return 1; }
	mv "$cache/$r.sqsh.tmp.$$" "$cache/$r.sqsh"
}

# An image without glibc: Debian's static busybox alone.
build_busybox() {
	[ -f "$cache/busybox.sqsh" ] && return 0
	need_pkgs busybox-static squashfs-tools
	rm -rf "$cache/rootfs-busybox"
	mkdir -p "$cache/rootfs-busybox/bin" "$cache/rootfs-busybox/etc"
	cp /bin/busybox "$cache/rootfs-busybox/bin/"
	for c in sh cat grep ls sleep echo env mv true; do ln -s busybox "$cache/rootfs-busybox/bin/$c"; done
	mksquashfs "$cache/rootfs-busybox" "$cache/busybox.sqsh.tmp" -noappend -quiet -no-progress \
		>/dev/null 2>&1 || { rm -f "$cache/busybox.sqsh.tmp"; return 1; }
	mv "$cache/busybox.sqsh.tmp" "$cache/busybox.sqsh"
}

[ $# -gt 0 ] || set -- all
for what in "$@"; do
	case $what in
	enroot) build_enroot ;;
	pyxis) build_pyxis ;;
	images) build_image bookworm python3 && build_image bullseye && build_busybox ;;
	all) build_enroot && build_pyxis && build_image bookworm python3 && build_image bullseye && build_busybox ;;
	*) echo "usage: $0 [enroot|pyxis|images|all]..." >&2; exit 2 ;;
	esac
done
