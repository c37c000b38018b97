#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# libregion keeps its connection to krexd open between a process's regions
# (libregion/region.c): a region on a fresh connection wakes krexd at the
# connect, before the request is written.  The kept connection is used again
# only while it is good: after a krexd restart, a fork, an application that
# closed the fd and reused its number, another KREX_SOCKET, or krexd closing
# it for room (conn.c: at max_conns_per_uid, and node-wide when krexd is
# short of fds), the next region connects afresh, and nothing of the
# application's is touched.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

KC=$top_builddir/test/integration/krex-keepconn
kt_setup
kt_conf "gpus = g0" "freezer = signal" "log_level = debug" "max_conns_per_uid = 2"
export KREX_GPUS=g0
plan 30
ok "krexd starts" krexd_start

# conns PID: connections krexd accepted from PID
conns() { grep -c "connection [0-9]* from pid $1 " "$KT_DIR/krexd.log"; }

kt_bg a "$KC" region region region
wait "$a"
ok "three regions in one process" test "$(grep -c '^region [0-9]* ' "$KT_DIR/a.out")" = 3
ok "on one connection" test "$(conns "$a")" = 1

kt_bg s "$KC" signed signed
wait "$s"
ok "two signed ends on one connection" \
	test "$(grep -c '^signed [0-9]* ' "$KT_DIR/s.out")" = 2 -a "$(conns "$s")" = 1

# krexd restarts between two regions: the second connects to the new krexd
kt_bg r "$KC" region mark "$KT_DIR/r1" wait "$KT_DIR/r2" region
ok "first region before the restart" wait_for 20 test -e "$KT_DIR/r1"
krexd_stop
ok "krexd restarts" krexd_start
touch "$KT_DIR/r2"
wait "$r"
ok "the region after the restart is granted" test "$(grep -c '^region [0-9]* ' "$KT_DIR/r.out")" = 2
ok "on a fresh connection" test "$(conns "$r")" = 2

# fork: the child never writes on its parent's connection
kt_bg f "$KC" region fork region
wait "$f"
ok "the forked child's region is granted" grep -q '^childregion [0-9]* ' "$KT_DIR/f.out"
ok "the parent's next region too" test "$(grep -c '^region [0-9]* ' "$KT_DIR/f.out")" = 2
ok "the parent kept its connection" test "$(conns "$f")" = 1
child=$(sed -n 's/^child 0 //p' "$KT_DIR/f.out")
ok "the child had its own" test -n "$child" -a "$(conns "$child")" = 1

# the application closes the kept fd and puts its own file on the number
kt_bg c "$KC" region clobber region check
wait "$c"
ok "a socket fd was taken over" grep -q '^clobbered [1-9]' "$KT_DIR/c.out"
ok "the region after it is granted" test "$(grep -c '^region [0-9]* ' "$KT_DIR/c.out")" = 2
ok "the application's file is left alone" grep -q '^clobber kept' "$KT_DIR/c.out"
ok "a fresh connection was made" test "$(conns "$c")" = 2

# another KREX_SOCKET: the next region goes to that krexd
mkdir "$KT_DIR/b"
"$KREXD" -F -c "$KT_DIR/krexd.conf" -r "$KT_DIR/b" -o "cgroup_subtree=$KT_SUB/b" \
	>>"$KT_DIR/b.log" 2>&1 &
B=$!
KT_PIDS="$KT_PIDS $B"
ok "a second krexd starts" wait_for 5 "$CLIENT" -s "$KT_DIR/b/krexd.sock" status
kt_bg o "$KC" region socket "$KT_DIR/b/krexd.sock" region
wait "$o"
ok "the region after a change of KREX_SOCKET goes to the other krexd" \
	grep -qs "connection [0-9]* from pid $o " "$KT_DIR/b.log"
kill -TERM "$B"
wait "$B" 2>/dev/null

# krexd gone between regions, unprotected regions allowed: the kept
# connection's EOF is seen and the region runs unprotected
kt_bg u env KREX_UNPROTECTED=1 "$KC" region mark "$KT_DIR/u1" wait "$KT_DIR/u2" region
ok "first region before krexd stops" wait_for 20 test -e "$KT_DIR/u1"
krexd_stop
touch "$KT_DIR/u2"
wait "$u"
ok "the next one runs unprotected" grep -q '^region 0 unprotected' "$KT_DIR/u.out"
ok "krexd starts again" krexd_start

