#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# One version everywhere: configure.ac's AC_INIT, debian/changelog's
# upstream version and the RPM spec's Version (a release bumps all three;
# doc/packaging.md "Releasing").
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/pkg/pkg-lib.sh"
v=$(pkg_version)
plan 3
ok "configure.ac has a version ($v)" test -n "$v"
deb=$(sed -n '1s/^krex (\([^)-]*\)-[^)]*).*/\1/p' "$top_srcdir/debian/changelog")
ok "debian/changelog's upstream version is $v (it says ${deb:-nothing})" test "$deb" = "$v"
rpm=$(awk '$1 == "Version:" { print $2; exit }' "$top_srcdir/contrib/rpm/krex.spec")
ok "contrib/rpm/krex.spec's Version is $v (it says ${rpm:-nothing})" test "$rpm" = "$v"
done_testing
