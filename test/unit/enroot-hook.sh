#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# contrib/enroot/50-krex.sh, KREX's enroot hook, run as enroot runs it
# (ENROOT_ROOTFS, ENROOT_MOUNTS, ENROOT_ENVIRON) on a root file system made
# here: nothing without KREX_SOCKET; krexd's run directory mounted at its
# host path; a directory on the way to it that enroot left mode 000 (a
# mount point it created for an earlier step of a named container) opened,
# the image's own modes and the mount point itself left alone; a blank in
# the socket's path refused with a warning.  The containers in Slurm:
# test/slurm/containers*.sh.
. "$top_srcdir/test/lib.sh"
hook=$top_builddir/contrib/enroot/50-krex.sh
[ -x "$hook" ] || skip_all "$hook not built"
command -v stat >/dev/null || skip_all "no stat"
tmp=$(mktemp -d)
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
plan 7

# run_hook ROOTFS [VAR=VALUE...]: the hook with fresh mount and environ files.
run_hook() {
	local r=$1
	shift
	: >"$tmp/mounts"
	: >"$tmp/environ"
	env -u KREX_SOCKET -u KREX_GATE_PATH ENROOT_ROOTFS="$r" ENROOT_MOUNTS="$tmp/mounts" \
		ENROOT_ENVIRON="$tmp/environ" "$@" "$hook" 2>"$tmp/err"
}
mode() { stat -c %a "$1"; }

r=$tmp/rootfs
mkdir -p "$r/run" "$r/srv/own" "$r/etc"
run_hook "$r"
ok "without KREX_SOCKET: nothing mounted, nothing set" [ ! -s "$tmp/mounts" -a ! -s "$tmp/environ" ]

run_hook "$r" KREX_SOCKET=/run/krex/n1/krexd.sock
ok "krexd's run directory is mounted read-write at its host path" \
	grep -q '^/run/krex/n1 /run/krex/n1 none x-create=dir,bind,rw,' "$tmp/mounts"

# An earlier step of this named container mounted /run/krex (krexd's own
# default run dir): enroot made that mount point 000, and it stays.
mkdir -p "$r/run/krex/n2"
chmod 000 "$r/run/krex/n2" "$r/run/krex"
run_hook "$r" KREX_SOCKET=/run/krex/n2/krexd.sock
ok "a mode-000 directory on the way to it is opened ($(mode "$r/run/krex"))" [ "$(mode "$r/run/krex")" = 755 ]
ok "the mount point itself is left as it is ($(mode "$r/run/krex/n2"))" [ "$(mode "$r/run/krex/n2")" = 0 ]

# The image's own 0700 directory on the way is not the hook's to change.
chmod 700 "$r/srv"
run_hook "$r" KREX_SOCKET=/srv/own/x/krexd.sock
ok "the image's own modes are left alone ($(mode "$r/srv"))" [ "$(mode "$r/srv")" = 700 ]

run_hook "$r" "KREX_SOCKET=/run/krex/a b/krexd.sock"
ok "a blank in the socket's path: no mount, a warning that says so" \
	sh -c "! grep -q 'a b' '$tmp/mounts' && grep -q 'has a blank in its path' '$tmp/err'"

# A symbolic link on the way is followed by nobody: left alone.
mkdir -p "$tmp/elsewhere" && chmod 000 "$tmp/elsewhere" && ln -s "$tmp/elsewhere" "$r/lnk"
run_hook "$r" KREX_SOCKET=/lnk/n/krexd.sock
ok "a symbolic link on the way is not followed ($(mode "$tmp/elsewhere"))" [ "$(mode "$tmp/elsewhere")" = 0 ]
