#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# exit_wait (krexd.conf(5)), with the mock NVML (test/mock/mock_nvml.c, a
# TEST DOUBLE): a process that would make a region degraded (here: one
# that is no participant's) but is exiting still has its context on the GPU
# while the driver tears it down, and NVML lists it.  krexd holds the grant
# and lists again until it is gone (clean), at most exit_wait (then
# degraded, as before, and that process never makes a region wait again).
# A process that is not exiting, or exit_wait = 0, changes nothing.
#
# The exiting process is a zombie (state Z, PF_EXITING): a child that its
# parent never reaps.  The test holds krexd in the drain (a sibling that
# acknowledges only once a file exists) until the mock NVML has listed the
# processes (the mock's log says when), so that the list taken at the close
# has it; "gone from the GPU" is the mock's list without it, written before
# the sibling acknowledges: the list taken again after the freeze.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

kt_setup
kt_mock_nvml
ACK=$KT_DIR/ack

nvml() { printf '%s\n' "$@" >"$KT_DIR/nvml.tmp" && mv "$KT_DIR/nvml.tmp" "$KREX_MOCK_NVML"; }
field() { kt_field "$KT_DIR/$1.out" "$2"; }
lists() { grep -c '^procs_end' "$KREX_MOCK_NVML_LOG" 2>/dev/null || echo 0; }
log_has() { grep -qs "$1" "$KT_DIR/krexd.log"; }
reload() {
	local n
	n=$(grep -c 'configuration reloaded' "$KT_DIR/krexd.log")
	kt_conf "$@"
	kill -HUP "$KREXD_PID" &&
		wait_for 10 sh -c "[ \$(grep -c 'configuration reloaded' '$KT_DIR/krexd.log') -gt $n ]"
}

# zombie NAME: a child that exited and is never reaped; its pid in $NAME.
# Its parent is a Python process that never waits for children (a shell's
# `sleep 0 & ...; exec sleep` parent was seen to lose its zombie under load,
# and the exiting process the test lists was then no process at all).
zombie() {
	python3 -c 'import os, sys, time
pid = os.fork()
if pid == 0:
    os._exit(0)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % pid)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(3600)' "$KT_DIR/$1.pid" &
	KT_PIDS="$KT_PIDS $!"
	wait_for 10 test -s "$KT_DIR/$1.pid" || return 1
	eval "$1=\$(cat \"\$KT_DIR/\$1.pid\")"
	eval "wait_for 10 is_zombie \$$1"
}
is_zombie() { grep -qs '^[0-9]* ([^)]*) Z ' "/proc/$1/stat"; }
zombies_and_live() { [ -n "$LIVE" ] && is_zombie "$Z1" && is_zombie "$Z2" && kill -0 "$LIVE"; }

# held NAME: a region in the background, its drain held until the mock
# NVML listed the processes; then the sibling acknowledges.
held_start() {
	rm -f "$ACK"
	N0=$(lists)
	kt_bg "$1" "$CLIENT" region --gpus 0 --hold-ms 10
	wait_for 20 sh -c "[ \$(grep -c '^procs_end' '$KREX_MOCK_NVML_LOG' 2>/dev/null) -gt $N0 ]"
}
held_end() {
	touch "$ACK"
	wait_for 20 grep -qs '^outcome=' "$KT_DIR/$1.out"
}
# A check that a region did not wait greps for exit_wait's lines only (" are
# exiting", "exiting process(es)", "for exiting processes"), not for a
# freeze's laggard line ("..., 0 exiting; ...") that a loaded machine prints.

zombie Z1
zombie Z2
sleep 600 &
LIVE=$!
KT_PIDS="$KT_PIDS $LIVE"

nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40"
kt_conf "gpus = 0" "log_level = debug" "exit_wait = 2s"
plan 23
ok "two zombies (exiting processes) and a live process for the mock's list" \
	zombies_and_live
ok "krexd starts with the mock NVML" krexd_start
ok "a sibling whose acks wait for a file" kt_participant s --ack-after "$ACK"

# 1. An exiting process leaves the GPU while the grant waits: clean.
nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40 pids=$Z1"
held_start r1 # the list at the close has it
nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40" # its teardown is done
held_end r1
ok "an exiting foreign process: krexd's log says the grant waited for it" \
	log_has "region $(field r1 region_id): 1 process(es) on its GPUs would make it degraded and are exiting (pid $Z1)"
ok "once it left the GPU: clean, no foreign process, no note" \
	test "$(field r1 outcome)/$(field r1 foreign)/$(field r1 note)" = clean/0/
ok "... krexd listed again after the freeze and says it waited" \
	log_has "region $(field r1 region_id): waited [0-9]* us after the freeze for exiting processes to leave its GPUs ([0-9]* lists): gone"

# 2. It stays past exit_wait: degraded as before, and not waited for again.
reload "exit_wait = 100ms"
nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40 pids=$Z1"
held_start r2
held_end r2
ok "still listed after exit_wait: degraded, 1 foreign process" \
	test "$(field r2 outcome)/$(field r2 foreign)" = degraded/1
