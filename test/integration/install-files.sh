#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# make install DESTDIR=...: besides the programs, what a site installs --
# krexd.conf, the systemd unit, the plugstack.conf.d snippet and the man
# pages -- each generated with configure's paths, version and release date,
# no @placeholder@ left; an edited krexd.conf survives a second install and
# an uninstall; uninstall leaves no file behind.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
[ -f "$top_builddir/Makefile" ] || skip_all "not configured"
kt_setup
D=$KT_DIR/destdir
# make without the flags and variables of the make that runs this test
# (make check TESTS=..., -j's jobserver).
make_() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make "$@"; }
mk() { make_ -s -C "$top_builddir" "$@" DESTDIR="$D" >>"$KT_DIR/make.log" 2>&1; }
# configure's values, read from the Makefile that make install uses.
mv_() { make_ -s -C "$top_builddir" --no-print-directory -f Makefile -f - _krex_print_var V="$1" <<'MK'
_krex_print_var:
	@echo $($(V))
MK
}
prefix=$(mv_ prefix)
sbindir=$(mv_ sbindir)
sysconfdir=$(mv_ sysconfdir)
unitdir=$(mv_ systemdunitdir)
plugdir=$(mv_ spank_plugindir)
plugstackdir=$(mv_ plugstackdir)
libdir=$(mv_ libdir)
mandir=$(mv_ mandir)
version=$(mv_ PACKAGE_VERSION)
date=$(mv_ KREX_RELEASE_DATE)
diag "prefix $prefix, unit dir ${unitdir:-none}, plugin dir $plugdir, plugstack dir ${plugstackdir:-none}, version $version, date $date"
have_slurm=0
[ -z "$(mv_ HAVE_SLURM_TRUE)" ] && have_slurm=1

plan 12
ok "make install DESTDIR=... succeeds" mk install
sed 's/^/# make: /' "$KT_DIR/make.log" | tail -n 5
ok "krexd in sbindir, libkrexregion and the gate in libdir" \
	test -x "$D$sbindir/krexd" -a -f "$D$libdir/libkrexgate.so" -a -e "$D$libdir/libkrexregion.so.1"
conf=$D$sysconfdir/krex/krexd.conf
ok "krexd.conf installed as SYSCONFDIR/krex/krexd.conf" test -f "$conf"
# Skipped only where configure was told not to install it (the AM_CONDITIONAL
# is then "#"): an empty dir otherwise is a failure.
if [ "$(mv_ HAVE_SYSTEMDUNITDIR_TRUE)" != "#" ]; then
	unit=$D$unitdir/krexd.service
	ok "krexd.service runs this prefix's krexd with this krexd.conf" \
		grep -qx "ExecStart=$sbindir/krexd -F -c $sysconfdir/krex/krexd.conf" "$unit"
else
	skip "krexd.service" "configured --with-systemdunitdir=no"
fi
if [ "$have_slurm" = 1 ] && [ "$(mv_ HAVE_PLUGSTACKDIR_TRUE)" != "#" ]; then
	snip=$D$plugstackdir/krex.conf
	plug_ok() {
		local p
		p=$(awk '$1 == "required" { print $2 }' "$snip")
		[ "$p" = "$plugdir/spank_krex.so" ] && [ -f "$D$p" ]
	}
	ok "plugstack.conf.d/krex.conf names the installed spank_krex.so" plug_ok
else
	skip "plugstack.conf.d/krex.conf" "no SPANK plugin built or --with-plugstackdir=no"
fi
left=$KT_DIR/left
no_placeholders() { ! grep -rInI '@[A-Za-z_][A-Za-z_]*@' "$D" --exclude='*.la' --exclude='*.pc' >"$left"; }
ok "no @placeholder@ left in any installed text file" no_placeholders
sed 's/^/# left: /' "$left"
man_ok() {
	local m n=0
	for m in "$D$mandir"/man*/*.[1-8]; do
		n=$((n + 1))
		grep -q "^\.TH [^ ]* [1-8] \"$date\" \"krex $version\"" "$m" || { diag "$m: $(sed -n 2p "$m")"; return 1; }
	done
	diag "$n man pages"
	[ "$n" -ge 7 ]
}
ok "every man page carries configure's version and release date" man_ok
ok "the man pages name the installed paths" \
	grep -q "$sysconfdir/krex/krexd.conf" "$D$mandir/man8/krexd.8"

# The installed krexd.conf is a valid configuration: krexd starts on it.
KREX_SOCKET=$KT_DIR/run/krexd.sock
mkdir -p "$KT_DIR/run"
export KREX_SOCKET
starts() {
	"$KREXD" -F -c "$conf" -r "$KT_DIR/run" -o gpus=g0 -o freezer=signal -o "cgroup_subtree=$KT_SUB" \
		>>"$KT_DIR/krexd.log" 2>&1 &
	KREXD_PID=$!
	wait_for 5 "$CLIENT" status >/dev/null 2>&1
}
ok "krexd starts on the installed krexd.conf" starts
krexd_stop

echo "# edited by the site" >>"$conf"
cp "$conf" "$KT_DIR/conf.edited"
reinstall() { mk install && cmp -s "$conf" "$KT_DIR/conf.edited"; }
ok "a second install keeps an edited krexd.conf" reinstall
mk uninstall
ok "uninstall leaves the edited krexd.conf" cmp -s "$conf" "$KT_DIR/conf.edited"
rm -f "$conf"
: >"$left"
find "$D" -type f >"$left"
ok "uninstall removes every other installed file" test ! -s "$left"
sed 's/^/# left after uninstall: /' "$left"
done_testing
