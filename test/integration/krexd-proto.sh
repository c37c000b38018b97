#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Malformed input gets a PROTO_ERROR and the connection closed while krexd
# stays up; a process acting for another pid or user is refused (KREX_EPERM).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

# raw MODE EXPECT: the answer names EXPECT and the connection is closed.
raw() {
	"$CLIENT" raw "$1" >"$KT_DIR/raw.out" 2>&1
	grep -q "$2" "$KT_DIR/raw.out" && grep -q '^closed' "$KT_DIR/raw.out"
}
alive() { kill -0 "$KREXD_PID" && "$CLIENT" status >/dev/null; }
as_nobody() { runuser -u nobody -- "$@"; }
refused() { "$@" >"$KT_DIR/perm.out" 2>&1; grep -q '^error 3 ' "$KT_DIR/perm.out"; }

kt_setup
kt_conf "gpus = g0"
plan 16
ok "krexd starts" krexd_start
ok "bad magic: error, closed" raw badmagic "bad magic"
ok "bad version: EVERSION, closed" raw badversion "^error 13 "
ok "bad type: error, closed" raw badtype "unknown message type"
ok "length over the limit: error, closed" raw toolong "over the limit"
ok "payload shorter than its fields: error, closed" raw short "malformed payload"
ok "trailing bytes: error, closed" raw long "malformed payload"
ok "a type only krexd sends: error, closed" raw reply "not accepted"
ok "a message that stalls past the I/O timeout: error, closed" raw stall "I/O timeout"
ok "krexd is still up and answers" alive

if [ "$(id -u)" = 0 ] && runuser -u nobody -- true 2>/dev/null; then
	sleep 1000 &
	other=$!
	KT_PIDS="$KT_PIDS $other"
	ok "a user registering another pid: EPERM" refused as_nobody "$CLIENT" as-pid $other
	as_root() { "$CLIENT" as-pid "$1" >/dev/null; }
	ok "root may register another pid" as_root $other
	kt_bg held "$CLIENT" region --gpus g0 --no-end
	wait_for 5 grep -qs granted "$KT_DIR/held.out"
	id=$(sed -n 's/^granted //p' "$KT_DIR/held.out")
	ok "another user releasing root's region: EPERM" refused as_nobody "$CLIENT" release "$id"
	ok "krexd is still up" alive
else
	for t in 1 2 3 4; do skip "acting for another pid" "needs root and a 'nobody' user"; done
fi

# A participant cgroup that holds krexd itself is refused (it would freeze krexd).
cg=/sys/fs/cgroup/freezer/$KT_SUB-krexd
if [ "$(id -u)" = 0 ] && grep -qs freezer /proc/self/cgroup && mkdir -p "$cg" 2>/dev/null; then
	old=$(sed -n 's/^[0-9]*:freezer://p' /proc/$KREXD_PID/cgroup)
	echo "$KREXD_PID" >"$cg/cgroup.procs"
	sleep 1000 &
	third=$!
	KT_PIDS="$KT_PIDS $third"
	ok "a cgroup holding krexd is refused" refused "$CLIENT" as-pid $third "/$KT_SUB-krexd"
	echo "$KREXD_PID" >"/sys/fs/cgroup/freezer$old/cgroup.procs"
	rmdir "$cg"
	ok "krexd is still up" alive
else
	skip "a cgroup holding krexd is refused" "needs root and the v1 freezer"
	skip "krexd is still up" "needs root and the v1 freezer"
fi
done_testing
