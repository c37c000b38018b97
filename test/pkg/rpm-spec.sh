#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The RPM spec (contrib/rpm/krex.spec) parses (rpmspec -P) and makes a
# source RPM from this tree's release tarball (rpmbuild -bs) that holds the
# tarball and the spec.  Skips where rpm's tools are not installed (Debian:
# apt-get install rpm); a binary build needs Rocky/RHEL (doc/packaging.md).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/pkg/pkg-lib.sh"
for b in rpmspec rpmbuild rpm; do
	command -v "$b" >/dev/null 2>&1 || skip_all "$b not installed (Debian: apt-get install rpm)"
done
spec=$top_srcdir/contrib/rpm/krex.spec
T=$(mktemp -d /tmp/krex-rpm.XXXXXX)
trap 'rm -rf "$T"' EXIT
v=$(pkg_version)

plan 6
ok "rpmspec -P parses the spec" bash -c "rpmspec -P '$spec' >'$T/parsed' 2>'$T/parse.err'"
sed 's/^/# rpmspec: /' "$T/parse.err"
ok "... version $v, five packages" bash -c "[ \"\$(rpmspec -q --qf '%{VERSION}\n' '$spec' 2>/dev/null | sort -u)\" = '$v' ] &&
	[ \"\$(rpmspec -q --qf '%{NAME}\n' '$spec' 2>/dev/null | sort | tr '\n' ' ')\" = 'krex krex-devel krex-libs python3-krex slurm-spank-krex ' ]"
ok "... configure gets the plugin, plugstack and unit dirs" \
	grep -q -- '--with-slurm-plugindir=.*--with-plugstackdir=/etc/slurm/plugstack.conf.d' <(tr -d '\\\n' <"$T/parsed")
pkg_tarball "$T"
tarball=$PKG_TARBALL
ok "make dist: $(basename "${tarball:-none}")" test -f "$tarball"
srpm() {
	rpmbuild -bs --define "_topdir $T/top" --define "_sourcedir $T" "$spec" >"$T/bs.log" 2>&1
}
ok "rpmbuild -bs makes the source RPM" srpm
sed 's/^/# rpmbuild: /' "$T/bs.log" | tail -5
holds() {
	local s
	s=$(ls "$T"/top/SRPMS/krex-"$v"-1*.src.rpm 2>/dev/null | head -1)
	[ -n "$s" ] && rpm -qpl "$s" >"$T/srpm.list" 2>/dev/null &&
		grep -qx "krex-$v.tar.gz" "$T/srpm.list" && grep -qx krex.spec "$T/srpm.list"
}
ok "... which holds krex-$v.tar.gz and krex.spec" holds
done_testing
