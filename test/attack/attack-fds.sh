#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fd exhaustion: krexd started with a hard RLIMIT_NOFILE of 1024 (a unit
# without LimitNOFILE), an unprivileged user opens 1100 connections.  krexd
# keeps reserve_fds free, refuses the rest with an error, does not spin or
# flood its log, root is still answered, and a region still freezes and
# thaws its sibling.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
at_setup
command -v prlimit >/dev/null || skip_all "prlimit (util-linux) not found"
plan 6
kt_conf "gpus = g0" "freezer = signal" "max_conns_per_uid = 2000"
# start again under the limit from the first instruction
prlimit --nofile=1024:1024 "$KREXD" -F -c "$KT_DIR/krexd.conf" -r "$KT_DIR" -o "cgroup_subtree=$KT_SUB" \
	>>"$KT_DIR/krexd.log" 2>&1 &
KREXD_PID=$!
wait_for 5 "$CLIENT" status >/dev/null 2>&1
kt_participant sib --gpus g0 --ack-drains
lines0=$(wc -l <"$KT_DIR/krexd.log")
cpu0=$(awk '{print $14 + $15}' "/proc/$KREXD_PID/stat")

at_bg atk "$ATTACK" conns 1100 4
wait_for 20 grep -qs open= "$KT_DIR/atk.out"
# Answered while the attacker still holds its connections (it writes
# closed_by_krexd= when it lets go): tried again until then, since under a
# sanitizer krexd may still be refusing the attacker's backlog at the first
# try (a flake seen in .ci/run's sanitize step).
answered_during() { "$CLIENT" status >/dev/null 2>&1 && ! grep -qs closed_by_krexd= "$KT_DIR/atk.out"; }
ok "root is answered during the attack" wait_for 3 answered_during
"$CLIENT" region --gpus g0 --hold-ms 200 >"$KT_DIR/reg.out" 2>&1
diag "$(grep -E 'outcome|frozen' "$KT_DIR/reg.out" | tr '\n' ' ')"
ok "a region freezes and thaws its sibling during the attack" grep -qs 'outcome=clean' "$KT_DIR/reg.out"
ok "the sibling runs again" kt_progress sib
wait_for 20 grep -qs closed_by_krexd= "$KT_DIR/atk.out"
diag "$(tr '\n' ' ' <"$KT_DIR/atk.out") fds $(at_fds "$KREXD_PID")"
closed=$(sed -n 's/^closed_by_krexd=//p' "$KT_DIR/atk.out")
ok "connections past the fd reserve are refused" test "${closed:-0}" -gt 200
cpu1=$(awk '{print $14 + $15}' "/proc/$KREXD_PID/stat")
lines1=$(wc -l <"$KT_DIR/krexd.log")
diag "krexd CPU $((cpu1 - cpu0)) ticks, $((lines1 - lines0)) log lines during the attack"
ok "krexd did not spin (< 2 s of CPU)" test $((cpu1 - cpu0)) -lt 200
ok "krexd did not flood its log (< 50 lines)" test $((lines1 - lines0)) -lt 50
done_testing