ok "... the note says why" grep -qs '^note=1 process(es) on the GPU are not participants$' "$KT_DIR/r2.out"
ok "... krexd's log says it waited exit_wait and will not again" \
	log_has "region $(field r2 region_id): 1 exiting process(es) still on its GPUs after exit_wait (100 ms, [0-9]* lists; pid $Z1): judged as they are, not waited for again"
ok "... the wait is in settle_us (at least exit_wait)" test "$(field r2 settle_us)" -ge 100000
held_start r3
held_end r3
ok "the next region with the same process: degraded at once, no wait ($(field r3 outcome)/$(field r3 foreign), region $(field r3 region_id))" sh -c "
	test '$(field r3 outcome)/$(field r3 foreign)' = degraded/1 &&
	! grep -qsE 'region $(field r3 region_id): (.* are exiting|.*exiting process)' '$KT_DIR/krexd.log'"

# 3. A live process that is no participant's: no wait (as before).
nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40 pids=$LIVE"
held_start r4
held_end r4
ok "a live foreign process: degraded, and the grant did not wait ($(field r4 outcome)/$(field r4 foreign), region $(field r4 region_id))" sh -c "
	test '$(field r4 outcome)/$(field r4 foreign)' = degraded/1 &&
	! grep -qsE 'region $(field r4 region_id): (.* are exiting|.*exiting process)' '$KT_DIR/krexd.log'"

# 4. exit_wait = 0: no wait.
reload "exit_wait = 0"
nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40 pids=$Z2"
held_start r5
held_end r5
ok "exit_wait = 0: an exiting process makes the region degraded at once" sh -c "
	test '$(field r5 outcome)/$(field r5 foreign)' = degraded/1 &&
	! grep -qsE 'region $(field r5 region_id): (.* are exiting|.*exiting process)' '$KT_DIR/krexd.log'"

# 5. A sibling whose drain ack says its GPU runtime was shutting down
# (KREX_DRAIN_EXITING, 2: its process exits): krexd lists the processes
# again after the freeze and judges on whether that sibling is still there.
reload "exit_wait = 2s"
touch "$ACK"
ok "a sibling that acknowledges drains with status 2 (exiting)" kt_participant e --ack-status 2
nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40"
held_start x1
held_end x1
ok "an exiting sibling no longer on the GPU: clean, no note" \
	test "$(field x1 outcome)/$(field x1 note)" = clean/
ok "... krexd listed again and says it left the GPU" sh -c "
	grep -qs 'region $(field x1 region_id): a sibling.s process was exiting at its drain: the processes are listed again' '$KT_DIR/krexd.log' &&
	grep -qs 'region $(field x1 region_id): participant [0-9]* was exiting at the drain and has left the GPU' '$KT_DIR/krexd.log'"
nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40 pids=$e"
held_start x2
held_end x2
ok "an exiting sibling still on the GPU: degraded, the note says so" sh -c "
	test '$(field x2 outcome)' = degraded &&
	grep -qs '^note=participant [0-9]*: its process was exiting at the drain and its process $e is still on the GPU$' '$KT_DIR/x2.out'"
reload "exit_wait = 0"
held_start x3
held_end x3
ok "exit_wait = 0: judged on the list taken at the close (the same)" sh -c "
	test '$(field x3 outcome)' = degraded &&
	grep -qs '^note=participant [0-9]*: its process was exiting at the drain and its process $e is still on the GPU$' '$KT_DIR/x3.out'"

# 6. The same without the process-list thread (the list taken on krexd's
# loop: KREXD_PROCS_INLINE), the wait ending when it leaves.
krexd_stop
kill "$s" "$e" 2>/dev/null
kt_conf "exit_wait = 2s" "region_log = $KT_DIR/regions.jsonl"
export KREXD_PROCS_INLINE=1
ok "krexd starts again, listing on its loop" krexd_start
unset KREXD_PROCS_INLINE
kt_participant s2 --ack-after "$ACK"
ok "the second zombie is still one (pid $Z2)" is_zombie "$Z2"
nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40 pids=$Z2"
held_start r6
nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40"
held_end r6
ok "on the loop too: the grant waited for the exiting process" \
	log_has "region $(field r6 region_id): 1 process(es) on its GPUs would make it degraded and are exiting (pid $Z2)"
ok "... and the region is clean once it left ($(field r6 outcome)/$(field r6 foreign)/$(field r6 note))" \
	test "$(field r6 outcome)/$(field r6 foreign)/$(field r6 note)" = clean/0/

# 7. A region whose owner leaves before the grant (here: in the drain):
# its record says why it is degraded.
held_start r7
kill "$r7"
ok "an owner gone before the grant: the region log says 'ended before the grant (its owner left)'" \
	wait_for 20 grep -qs '"outcome":"degraded".*"note":"ended before the grant (its owner left)"' "$KT_DIR/regions.jsonl"
touch "$ACK"
