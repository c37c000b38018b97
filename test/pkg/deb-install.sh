#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Debian packages, end to end on this machine: build them from this
# tree's release tarball (make dist, dpkg-buildpackage -us -uc -b), install
# them (dpkg -i), check where their files are, run the README's main job
# (scripts/demo.sh) with KREX as installed -- krexd from /usr/sbin, the
# plugin from Slurm's plugin dir, the gate and libkrexregion from /usr/lib --
# and purge them at the end (EXIT trap), leaving the machine as it was.
# Needs root, dpkg-buildpackage, debhelper and what the demo needs.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/pkg/pkg-lib.sh"
need_root
for b in dpkg-buildpackage dh dh_python3 slurmd; do
	command -v "$b" >/dev/null 2>&1 || skip_all "$b not installed (scripts/install-deps.sh)"
done
PKGS="krexd libkrexregion1 libkrexregion-dev slurm-spank-krex python3-krex"
for p in $PKGS; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed'; then
		skip_all "$p is installed on this machine already: this test installs and purges its own"
	fi
done
[ -x "$top_builddir/test/workloads/krex-victim" ] && [ -f "$top_builddir/test/mock/.libs/libcuda.so.1" ] ||
	skip_all "the demo's workloads and mock driver are not built (make -C test/workloads check; make -C test/mock check)"

T=$(mktemp -d /tmp/krex-deb.XXXXXX)
installed=0
cleanup() {
	if [ $installed = 1 ]; then
		# shellcheck disable=SC2086
		dpkg --purge $PKGS >"$T/purge.log" 2>&1 || sed 's/^/# purge: /' "$T/purge.log"
	fi
	rm -rf "$T"
}
trap cleanup EXIT
M=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
v=$(pkg_version)

plan 12
pkg_tarball "$T"
tarball=$PKG_TARBALL
ok "make dist: $(basename "${tarball:-none}")" test -f "$tarball"
build() {
	tar -C "$T" -xzf "$tarball" &&
		(cd "$T/krex-$v" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b) \
			>"$T/build.log" 2>&1
}
t0=$SECONDS
build_ok=0
build && build_ok=1
ok "dpkg-buildpackage -us -uc -b builds from the tarball ($((SECONDS - t0)) s)" test $build_ok = 1
[ $build_ok = 1 ] || tail -30 "$T/build.log" | sed 's/^/# build: /'
debs=
for p in $PKGS; do
	f=$(ls "$T"/"${p}"_"$v"-*_*.deb 2>/dev/null | head -1)
	debs="$debs $f"
done
all_built() { for p in $PKGS; do ls "$T"/"${p}"_"$v"-*_*.deb >/dev/null 2>&1 || { diag "no $p"; return 1; }; done; }
ok "the five packages are built: $PKGS" all_built

install_debs() {
	# shellcheck disable=SC2086
	dpkg -i $debs >"$T/install.log" 2>&1
}
installed=1
ok "dpkg -i installs them" install_debs
sed 's/^/# dpkg -i: /' "$T/install.log" | grep -v -E 'Preparing|Unpacking|Selecting|Reading database' | head -20

where() {
	local f
	for f in /usr/sbin/krexd /usr/bin/krex /usr/lib/$M/libkrexgate.so /usr/lib/$M/libkrexregion.so.1 \
		/usr/lib/$M/slurm-wlm/spank_krex.so /etc/krex/krexd.conf /etc/slurm/plugstack.conf.d/krex.conf \
		/lib/systemd/system/krexd.service /usr/include/krex/region.h /usr/lib/$M/pkgconfig/krexregion.pc \
		/usr/lib/python3/dist-packages/krex*; do
		[ -e "$f" ] || { diag "missing: $f"; return 1; }
	done
}
ok "files at Debian's paths (krexd /usr/sbin, plugin slurm-wlm/, gate and library /usr/lib/$M, /etc/krex)" where
ok "the plugstack snippet names the installed plugin" \
	grep -qx "required /usr/lib/$M/slurm-wlm/spank_krex.so coordinator=spawn max_region=60s" \
	/etc/slurm/plugstack.conf.d/krex.conf
ok "krexd.service is shipped but not enabled (slurmd starts krexd)" \
	test ! -e /etc/systemd/system/multi-user.target.wants/krexd.service
ok "the installed krexd is this version ($v)" bash -c "/usr/sbin/krexd -V | grep -qx 'krexd $v (protocol [0-9]*)'"
pyimport() { (cd / && /usr/bin/python3 -c 'import krex, sys; sys.exit(0 if krex.__file__.startswith("/usr/lib/python3/dist-packages/") else 1)'); }
ok "python3 imports krex from dist-packages" pyimport

# The README's main job, from the installed packages.
t0=$SECONDS
demo_ok=0
KREX_INSTALLED=1 timeout 400 "$top_srcdir/scripts/demo.sh" >"$T/demo.log" 2>&1 && demo_ok=1
sed 's/^/# demo: /' "$T/demo.log" | grep -E 'demo:|regions:|job libraries|outcome' | head -20
from_packages() {
	grep -q "krexd started by slurmd: pid [0-9]*, /usr/sbin/krexd$" "$T/demo.log" &&
		grep -q "job libraries: .*/usr/lib/$M/libkrexgate.so" "$T/demo.log" &&
		grep -q "job libraries: .*/usr/lib/$M/libkrexregion.so" "$T/demo.log" &&
		! grep "job libraries:" "$T/demo.log" | grep -q "$top_builddir"
}
ok "demo.sh with KREX_INSTALLED=1 finishes with certificates ($((SECONDS - t0)) s)" \
	bash -c "[ $demo_ok = 1 ] && grep -q '\"outcome\":\"' '$T/demo.log'"
[ $demo_ok = 1 ] || tail -30 "$T/demo.log" | sed 's/^/# demo: /'
ok "... run by /usr/sbin/krexd, jobs with the installed gate and libkrexregion" from_packages

# Purge here (the trap would too) to check it leaves nothing behind.
# shellcheck disable=SC2086
dpkg --purge $PKGS >"$T/purge.log" 2>&1
installed=0
gone() { [ ! -e /usr/sbin/krexd ] && [ ! -e /etc/krex ] && [ ! -e /etc/slurm/plugstack.conf.d/krex.conf ] &&
	[ ! -e /usr/lib/$M/libkrexregion.so.1 ]; }
ok "dpkg --purge leaves no KREX file behind" gone
done_testing
