#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Install KREX's build and test dependencies from Debian's archive on a fresh
# Debian 12 machine (run as root).  Used by the README's commands and .ci/run.
# Already-installed packages make this a quick no-op.  debhelper, dh-python
# and rpm are for the packaging tier (test/pkg: dpkg-buildpackage, rpmbuild);
# sudo for the job-control tests (test/integration/krex-jobctl.sh).
set -eu

PKGS="build-essential autoconf automake libtool pkg-config
libhwloc-dev hwloc
libslurm-dev slurm-wlm slurmctld slurmd slurm-client
munge libmunge-dev
clang libclang-rt-dev
libamdhip64-dev
clang-format procps psmisc python3 gnuplot-nox
debhelper dh-python rpm lua5.4
makeself libbsd-dev squashfs-tools debootstrap busybox-static podman runc
sudo"

# KREX_NO_INSTALL=1: a machine without apt or network (the GPU machine) that
# brings its own Slurm and munge: check nothing, install nothing.
if [ "${KREX_NO_INSTALL:-0}" = 1 ]; then
	echo "install-deps: KREX_NO_INSTALL=1, not installing"
	exit 0
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && { echo "install-deps: all packages present"; exit 0; }

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: need root to install:$missing" >&2
	exit 1
fi
# Without systemd, package scripts try to start munge and slurm through
# invoke-rc.d; a policy-rc.d that exits 101 keeps them from it.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
fi
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing$missing"
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps: done"
