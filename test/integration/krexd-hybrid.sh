#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A hybrid node: a cgroup2 mount beside the v1 freezer and cpuset (as this
# project's Debian 12 machines have at /sys/fs/cgroup/unified).  krexd A runs
# the v2 freezer on a cgroup_subtree; a krexd B given the same subtree (and
# the v1 freezer, auto's choice there) stops at start-up, and its probe of
# the v2 subtree leaves A's cgroups in place.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

need_root
CG2=$(sed -n 's/^[^ ]* [^ ]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n 1)
[ -n "$CG2" ] || skip_all "no cgroup2 mount: not a hybrid node"
[ "$CG2" != /sys/fs/cgroup ] || skip_all "cgroup2 at /sys/fs/cgroup: krexd's auto choice is the v2 freezer, no probe to test"
grep -qs ' - cgroup .*freezer' /proc/self/mountinfo || skip_all "no cgroup v1 freezer: not a hybrid node"
grep -qs ' - cgroup .*cpuset' /proc/self/mountinfo || skip_all "no cgroup v1 cpuset"
[ -e "$CG2/cgroup.subtree_control" ] || skip_all "$CG2: not a cgroup2 root"

kt_setup
plan 5

kt_conf "gpus = g0"
ok "krexd A starts with the v2 freezer on the hybrid node" krexd_start -o freezer=cgroup2
ok "... and holds its v2 subtree" test -d "$CG2/$KT_SUB"
mkdir "$KT_DIR/other"
"$KREXD" -F -c "$KT_DIR/krexd.conf" -r "$KT_DIR/other" -o "cgroup_subtree=$KT_SUB" \
	>"$KT_DIR/b.out" 2>&1 &
B=$!
wait_for 10 kt_gone "$B" || kill -KILL "$B"
wait "$B"
brc=$?
ok "krexd B on the same subtree stops at start-up, saying why" \
	sh -c "[ $brc != 0 ] && grep -q 'is in use by another krexd' '$KT_DIR/b.out'"
ok "... and A's v2 subtree is still there" test -d "$CG2/$KT_SUB"
kt_participant a
ok "A's participant gets its v2 cgroup under the subtree" grep -q "^0::/$KT_SUB/p[0-9]" "/proc/$a/cgroup"
done_testing
