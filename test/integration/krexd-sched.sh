#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# sched_priority (krexd.conf(5)): krexd's main thread, its event loop, runs
# at SCHED_FIFO when sched_priority is 1-99 (default 0: normal) so that a region's entry does not wait
# for a CPU that busy siblings hold; its helper threads (the log writer,
# the signer) stay at normal scheduling; a reload changes it; 0 turns it
# off; where real-time priority is refused (libnort, a TEST DOUBLE, as the
# H200 machine's kernel refuses it) krexd runs at nice -20 and says so, its
# autogroup too when it leads its session; a
# krexd that may do neither (an unprivileged user's) runs normally and still
# serves regions.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

need_root
kt_setup
plan 17

# policy TID: "POLICY PRIORITY" of a thread of krexd (/proc stat fields 41, 40)
policy() { awk '{ sub(/^.*\) /, ""); print $39, $38 }' "/proc/$KREXD_PID/task/$1/stat" 2>/dev/null; }
others() { # the policies of krexd's threads but the main one
	for t in /proc/"$KREXD_PID"/task/*; do
		[ "${t##*/}" = "$KREXD_PID" ] || policy "${t##*/}"
	done
}
nice_of() { awk '{ sub(/^.*\) /, ""); print $17 }' "/proc/$KREXD_PID/task/$1/stat" 2>/dev/null; }
log_has() { wait_for 10 grep -qs "$1" "$KT_DIR/krexd.log"; }
autogroup_nice() { sed -n 's/.* nice //p' "/proc/$1/autogroup" 2>/dev/null; }

if ! chrt -f 1 true 2>/dev/null; then
	# e.g. a container without real-time CPU time: krexd must say so and run
	kt_conf "gpus = g0" "region_log = $KT_DIR/regions.log" "sched_priority = 1"
	ok "without real-time CPU time krexd starts" krexd_start
	ok "... and says it runs at nice -20 instead" log_has "real-time priority refused"
	ok "... its main thread at SCHED_OTHER, nice -20" test "$(policy "$KREXD_PID") $(nice_of "$KREXD_PID")" = "0 0 -20"
	skip 11 "this machine gives root no real-time priority (chrt -f 1 fails)"
	done_testing
	exit
fi

kt_conf "gpus = g0" "region_log = $KT_DIR/regions.log" "sched_priority = 1"
ok "krexd starts with sched_priority = 1" krexd_start
ok "its main thread runs at SCHED_FIFO priority 1 ($(policy "$KREXD_PID"))" test "$(policy "$KREXD_PID")" = "1 1"
ok "the start-up line says real-time" log_has "scheduling real-time"
"$CLIENT" region --gpus g0 --hold-ms 50 >/dev/null 2>&1 # the log writer's thread has work
ok "its helper threads stay at SCHED_OTHER ($(others | sort -u | tr '\n' ' '))" \
	sh -c "[ -n \"\$(ls /proc/$KREXD_PID/task | grep -vx $KREXD_PID)\" ] && ! grep -v '^0 0\$' <<EOF2
$(others)
EOF2"
printf 'gpus = g0\nregion_log = %s\nsched_priority = 0\n' "$KT_DIR/regions.log" >"$KT_DIR/krexd.conf"
kill -HUP "$KREXD_PID"
log_has "configuration reloaded"
ok "SIGHUP with sched_priority = 0: normal scheduling ($(policy "$KREXD_PID"))" test "$(policy "$KREXD_PID")" = "0 0"
printf 'gpus = g0\nregion_log = %s\nsched_priority = 7\n' "$KT_DIR/regions.log" >"$KT_DIR/krexd.conf"
: >"$KT_DIR/krexd.log"
kill -HUP "$KREXD_PID"
log_has "configuration reloaded"
ok "SIGHUP with sched_priority = 7: SCHED_FIFO 7 ($(policy "$KREXD_PID"))" test "$(policy "$KREXD_PID")" = "1 7"
ok "a region is served at real-time priority" sh -c "\"$CLIENT\" region --gpus g0 --hold-ms 20 >/dev/null"
krexd_stop
ok "sched_priority = 100 is refused with the range" sh -c \
	"! '$KREXD' -F -c /dev/null -r '$KT_DIR' -o sched_priority=100 2>'$KT_DIR/err' && grep -q 'real-time priority from 1 to 99' '$KT_DIR/err'"

# The default, 0: normal scheduling, nice 0.
: >"$KT_DIR/krexd.log"
printf 'gpus = g0\n' >"$KT_DIR/krexd.conf"
krexd_start
ok "by default the main thread runs normally ($(policy "$KREXD_PID"), nice $(nice_of "$KREXD_PID"))" \
	sh -c "[ '$(policy "$KREXD_PID") $(nice_of "$KREXD_PID")' = '0 0 0' ] && grep -q 'scheduling normal' '$KT_DIR/krexd.log'"
krexd_stop

