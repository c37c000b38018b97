#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# In a user namespace that does not map root (an unprivileged user's enroot
# container, `unshare --user --map-root-user`), root's krexd shows as the
# overflow uid, and so does every other unmapped user: libkrexregion trusts
# that uid only for the system krexd's socket (KREX_RUNDIR/krexd.sock or
# KREX_RUNDIR/NAME/krexd.sock) whose every directory only its owner can
# write, in a namespace that does not map uid 0, for a caller that is not
# the overflow uid itself (libregion/peer.c, doc/security.md).
#
# The victim is an unprivileged uid V in its own user namespace; the
# attacker another unprivileged uid A (and nobody) running a real krexd.
# The system path is compiled in: the test runs in a private mount
# namespace with a tmpfs over KREX_RUNDIR's parent, so the machine's own
# run directory is never touched.
. "$top_srcdir/test/lib.sh"
need_root
if [ -z "${KREX_ATTACK_USERNS_MNT:-}" ]; then
	command -v unshare >/dev/null || skip_all "unshare (util-linux) not found"
	unshare -m --propagation private true 2>/dev/null || skip_all "cannot make a private mount namespace"
	KREX_ATTACK_USERNS_MNT=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
at_need_krex
JT=$top_builddir/test/integration/krex-jointest
[ -x "$JT" ] || skip_all "krex-jointest not built (make -C test/integration krex-jointest)"
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) not found"
RUNDIR=$(sed -n 's/^#define KREX_RUNDIR "\(.*\)"$/\1/p' "$top_builddir/config.h")
case $RUNDIR in /?*/?*) ;; *) skip_all "KREX_RUNDIR '$RUNDIR' has no parent directory to put a tmpfs on" ;; esac
OVF=$(cat /proc/sys/kernel/overflowuid)
NOBODY=$(id -u nobody 2>/dev/null) || NOBODY=

# Two uids of no account: the victim V and the attacker A.
free_uid() {
	local u=$1
	while getent passwd "$u" >/dev/null || [ "$u" = "$OVF" ] || [ "$u" = "${V:-}" ]; do u=$((u - 1)); done
	echo "$u"
}
V=$(free_uid 64971)
A=$(free_uid $((V - 1)))
# as UID CMD...: run CMD as UID (gid the same), environment kept.
as() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$u" --clear-groups -- "$@"
}
as "$V" unshare --user --map-root-user true 2>/dev/null ||
	skip_all "an unprivileged user cannot make a user namespace here (kernel.unprivileged_userns_clone?)"

at_setup
mount -t tmpfs -o mode=0755,size=4m krex-attack-userns "$(dirname "$RUNDIR")" ||
	skip_all "cannot mount a tmpfs on $(dirname "$RUNDIR")"
mkdir -m 0755 "$RUNDIR"
export LD_LIBRARY_PATH=$top_builddir/libregion/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset KREX_SOCKET KREX_GPUS CUDA_VISIBLE_DEVICES XDG_RUNTIME_DIR

# in_ns NAME MAP CMD...: CMD as V in a user namespace of its own, MAP
# "root" (--map-root-user: V alone is mapped, as uid 0) or "none" (no uid
# mapped: V shows as the overflow uid too); output in NAME.out, "rc N" last.
in_ns() {
	local name=$1 map=()
	[ "$2" = root ] && map=(--map-root-user)
	shift 2
	as "$V" unshare --user "${map[@]}" -- "$@" >"$KT_DIR/$name.out" 2>&1
	echo "rc $?" >>"$KT_DIR/$name.out"
}
# said NAME TEXT: NAME.out has TEXT (fixed string).
said() { grep -qF -- "$2" "$KT_DIR/$1.out"; }
rc_of() { sed -n 's/^rc //p' "$KT_DIR/$1.out"; }
out_of() { head -c 400 "$KT_DIR/$1.out" | tr '\n' '|'; }
# root_krexd DIR SUB: root's krexd in DIR (a socket at DIR/krexd.sock).
root_krexd() {
	KREX_SOCKET=$1/krexd.sock krexd_start -r "$1" -o "cgroup_subtree=$KT_SUB/$2" \
		-o freezer=signal -o gpus=g0 -o isolate=none
}
# fake_krexd UID DIR: a real krexd run by UID in DIR, which UID owns (0755).
fake_krexd() {
	mkdir -p "$2" && chown "$1:$1" "$2" && chmod 755 "$2"
	kt_bg fake setpriv --reuid="$1" --regid="$1" --clear-groups -- "$KREXD" -F -r "$2" -o freezer=signal -o gpus=g0 -o isolate=none \
		-o "cgroup_subtree=$KT_SUB/f$1"
	wait_for 10 test -S "$2/krexd.sock"
}
fake=
fake_stop() {
	kill -TERM "$fake" 2>/dev/null
	wait "$fake" 2>/dev/null
}
# refuses NAME SOCK WHY: V's krex status and krex_join() (the C API) in V's
# user namespace both refuse the krexd at SOCK, saying WHY.
refuses() {
	RN=$1 RW=$3
	in_ns "$RN" root env KREX_SOCKET="$2" "$KREX" status
	ok "V's krex status refuses it ($(out_of "$RN"))" refused_cli
	in_ns "$RN-join" root env KREX_SOCKET="$2" KREX_LOG=warn "$JT" join
	ok "krex_join() refuses it: KREX_EPERM, the gate open, the same reason ($(out_of "$RN-join"))" \
		refused_join
}
refused_cli() { [ "$(rc_of "$RN")" != 0 ] && said "$RN" "$RW"; }
refused_join() { said "$RN-join" "join 3 " && said "$RN-join" "$RW"; }

plan 24

