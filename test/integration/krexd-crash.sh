#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Exit paths that must thaw: the owner killed with SIGKILL mid-region, and
# krexd itself killed with SIGKILL while siblings are frozen, then restarted
# (it undoes what its state file says).  Every freezer this node has.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

both_stalled() { kt_stalled a && kt_stalled b; }
both_run() { kt_progress a && kt_progress b; }
state_lists_freeze() { grep -Eq '^(cgroup1|cgroup2|pid) ' "$KT_DIR/krexd.state"; }
state_empty() { ! test -s "$KT_DIR/krexd.state"; }

kt_setup
kt_conf "gpus = g0"
freezers=$(kt_freezers)
n=0
for f in $freezers; do n=$((n + 11)); done
plan $n

for f in $freezers; do
	ok "$f: krexd starts" krexd_start -o freezer=$f $KT_KREXD_ARGS
	kt_participant a --gpus g0 --ack-drains
	kt_participant b --gpus g0
	kt_bg owner "$CLIENT" region --gpus g0 --no-end
	ok "$f: region granted" wait_for 5 grep -qs granted "$KT_DIR/owner.out"
	ok "$f: siblings stopped" both_stalled
	kill -KILL $owner
	ok "$f: owner killed: siblings run again within 1 s" both_run

	kt_bg owner "$CLIENT" region --gpus g0 --no-end
	ok "$f: second region granted" wait_for 5 grep -qs granted "$KT_DIR/owner.out"
	ok "$f: state file lists the freeze" state_lists_freeze
	kill -KILL $KREXD_PID
	wait $KREXD_PID 2>/dev/null
	KREXD_PID=
	ok "$f: krexd killed: siblings still stopped" both_stalled
	ok "$f: krexd restarts" krexd_start -o freezer=$f
	ok "$f: restarted krexd thawed the siblings" both_run
	ok "$f: state file emptied" state_empty
	ok "$f: gate page reopened" test "$(od -An -tu4 -j 36 -N 4 "$KT_DIR/gate" | tr -d ' ')" = 0
	kill -KILL $a $b $owner 2>/dev/null
	wait $a $b $owner 2>/dev/null
	krexd_stop
done
done_testing
