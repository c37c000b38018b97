#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Two busy participants stop inside a third's region and run again after it,
# with every freezer this node has (cgroup1, cgroup2, signal).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

both_stalled() { kt_stalled a && kt_stalled b; }
both_run() { kt_progress a && kt_progress b; }
cert_is() { test "$(kt_field "$KT_DIR/owner.out" outcome)/$(kt_field "$KT_DIR/owner.out" frozen)/$(kt_field "$KT_DIR/owner.out" drained)/$(kt_field "$KT_DIR/owner.out" siblings)" = "$1"; }
no_cgroups() { ! ls -d /sys/fs/cgroup/*/"$KT_SUB"/p* /sys/fs/cgroup/"$KT_SUB"/p* 2>/dev/null | grep -qs .; }

kt_setup
kt_conf "gpus = g0" "drain_timeout = 500ms"
freezers=$(kt_freezers)
n=0
for f in $freezers; do n=$((n + 8)); done
plan $n

for f in $freezers; do
	ok "$f: krexd starts" krexd_start -o freezer=$f
	ok "$f: two participants run" kt_participant a --gpus g0 --ack-drains
	kt_participant b --gpus g0
	kt_bg owner "$CLIENT" region --gpus g0 --hold-ms 1500
	ok "$f: region granted" wait_for 5 grep -qs granted "$KT_DIR/owner.out"
	ok "$f: both siblings stopped inside the region" both_stalled
	ok "$f: region ends with a certificate" wait_for 5 grep -qs '^outcome=' "$KT_DIR/owner.out"
	ok "$f: certificate is clean, 2 siblings frozen, 1 drained" cert_is clean/2/1/2
	ok "$f: both siblings run again" both_run
	kill -KILL $a $b 2>/dev/null
	wait $a $b $owner 2>/dev/null
	krexd_stop
	ok "$f: krexd removed its cgroups" no_cgroups
done
done_testing