diag "victim uid $V, attacker uid $A, overflow uid $OVF, system run dir $RUNDIR (a private tmpfs)"
# 1. Root's krexd at the system socket: trusted from V's user namespace.
ok "root's krexd at $RUNDIR/krexd.sock" root_krexd "$RUNDIR" r
in_ns status root "$KREX" status
ok "in V's user namespace (uid 0 unmapped) krex status reaches it at the default path ($(out_of status))" \
	[ "$(rc_of status)" = 0 ]
in_ns join root env KREX_SOCKET="$RUNDIR/krexd.sock" "$JT" join
ok "the C API joins it: krex_join() returns 0, the gate page (shown as uid $OVF) accepted ($(out_of join))" \
	said join "join 0 "
in_ns region root "$KREX" region --gpus g0 -- true
ok "krex region takes a region there ($(out_of region))" [ "$(rc_of region)" = 0 ]
ok "and its certificate says clean" said region "clean"
# The same krexd where V is the overflow uid too (no uid mapped): refused,
# since every other user's krexd would show as V there.
in_ns unmapped none "$KREX" status
ok "with no uid mapped (V shows as $OVF too) it is refused ($(out_of unmapped))" \
	said unmapped "you show as the overflow uid too"
krexd_stop

# 2. Root's krexd at spank_krex's default place, RUNDIR/NODE/krexd.sock.
mkdir -m 0755 "$RUNDIR/n1"
ok "root's krexd at $RUNDIR/n1/krexd.sock" root_krexd "$RUNDIR/n1" n
in_ns node root env KREX_SOCKET="$RUNDIR/n1/krexd.sock" "$KREX" status
ok "V's krex status reaches it with KREX_SOCKET as spank_krex sets it ($(out_of node))" \
	[ "$(rc_of node)" = 0 ]
# The path is compared as written: the same socket named through ".." is not
# the system socket's form.
in_ns dotted root env KREX_SOCKET="$RUNDIR/n1/../n1/krexd.sock" "$KREX" status
ok "named $RUNDIR/n1/../n1/krexd.sock it is refused ($(out_of dotted))" \
	said dotted "but that is not the system krexd's socket"
krexd_stop

# 3. Another user's krexd at a path of its own: refused, however named.
ok "uid $A runs a krexd in $KT_DIR/a" fake_krexd "$A" "$KT_DIR/a"
refuses other "$KT_DIR/a/krexd.sock" "but that is not the system krexd's socket, $RUNDIR/krexd.sock or $RUNDIR/NAME/krexd.sock"
# A symbolic link under the run dir to it (root's mistake, or an old one).
ln -s "$KT_DIR/a" "$RUNDIR/ln"
refuses link "$RUNDIR/ln/krexd.sock" "but $RUNDIR/ln is a symbolic link"
rm -f "$RUNDIR/ln"
# The unmapped V would have taken it for its own before (any peer showed as V).
in_ns unmapped2 none env KREX_SOCKET="$KT_DIR/a/krexd.sock" "$KREX" status
ok "with no uid mapped, V's krex status refuses it ($(out_of unmapped2))" \
	said unmapped2 "you show as the overflow uid too"
fake_stop

# 4. A world-writable (sticky, as /tmp) run dir: A makes a directory there
# and serves a socket of the system path's form; then a group-writable one.
chmod 1777 "$RUNDIR"
as "$A" mkdir -m 0755 "$RUNDIR/evil"
ok "uid $A runs a krexd in $RUNDIR/evil, $RUNDIR being mode 1777" fake_krexd "$A" "$RUNDIR/evil"
refuses sticky "$RUNDIR/evil/krexd.sock" "but $RUNDIR is writable by others (mode 1777)"
fake_stop
chmod 0775 "$RUNDIR" && chgrp "$A" "$RUNDIR"
ok "uid $A runs a krexd in $RUNDIR/evil, $RUNDIR being mode 0775, its group" fake_krexd "$A" "$RUNDIR/evil"
refuses group "$RUNDIR/evil/krexd.sock" "but $RUNDIR is writable by its group (mode 0775)"
fake_stop
rm -rf "$RUNDIR/evil"
chmod 0755 "$RUNDIR" && chgrp 0 "$RUNDIR"

# 5. Shown as the overflow uid where uid 0 IS mapped: never root's krexd.
# A's krexd in a directory root gave it under the run dir (every directory
# only its owner can write): only the namespace's map refuses it.
ok "uid $A runs a krexd in $RUNDIR/a (root made it, $A's, 0755)" fake_krexd "$A" "$RUNDIR/a"
KREX_SOCKET="$RUNDIR/a/krexd.sock" unshare --user --map-root-user -- "$KREX" status >"$KT_DIR/rootns.out" 2>&1
echo "rc $?" >>"$KT_DIR/rootns.out"
ok "root's own user namespace (uid 0 mapped, $A shows as $OVF) refuses it ($(out_of rootns))" \
	said rootns "but this user namespace maps uid 0, where root's krexd shows as uid 0"
fake_stop
if [ "$NOBODY" = "$OVF" ]; then
	fake_krexd "$NOBODY" "$RUNDIR/nb"
	KREX_SOCKET="$RUNDIR/nb/krexd.sock" as "$V" "$KREX" status >"$KT_DIR/nobody.out" 2>&1
	echo "rc $?" >>"$KT_DIR/nobody.out"
	ok "outside any user namespace, nobody's krexd (uid $OVF) at $RUNDIR/nb is refused ($(out_of nobody))" \
		said nobody "but this user namespace maps uid 0"
	fake_stop
else
	skip "outside any user namespace, nobody's krexd is refused" "nobody is not the overflow uid $OVF"
fi
done_testing
