#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# SIGTERM while siblings are frozen inside a region: krexd thaws them, opens
# every gate (alive = 0 on the gate page), removes its cgroups and files.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

both_stalled() { kt_stalled a && kt_stalled b; }
both_run() { kt_progress a && kt_progress b; }
gate_word() { od -An -tu4 -j "$1" -N 4 "$KT_DIR/gate" | tr -d ' '; }
no_cgroups() { ! ls -d /sys/fs/cgroup/*/"$KT_SUB"/p* /sys/fs/cgroup/"$KT_SUB"/p* 2>/dev/null | grep -q .; }
stopped() { wait_for 5 kt_gone "$KREXD_PID"; }

kt_setup
kt_conf "gpus = g0"
freezers=$(kt_freezers)
n=0
for f in $freezers; do n=$((n + 9)); done
plan $n
for f in $freezers; do
	ok "$f: krexd starts" krexd_start -o freezer=$f
	kt_participant a --gpus g0 --ack-drains
	kt_participant b --gpus g0
	kt_bg owner "$CLIENT" region --gpus g0 --no-end
	ok "$f: region granted" wait_for 5 grep -qs granted "$KT_DIR/owner.out"
	ok "$f: siblings stopped" both_stalled
	ok "$f: gate slot 0 closed" test "$(gate_word 32)" != 0
	kill -TERM $KREXD_PID
	ok "$f: SIGTERM stops krexd" stopped
	KREXD_PID=
	ok "$f: siblings run again" both_run
	ok "$f: gate page says krexd is gone (alive = 0), slot open" test "$(gate_word 20)/$(gate_word 32)" = 0/0
	ok "$f: cgroups removed" no_cgroups
	ok "$f: socket and pid file removed" test ! -e "$KREX_SOCKET" -a ! -e "$KT_DIR/krexd.pid"
	kill -KILL $a $b $owner 2>/dev/null
	wait $a $b $owner 2>/dev/null
done
done_testing
