# SPDX-License-Identifier: BSD-3-Clause
# pkg-lib.sh - helpers of the packaging tier (source after lib.sh).

# pkg_version: the version configure.ac's AC_INIT gives.
pkg_version() { sed -n 's/^AC_INIT(\[krex\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac"; }

# pkg_tarball DIR: make this tree's release tarball (make dist) and move it
# into DIR, as $PKG_TARBALL.  A tarball that was already in the build dir
# is left there (copied, not moved).  make runs without the variables of
# the make that runs the test (TESTS=... would change what dist takes).
pkg_tarball() {
	local v t had=0
	v=$(pkg_version)
	t=$top_builddir/krex-$v.tar.gz
	PKG_TARBALL=
	[ -f "$t" ] && had=1
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top_builddir" dist-gzip >"$1/dist.log" 2>&1 ||
		{ sed 's/^/# dist: /' "$1/dist.log" | tail -20; return 1; }
	if [ $had = 1 ]; then cp "$t" "$1/"; else mv "$t" "$1/"; fi
	PKG_TARBALL=$1/krex-$v.tar.gz
}