# max_conns_per_uid = 2: idle kept connections of the uid are closed for room
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 777 "$KT_DIR"
	as() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	kt_bg x as "$KC" region mark "$KT_DIR/x1" wait "$KT_DIR/x2" region
	kt_bg y as "$KC" region mark "$KT_DIR/y1" wait "$KT_DIR/y2" region
	wait_for 20 test -e "$KT_DIR/x1" -a -e "$KT_DIR/y1"
	kt_bg z as "$KC" region
	wait "$z"
	ok "a third process of the uid gets its region" grep -q '^region [0-9]* ' "$KT_DIR/z.out"
	ok "an idle kept connection was closed for room" \
		grep -q "idle between regions, closed for room" "$KT_DIR/krexd.log"
	touch "$KT_DIR/x2" "$KT_DIR/y2"
	wait "$x"
	wait "$y"
	ok "both earlier processes get their next region" \
		test "$(cat "$KT_DIR/x.out" "$KT_DIR/y.out" | grep -c '^region [0-9]* ')" = 4
else
	skip "a third process of the uid gets its region" "needs root and setpriv"
	skip "an idle kept connection was closed for room" "needs root and setpriv"
	skip "both earlier processes get their next region" "needs root and setpriv"
fi
ok "krexd is still running" kill -0 "$KREXD_PID"

# krexd short of fds (reserve_fds within a few of the lowest free fd): the
# oldest idle kept connection of any uid is closed for room before a user's
# connection is refused (conn.c, the node-wide case).  Six processes of one
# uid, one after another, each a region and then idle; then each its second
# region, one after another: no connection is ever refused.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# lowest_free PID: the lowest fd number PID has not open
	lowest_free() {
		ls "/proc/$1/fd" | sort -n | awk 'BEGIN { n = 0 } $1 == n { n++ } END { print n }'
	}
	krexd_stop
	# what krexd logs from here on (krexd.log is appended to across restarts)
	since() { tail -n "+$(($(cat "$KT_DIR/log.base") + 1))" "$KT_DIR/krexd.log"; }
	wc -l <"$KT_DIR/krexd.log" >"$KT_DIR/log.base"
	krexd_start -o max_conns_per_uid=64
	lim=$(awk '/^Max open files/ { print $4 }' "/proc/$KREXD_PID/limits")
	free=$(lowest_free "$KREXD_PID")
	krexd_stop
	# users' connections stop at fd free + 3: room for about three
	res=$((lim - free - 3))
	diag "krexd's fd limit $lim, lowest free fd $free: reserve_fds = $res"
	if [ "$res" -ge 16 ] && [ "$res" -le 65536 ] &&
		krexd_start -o max_conns_per_uid=64 -o "reserve_fds=$res"; then
		for i in 1 2 3 4 5 6; do
			kt_bg "n$i" as "$KC" region mark "$KT_DIR/n$i.1" wait "$KT_DIR/n$i.2" region
			wait_for 20 test -e "$KT_DIR/n$i.1" || break
		done
		ok "six processes of one uid get a region, with room for about three connections" \
			test "$(cat "$KT_DIR"/n[1-6].out | grep -c '^region [0-9]* ')" = 6
		since >"$KT_DIR/nw.log"
		ok "idle kept connections of the node were closed for room" \
			grep -q "idle between regions, closed for room" "$KT_DIR/nw.log"
		for i in 1 2 3 4 5 6; do
			touch "$KT_DIR/n$i.2"
			eval "wait \$n$i"
		done
		ok "each gets its second region on a fresh connection" \
			test "$(cat "$KT_DIR"/n[1-6].out | grep -c '^region [0-9]* ')" = 12
		since >"$KT_DIR/nw.log"
		ok "no connection was refused" sh -c "! grep -q 'connection refused' '$KT_DIR/nw.log'"
	else
		for t in 1 2 3 4; do skip "node-wide eviction $t" "krexd did not start with reserve_fds=$res"; done
	fi
else
	for t in 1 2 3 4; do skip "node-wide eviction $t" "needs root and setpriv"; done
fi
ok "krexd is still running" kill -0 "$KREXD_PID"
