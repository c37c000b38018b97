#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Daemon life: start without -F (double fork, start-up errors come back
# through the pipe), lock file (a second krexd is refused), pid file, socket
# mode, config errors with file:line, -o overrides, SIGHUP reload (and
# drain_timeout published on the gate page again), SIGTERM.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

kt_setup
plan 18

daemon() { "$KREXD" -c "$KT_DIR/krexd.conf" -r "$KT_DIR" -o "cgroup_subtree=$KT_SUB" "$@" 2>"$KT_DIR/err"; }
fails_with() {
	local want=$1
	shift
	! "$@" >/dev/null 2>"$KT_DIR/err" && grep -q "$want" "$KT_DIR/err"
}
pid_alive() { test -s "$KT_DIR/krexd.pid" && kill -0 "$(cat "$KT_DIR/krexd.pid")"; }
log_has() { wait_for 10 grep -qs "$1" "$KT_DIR/krexd.log"; }
# the gate page's drain_ms (common/gatepage.h: the 7th 32-bit word), in ms
drain_ms() { od -An -t u4 -j 24 -N 4 "$KT_DIR/gate" | tr -d ' '; }

kt_conf "gpus = g0"
ok "daemon start exits 0 once krexd is up" daemon
KREXD_PID=$(cat "$KT_DIR/krexd.pid" 2>/dev/null)
ok "pid file names a live krexd" pid_alive
ok "socket is mode 0666" test "$(stat -c %a "$KREX_SOCKET")" = 666
ok "a second krexd is refused with the running pid" fails_with \
	"krexd already running (pid $KREXD_PID) on $KT_DIR" daemon
ok "... also in the foreground" fails_with "krexd already running" "$KREXD" -F -c /dev/null -r "$KT_DIR"
# A second krexd with a run dir of its own but this one's cgroup_subtree is
# refused before it touches the subtree: its start-up clean would thaw this
# krexd's participants and move them out of their cgroups.  (A krexd that
# is not refused runs on in the foreground: timeout ends it.)
if [ "$(id -u)" = 0 ] && [ "$(kt_freezers)" != " signal" ]; then
	kt_participant a
	in_sub() { grep -q ":/$KT_SUB/p[0-9]" "/proc/$a/cgroup"; }
	ok "a participant is in its cgroup under the subtree" in_sub
	mkdir "$KT_DIR/other"
	ok "a second krexd on another run dir with the same cgroup_subtree is refused" fails_with \
		"cgroup .*/$KT_SUB is in use by another krexd" \
		timeout 10 "$KREXD" -F -c "$KT_DIR/krexd.conf" -r "$KT_DIR/other" -o "cgroup_subtree=$KT_SUB"
	ok "... and the first krexd's participant is still in its cgroup" in_sub
else
	skip "a participant is in its cgroup under the subtree" "no cgroup freezer (needs root)"
	skip "a second krexd with the same cgroup_subtree is refused" "no cgroup freezer (needs root)"
	skip "... and the first krexd's participant is still in its cgroup" "no cgroup freezer (needs root)"
fi
krexd_stop
ok "SIGTERM: daemon gone, pid file removed" test ! -e "$KT_DIR/krexd.pid"

printf 'gpus = g0\nno_such_key = 1\n' >"$KT_DIR/bad.conf"
ok "unknown key rejected with file:line" fails_with "bad.conf:2: unknown key 'no_such_key'" \
	"$KREXD" -F -c "$KT_DIR/bad.conf" -r "$KT_DIR"
ok "bad -o value rejected" fails_with "bad value 'sometimes' for key 'freezer'" \
	"$KREXD" -F -c /dev/null -r "$KT_DIR" -o freezer=sometimes
ok "a missing -c file is an error" fails_with "no-such.conf" "$KREXD" -F -c "$KT_DIR/no-such.conf" -r "$KT_DIR"
ok "a daemon start-up error comes back through the pipe" fails_with "run dir" \
	"$KREXD" -c /dev/null -r /proc/krexd-cannot-be-here

ok "krexd -F starts with the test config" krexd_start -v
ok "the gate page publishes drain_timeout's default ($(drain_ms) ms)" test "$(drain_ms)" = 2000
printf 'gpus = g0\nfreezer = signal\nmax_region = 5s\ndrain_timeout = 7500ms\n' >"$KT_DIR/krexd.conf"
kill -HUP "$KREXD_PID"
ok "SIGHUP: a key that cannot change live is reported" log_has "'freezer' cannot change"
ok "SIGHUP: the others are applied" log_has "configuration reloaded"
ok "... drain_timeout published again ($(drain_ms) ms)" test "$(drain_ms)" = 7500
done_testing
