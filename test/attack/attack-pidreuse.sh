#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pid reuse: an unprivileged user connects from a process C, hands the socket
# to its child G and lets C exit; the test then recycles C's pid for a root
# process V (through /proc/sys/kernel/ns_last_pid) and G registers "pid 0",
# i.e. "the process that connected".  krexd must refuse: the pidfd and start
# time it took at accept say the connecting process is gone.  Then the same
# with the pid reused BEFORE krexd accepts (krexd held stopped, as a long
# loop turn would): the pidfd comes from the connection itself
# (SO_PEERPIDFD), and a root-owned process is never adopted on a user's
# request.  And a user's non-dumpable process (its /proc is root's) is not
# adopted either.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
at_setup
plan 11
kt_conf "gpus = g0" "freezer = signal"
krexd_start
export KREX_ATTACK_GO=$KT_DIR/go
VICTIM=

cleanup_victim() { [ -n "$VICTIM" ] && kill -KILL "$VICTIM" 2>/dev/null; }

# recycle PID for a root "sleep 30" (ns_last_pid); sets VICTIM, 1 if it could not
recycle() {
	local i v
	for i in $(seq 1 50); do
		kt_gone "$1" || { sleep 0.05; continue; }
		echo $(($1 - 1)) >/proc/sys/kernel/ns_last_pid 2>/dev/null || return 1
		sleep 30 &
		v=$!
		if [ "$v" = "$1" ]; then
			VICTIM=$v
			KT_PIDS="$KT_PIDS $v"
			return 0
		fi
		kill -KILL "$v" 2>/dev/null
		wait "$v" 2>/dev/null
	done
	return 1
}

# 1. the connecting process exited, its pid is free
rm -f "$KREX_ATTACK_GO"
touch "$KREX_ATTACK_GO"
KREX_ATTACK_HOLD=1 as_user "$ATTACK" pidreuse >"$KT_DIR/a1.out" 2>&1
wait_for 5 grep -qs register= "$KT_DIR/a1.out"
diag "$(tr '\n' ' ' <"$KT_DIR/a1.out")"
ok "REGISTER(pid 0) after the connecting process exited is refused" grep -qs 'register=error' "$KT_DIR/a1.out"

# reuse_case N WHEN [stop]: the connector's pid goes to a root process
# before the child registers; with stop, krexd is held stopped from before
# the connect until after the reuse (the reuse comes before the accept).
reuse_case() {
	local n=$1 when=$2 stop=${3:-} cpid reused=0
	rm -f "$KREX_ATTACK_GO"
	[ -z "$stop" ] || kill -STOP "$KREXD_PID"
	KREX_ATTACK_HOLD=3 as_user "$ATTACK" pidreuse >"$KT_DIR/a$n.out" 2>&1
	cpid=$(sed -n 's/^connector=//p' "$KT_DIR/a$n.out")
	[ -n "$cpid" ] && recycle "$cpid" && reused=1
	[ -z "$stop" ] || kill -CONT "$KREXD_PID"
	touch "$KREX_ATTACK_GO"
	wait_for 10 grep -qs register= "$KT_DIR/a$n.out"
	diag "$(tr '\n' ' ' <"$KT_DIR/a$n.out") reused=$reused victim=$VICTIM"
	if [ "$reused" = 1 ]; then
		ok "$when: REGISTER(pid 0) is refused" grep -qs 'register=error 3 ' "$KT_DIR/a$n.out"
		"$CLIENT" status >"$KT_DIR/status$n.out"
		ok "the root process is no participant" sh -c "! grep -q 'pid=$VICTIM ' '$KT_DIR/status$n.out'"
		ok "the root process was not stopped" sh -c "! grep -q '^State:.*T' /proc/$VICTIM/status"
	else
		skip "$when: REGISTER(pid 0) is refused" "could not recycle pid $cpid (ns_last_pid)"
		skip "the root process is no participant" "no reuse"
		skip "the root process was not stopped" "no reuse"
	fi
	cleanup_victim
	VICTIM=
}
trap 'kill -CONT "$KREXD_PID" 2>/dev/null; cleanup_victim; kt_cleanup' EXIT

# 2. the pid is reused by a root process after the accept
reuse_case 2 "pid reused after the accept by a root process"
ok "krexd still answers" sh -c "\"$CLIENT\" status >/dev/null"

# 3. the pid is reused by a root process before krexd accepts the connection
reuse_case 3 "pid reused before the accept by a root process" stop

# 4. a non-dumpable process of the user registers itself
as_user "$ATTACK" nodump >"$KT_DIR/a4.out" 2>&1
diag "$(tr '\n' ' ' <"$KT_DIR/a4.out")"
ok "a user's non-dumpable process (its /proc is root's) is refused" grep -qs 'register=error 3 ' "$KT_DIR/a4.out"
ok "krexd still answers" sh -c "\"$CLIENT\" status >/dev/null"
# the kernel's version: SO_PEERPIDFD is Linux 6.5
kv=$(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
if [ "${kv% *}" -gt 6 ] || { [ "${kv% *}" = 6 ] && [ "${kv#* }" -ge 5 ]; }; then
	ok "Linux $(uname -r): the peer identity comes from SO_PEERPIDFD" grep -q 'peer identity: SO_PEERPIDFD' "$KT_DIR/krexd.log"
else
	ok "Linux $(uname -r): the fallback is said" grep -q 'has no SO_PEERPIDFD' "$KT_DIR/krexd.log"
fi
done_testing
