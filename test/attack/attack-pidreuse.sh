#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pid reuse: an unprivileged user connects from a process C, hands the socket
# to its child G and lets C exit; the test then recycles C's pid for a root
# process V (through /proc/sys/kernel/ns_last_pid) and G registers "pid 0",
# i.e. "the process that connected".  krexd must refuse: the pidfd and start
# time it took at accept say the connecting process is gone.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
at_setup
plan 5
kt_conf "gpus = g0" "freezer = signal"
krexd_start
export KREX_ATTACK_GO=$KT_DIR/go
VICTIM=

cleanup_victim() { [ -n "$VICTIM" ] && kill -KILL "$VICTIM" 2>/dev/null; }

# 1. the connecting process exited, its pid is free
rm -f "$KREX_ATTACK_GO"
touch "$KREX_ATTACK_GO"
KREX_ATTACK_HOLD=1 as_user "$ATTACK" pidreuse >"$KT_DIR/a1.out" 2>&1
wait_for 5 grep -qs register= "$KT_DIR/a1.out"
diag "$(tr '\n' ' ' <"$KT_DIR/a1.out")"
ok "REGISTER(pid 0) after the connecting process exited is refused" grep -qs 'register=error' "$KT_DIR/a1.out"

# 2. the pid is reused by a root process
rm -f "$KREX_ATTACK_GO"
KREX_ATTACK_HOLD=3 as_user "$ATTACK" pidreuse >"$KT_DIR/a2.out" 2>&1
cpid=$(sed -n 's/^connector=//p' "$KT_DIR/a2.out")
# recycle cpid: ask the kernel for cpid as the next pid (retried: other forks race us)
reused=0
for i in $(seq 1 50); do
	[ -n "$cpid" ] || break
	kt_gone "$cpid" || { sleep 0.05; continue; }
	echo $((cpid - 1)) >/proc/sys/kernel/ns_last_pid 2>/dev/null || break
	sleep 30 &
	v=$!
	if [ "$v" = "$cpid" ]; then
		VICTIM=$v
		KT_PIDS="$KT_PIDS $v"
		reused=1
		break
	fi
	kill -KILL "$v" 2>/dev/null
	wait "$v" 2>/dev/null
done
touch "$KREX_ATTACK_GO"
wait_for 10 grep -qs register= "$KT_DIR/a2.out"
diag "$(tr '\n' ' ' <"$KT_DIR/a2.out") reused=$reused victim=$VICTIM"
if [ "$reused" = 1 ]; then
	ok "REGISTER(pid 0) after the pid went to a root process is refused" grep -qs 'register=error 3 ' "$KT_DIR/a2.out"
	"$CLIENT" status >"$KT_DIR/status.out"
	ok "the root process is no participant" sh -c "! grep -q 'pid=$VICTIM ' '$KT_DIR/status.out'"
	ok "the root process was not stopped" sh -c "! grep -q '^State:.*T' /proc/$VICTIM/status"
else
	skip "REGISTER(pid 0) after the pid went to a root process is refused" "could not recycle pid $cpid (ns_last_pid)"
	skip "the root process is no participant" "no reuse"
	skip "the root process was not stopped" "no reuse"
fi
ok "krexd still answers" sh -c "\"$CLIENT\" status >/dev/null"
cleanup_victim
done_testing
