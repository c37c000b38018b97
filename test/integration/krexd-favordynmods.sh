#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krexd-favordynmods.sh - krexd.conf(5) favordynmods.  krexd says at its
# start whether the cgroup hierarchy it moves participants into has the
# kernel's favordynmods (as /proc/self/mountinfo does); with favordynmods =
# yes it turns it on for a cgroup2 hierarchy, keeps the hierarchy's other
# options and the mount's own flags, and makes participants as before; on a
# v1 hierarchy it says why it cannot; with no, it leaves the mount alone.
#
# The cgroup2 part runs in a mount namespace of its own (unshare -m), with a
# cgroup2 mount of its own when the host has none, so that the other tests
# never see a cgroup2 mount come and go.  NOTE: favordynmods = yes turns the
# kernel's favordynmods on for this host until reboot (the kernel refuses to
# turn it off; it makes moves between cgroups cheap and forks a little
# slower): it runs only with KREX_TEST_KERNEL=1 (scripts/test-all.sh sets
# it) or where favordynmods is on already, and skips with the reason else.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

need_root
if [ -z "$KT_FDM_NS" ]; then
	command -v unshare >/dev/null || skip_all "no unshare(1)"
	KT_FDM_NS=1 exec unshare -m --propagation private sh "$0" "$@"
fi

# super and mount options of the mount at $1 (mountinfo fields after "-", and field 6)
sopts() { awk -v p="$1" '$5 == p { for (i = 7; $i != "-"; i++); o = $(i + 3) } END { print o }' /proc/self/mountinfo; }
mopts() { awk -v p="$1" '$5 == p { o = $6 } END { print o }' /proc/self/mountinfo; }
has() { case ",$1," in *",$2,"*) return 0 ;; esac; return 1; }
logs() { grep -q "$1" "$KT_DIR/krexd.log" || { diag "no '$1' in krexd's log"; return 1; }; }
# the super options $1 plus favordynmods, as a sorted list, equal $2's
same_plus() {
	a=$(printf '%s,favordynmods' "$1" | tr , '\n' | sort -u | tr '\n' ,)
	b=$(printf '%s' "$2" | tr , '\n' | sort -u | tr '\n' ,)
	[ "$a" = "$b" ] || { diag "before+favordynmods: $a, after: $b"; return 1; }
}

V1=$(sed -n 's/^[^ ]* [^ ]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup [^ ]* \([^ ]*,\)\{0,1\}freezer\(,.*\)\{0,1\}$/\1/p' /proc/self/mountinfo | head -n 1)
V2=$(sed -n 's/^[^ ]* [^ ]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n 1)
MNT=
if [ -z "$V2" ]; then
	MNT=$(mktemp -d /tmp/krex-cg2.XXXXXX) || exit 1
	# A cgroup2 mount sets the hierarchy's flags for every mount of it:
	# none, but favordynmods where the v1 mounts show it on (boot option).
	o=
	[ -n "$V1" ] && has "$(sopts "$V1")" favordynmods && o="-o favordynmods"
	mount -t cgroup2 $o none "$MNT" || skip_all "cannot mount cgroup2 here"
	V2=$MNT
fi
[ -e "$V2/cgroup.subtree_control" ] || skip_all "$V2: not a cgroup2 root"

kt_setup
# krexd's cgroups under a cgroup2 mount of this test's own go before it does
# (a mount point outside KT_DIR: kt_cleanup's rm -rf never reaches a cgroupfs)
cg2_cleanup() {
	[ -n "$MNT" ] || return 0
	rmdir "$MNT/$KT_SUB"/p* "$MNT/$KT_SUB" "$MNT/krex-test" 2>/dev/null
	umount "$MNT" && rmdir "$MNT"
}
trap 'kt_cleanup; cg2_cleanup' EXIT
kt_conf "gpus = g0" "metrics_file = $KT_DIR/metrics.prom"
# metrics NAME VALUE: the metrics file shows NAME VALUE (written at the start)
metrics() { wait_for 5 grep -qx "$1 $2" "$KT_DIR/metrics.prom" || { diag "$(grep "^$1" "$KT_DIR/metrics.prom")"; return 1; }; }
plan 15

if [ -n "$V1" ]; then
	ok "cgroup1, favordynmods = no: krexd starts" krexd_start -o freezer=cgroup1
	if has "$(sopts "$V1")" favordynmods; then want=on; else want=off; fi
	ok "... and says favordynmods is $want on $V1, as mountinfo does" logs "cgroup $V1: favordynmods $want"
	if [ $want = on ]; then v=1; else v=0; fi
	ok "... its metrics too: krex_cgroup_favordynmods $v" metrics krex_cgroup_favordynmods $v
	krexd_stop
	: >"$KT_DIR/krexd.log"; rm -f "$KT_DIR/metrics.prom"
	ok "cgroup1, favordynmods = yes: krexd starts" krexd_start -o freezer=cgroup1 -o favordynmods=yes
	if [ $want = on ]; then
		ok "... and says it is on" logs "cgroup $V1: favordynmods on"
	else
		ok "... and says a v1 hierarchy cannot take it, and what can" \
			logs "cgroup $V1 is a v1 hierarchy.*boot with cgroup_favordynmods=true"
	fi
	krexd_stop
	kt_rm_cgroups
else
	for i in 1 2 3 4 5; do skip "cgroup1 case $i" "no cgroup v1 freezer here"; done
fi

: >"$KT_DIR/krexd.log"; rm -f "$KT_DIR/metrics.prom"
before=$(sopts "$V2")
mbefore=$(mopts "$V2")
diag "cgroup2 at $V2: $mbefore - $before"
if has "$before" favordynmods; then want=on v=1; else want=off v=0; fi
ok "cgroup2, favordynmods = no: krexd starts" krexd_start -o freezer=cgroup2
ok "... and says favordynmods is $want on $V2, as mountinfo does" logs "cgroup $V2: favordynmods $want"
ok "... its metrics too: krex_cgroup_favordynmods $v" metrics krex_cgroup_favordynmods $v
ok "... and leaves the mount as it was" test "$(sopts "$V2")" = "$before"
krexd_stop
kt_rm_cgroups

# favordynmods = yes changes the kernel until reboot: only where asked
# (scripts/test-all.sh, the README's test command for a test machine, sets
# KREX_TEST_KERNEL=1) or where it is on already.
if [ "${KREX_TEST_KERNEL:-0}" != 1 ] && [ $want = off ]; then
	for i in 1 2 3 4 5 6; do
		skip "cgroup2, favordynmods = yes, case $i" "it turns a node-wide kernel setting on until reboot; KREX_TEST_KERNEL=1 (scripts/test-all.sh) runs it"
	done
	done_testing
	exit
fi
: >"$KT_DIR/krexd.log"; rm -f "$KT_DIR/metrics.prom"
ok "cgroup2, favordynmods = yes: krexd starts" krexd_start -o freezer=cgroup2 -o favordynmods=yes
after=$(sopts "$V2")
ok "... mountinfo now shows favordynmods on $V2 ($after)" has "$after" favordynmods
ok "... its other options kept" same_plus "$before" "$after"
ok "... the mount's own flags unchanged ($mbefore)" test "$(mopts "$V2")" = "$mbefore"
ok "... the metrics say so: krex_cgroup_favordynmods 1" metrics krex_cgroup_favordynmods 1
kt_participant a
ok "... a participant is made in its cgroup there" \
	grep -q "^0::/$KT_SUB/p[0-9]" "/proc/$a/cgroup"
done_testing
