#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Slow readers: 20 connections of an unprivileged user pipeline STATUS and
# never read.  Another client's STATUS is answered while they are connected,
# they are dropped (never waited for), and a held lease ends on time.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
at_setup
plan 5
kt_conf "gpus = g0" "max_region = 1s" "freezer = signal"
krexd_start

at_bg atk "$ATTACK" noread 20 12
wait_for 5 grep -qs connected= "$KT_DIR/atk.out"
sleep 0.5
worst=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	ms=$(at_ms "$CLIENT" status) || ms=99999
	[ "$ms" -gt "$worst" ] && worst=$ms
	sleep 0.1
done
diag "worst STATUS latency under the attack: $worst ms"
# (a krexd blocked on a non-reader would answer only once it dropped them,
# seconds later, or never: the 2 s bound tells that apart from a client slow
# to start on a loaded host, which 300 ms did not)
ok "STATUS answered within 2 s while 20 non-readers pipeline" test "$worst" -lt 2000
ok "the attack is still running (non-readers connected while we were answered)" kill -0 "$atk"

# a region with a 1 s lease that never ends: revoked on time under the attack
kt_bg reg "$CLIENT" region --gpus g0 --max-ms 500 --no-end
wait_for 5 grep -qs granted "$KT_DIR/reg.out"
t0=$(date +%s%N) # from the grant seen, not from the client's start
wait_for 10 sh -c "! '$CLIENT' status | grep -q 'state=held'"
t1=$(date +%s%N)
held=$(((t1 - t0) / 1000000))
diag "lease of 500 ms ended $held ms after the grant was seen"
ok "a 500 ms lease ends within 2 s of its grant under the attack" test "$held" -lt 2000

wait_for 20 grep -qs dropped= "$KT_DIR/atk.out"
diag "$(cat "$KT_DIR/atk.out" | tr '\n' ' ')"
dropped=$(sed -n 's/.*dropped=//p' "$KT_DIR/atk.out")
ok "krexd dropped the non-readers" test "${dropped:-0}" -gt 0
ok "krexd logged why" grep -qs "does not read its replies" "$KT_DIR/krexd.log"
done_testing
