#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# build-slurm.sh - build and install a Slurm release from its source tarball
# into a prefix of its own, for the Slurm tier (scripts/test-slurm-versions.sh,
# doc/slurm-versions.md).  Needs root (apt-get, the install).
#
#	scripts/build-slurm.sh [TARBALL [PREFIX]]
#
# TARBALL: $KREX_SLURM_TARBALL, else ../shared/deps/slurm-25.11.7.tar.gz next
# to this checkout (or to the main checkout of a git worktree).  PREFIX: $KREX_SLURM_PREFIX, else /opt/slurm-MAJOR.MINOR
# (sysconfdir /etc/slurm-MAJOR.MINOR).  Idempotent: a prefix that already holds
# a build of the same tarball with the same options is left as it is.
# Exit status: 0 built or already there, 77 no tarball (nothing to build),
# 1 a failure (the log's tail is printed).  $KREX_SLURM_JOBS: make -j (nproc).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# ../shared/deps (scripts/deps-dir.sh says where it is looked for)
deps=$("$top/scripts/deps-dir.sh")
tarball=${1:-${KREX_SLURM_TARBALL:-$deps/slurm-25.11.7.tar.gz}}
if [ ! -f "$tarball" ]; then
	echo "build-slurm: no Slurm source tarball at $tarball (set KREX_SLURM_TARBALL)" >&2
	exit 77
fi
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
base=$(basename "$tarball")
version=${base#slurm-}
version=${version%.tar.gz}
version=${version%.tar.bz2}
case "$version" in
[0-9]*.[0-9]*) ;;
*)
	echo "build-slurm: cannot read a version from $base (want slurm-X.Y.Z.tar.gz)" >&2
	exit 1
	;;
esac
series=$(echo "$version" | cut -d. -f1,2)
prefix=${2:-${KREX_SLURM_PREFIX:-/opt/slurm-$series}}
sysconfdir=/etc/slurm-$series
# --enable-multiple-slurmd: the two-node tests run two slurmd on this host
# (without it srun fails with "Duplicated NodeHostName").
opts="--prefix=$prefix --sysconfdir=$sysconfdir --enable-multiple-slurmd --disable-dependency-tracking"
stamp=$prefix/.krex-build
want="$version $(sha256sum "$tarball" | cut -c1-16) $opts"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$prefix/sbin/slurmctld" ]; then
	echo "build-slurm: Slurm $version already built in $prefix"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "build-slurm: needs root (apt-get, install into $prefix)" >&2
	exit 1
fi

# What 25.11's configure needs for the plugins the tier uses: munge (auth,
# cred), hwloc, Lua 5.4 (job_submit/lua: configure takes lua5.4 .. lua5.1),
# D-Bus (the cgroup/v2 plugin is not built without it).
pkgs="build-essential pkg-config libmunge-dev munge libhwloc-dev liblua5.4-dev libdbus-1-dev libyaml-dev libjson-c-dev"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "build-slurm: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	# shellcheck disable=SC2086
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
fi

build=${KREX_SLURM_BUILDDIR:-/tmp/krex-slurm-build-$version}
rm -rf "$build"
mkdir -p "$build"
log=$build/build.log
start=$SECONDS
echo "build-slurm: building Slurm $version into $prefix (log: $log)"
fail() {
	tail -40 "$log" >&2
	echo "build-slurm: $1 failed (log: $log)" >&2
	exit 1
}
tar xzf "$tarball" -C "$build" --strip-components=1 || fail "unpacking $tarball"
cd "$build"
# shellcheck disable=SC2086
./configure $opts >"$log" 2>&1 || fail configure
grep -q "^#define HAVE_LUA 1" config.h || fail "configure (no Lua: job_submit/lua would not be built)"
make -j"${KREX_SLURM_JOBS:-$(nproc)}" >>"$log" 2>&1 || fail make
make install >>"$log" 2>&1 || fail "make install"
ldconfig
for plugin in job_submit_lua cgroup_v1 cgroup_v2 proctrack_cgroup task_cgroup auth_munge cred_munge gres_gpu gres_shard; do
	[ -f "$prefix/lib/slurm/$plugin.so" ] || fail "install (no $prefix/lib/slurm/$plugin.so)"
done
echo "$want" >"$stamp"
echo "build-slurm: Slurm $version in $prefix, $(((SECONDS - start) / 60)) min"
cd /
[ -n "${KREX_SLURM_KEEP_BUILD:-}" ] || rm -rf "$build"