# Real-time refused (the TEST DOUBLE): nice -20 for the main thread, its
# helpers at nice 0, normal again with sched_priority = 0 on a reload.
: >"$KT_DIR/krexd.log"
printf 'gpus = g0\nregion_log = %s\nsched_priority = 1\n' "$KT_DIR/regions.log" >"$KT_DIR/krexd.conf"
export LD_PRELOAD="$top_builddir/test/integration/.libs/libnort.so"
krexd_start
unset LD_PRELOAD
ok "real-time refused: krexd says so" log_has "real-time priority refused (Operation not permitted): running at nice -20"
"$CLIENT" region --gpus g0 --hold-ms 20 >/dev/null 2>&1
ok "... its main thread at SCHED_OTHER, nice $(nice_of "$KREXD_PID"); the start-up line says nice -20" \
	sh -c "[ '$(policy "$KREXD_PID")' = '0 0' ] && [ '$(nice_of "$KREXD_PID")' = -20 ] && grep -q 'scheduling nice -20' '$KT_DIR/krexd.log'"
ok "... its helper threads at nice 0 ($(for t in /proc/"$KREXD_PID"/task/*; do [ "${t##*/}" = "$KREXD_PID" ] || nice_of "${t##*/}"; done | sort -u | tr '\n' ' '))" \
	sh -c "! for t in /proc/$KREXD_PID/task/*; do [ \"\${t##*/}\" = $KREXD_PID ] || awk '{ sub(/^.*\\) /, \"\"); print \$17 }' \$t/stat; done | grep -vx 0"
printf 'gpus = g0\nregion_log = %s\nsched_priority = 0\n' "$KT_DIR/regions.log" >"$KT_DIR/krexd.conf"
kill -HUP "$KREXD_PID"
log_has "configuration reloaded"
ok "... a reload with sched_priority = 0: nice 0 ($(nice_of "$KREXD_PID"))" test "$(nice_of "$KREXD_PID")" = 0
ok "... its session's autogroup left alone: krexd does not lead it ($(autogroup_nice "$KREXD_PID") / ours $(autogroup_nice $$))" \
	test "$(autogroup_nice "$KREXD_PID")" = "$(autogroup_nice $$)"
krexd_stop

# The same krexd leading a session of its own (as in daemon mode): its
# autogroup, which the kernel weighs against the siblings' sessions, goes
# to nice -20 with it, and back to 0 on a reload to sched_priority = 0.
if [ -r /proc/self/autogroup ]; then
	: >"$KT_DIR/krexd.log"
	printf 'gpus = g0\nsched_priority = 1\n' >"$KT_DIR/krexd.conf"
	LD_PRELOAD="$top_builddir/test/integration/.libs/libnort.so" setsid "$KREXD" -F \
		-c "$KT_DIR/krexd.conf" -r "$KT_DIR" -o "cgroup_subtree=$KT_SUB" >>"$KT_DIR/krexd.log" 2>&1 &
	KREXD_PID=$!
	wait_for 5 "$CLIENT" status >/dev/null 2>&1
	ok "a session leader at nice -20: its autogroup at nice -20 too ($(cat /proc/$KREXD_PID/autogroup))" \
		test "$(autogroup_nice "$KREXD_PID")" = -20
	printf 'gpus = g0\nsched_priority = 0\n' >"$KT_DIR/krexd.conf"
	: >"$KT_DIR/krexd.log"
	kill -HUP "$KREXD_PID"
	log_has "configuration reloaded"
	ok "... back to 0 with a reload to sched_priority = 0 ($(cat /proc/$KREXD_PID/autogroup))" \
		test "$(autogroup_nice "$KREXD_PID")" = 0
	krexd_stop
else
	skip "no autogroup in this kernel (/proc/self/autogroup)"
	skip "no autogroup in this kernel"
fi

# An unprivileged krexd (a private krexd in embedded mode): normal scheduling, it works.
D=$(mktemp -d /tmp/krexd-sched-user.XXXXXX)
chmod 777 "$D"
runuser -u nobody -- "$KREXD" -F -c /dev/null -r "$D/run" -o gpus=g0 -o freezer=signal >"$D/log" 2>&1 &
UP=$!
wait_for 5 test -S "$D/run/krexd.sock"
ok "an unprivileged krexd runs at normal priority and serves a region ($(awk '{ sub(/^.*\) /, ""); print $39, $38 }' /proc/$UP/stat 2>/dev/null))" \
	sh -c "[ \"\$(awk '{ sub(/^.*\\) /, \"\"); print \$39, \$38 }' /proc/$UP/stat)\" = '0 0' ] &&
		runuser -u nobody -- env KREX_SOCKET='$D/run/krexd.sock' '$CLIENT' region --gpus g0 --hold-ms 20 >/dev/null"
kill -TERM "$UP" 2>/dev/null
wait "$UP" 2>/dev/null
rm -rf "$D"
done_testing
