#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krexd_undo.sh - undo that cannot silently fail, end to end with a real
# krexd (cgroup v1 freezer and cpuset, root):
#   - the first cpuset undo write and the first thaw write are dropped
#     (KREX_TEST_UNDO_FAULTS=1, KREX_TEST_THAW_FAULTS=1: as if they never
#     reached the kernel); krexd reads them back, says so once naming the
#     participant, degrades the certificate with a note, and retries until
#     the sibling is thawed and back on its cores, its state lines kept
#     until then;
#   - a participant of another GPU (not a sibling) is never moved;
#   - a state file that cannot be written refuses the freeze (noted);
#   - a region that starts while an undo is retried is not isolated
#     (KREX_TEST_UNDO_HOLD holds the retries pending until the test is done);
#   - a region without siblings does its isolation before the freeze
#     phase, which then measures the freeze only (drain_us covers the
#     isolation, freeze_us does not).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/topology/krexd-topo-lib.sh"

need_isolation_host freezer

frz() { cat "/sys/fs/cgroup/freezer$(sed -n 's/^[0-9]*:freezer://p' "/proc/$1/cgroup")/freezer.state"; }
same() { [ "$1" = "$2" ] || { diag "got '$1', want '$2'"; return 1; }; }
state_lines() { cat "$KT_DIR/krexd.state" 2>/dev/null | grep -c .; }

kt_setup
kt_conf "gpus = g0,g1,g2" "freezer = cgroup1"
plan 18
KREX_TEST_UNDO_FAULTS=1 KREX_TEST_THAW_FAULTS=1 ok "krexd starts with one dropped undo and one dropped thaw" krexd_start
kt_participant sib --gpus g0 --ack-drains
kt_participant far --gpus g1 --ack-drains
sib_id=$(sed -n 's/^registered //p' "$KT_DIR/sib.out")
before=$(cg_cpus "$sib")
far_before="$(cg_cpus "$far") $(cpus_of "$far")"
kt_bg own "$CLIENT" region --gpus g0 --hold-ms 600
ok "region granted" wait_for 5 grep -qs granted "$KT_DIR/own.out"
ok "sibling moved off the owner's cores" test "$(cg_cpus "$sib")" != "$before"
ok "participant of another GPU not moved" same "$(cg_cpus "$far") $(cpus_of "$far")" "$far_before"
ok "region ends" wait_for 10 kt_gone "$own"
outcome=$(kt_field "$KT_DIR/own.out" outcome)
note=$(kt_field "$KT_DIR/own.out" note)
diag "certificate: outcome $outcome, note: $note"
ok "certificate degraded" same "$outcome" degraded
ok "note names the participant's failed undo" \
	sh -c "echo '$note' | grep -q 'participant [0-9]*: undo of its CPU isolation failed'"
ok "note names the participant's failed thaw" \
	sh -c "echo '$note' | grep -q 'participant $sib_id: thaw failed'"
ok "retried: sibling thawed" wait_for 5 sh -c "[ \"\$(cat /sys/fs/cgroup/freezer$(sed -n 's/^[0-9]*:freezer://p' "/proc/$sib/cgroup")/freezer.state)\" = THAWED ]"
ok "retried: sibling's cpuset back" wait_for 5 sh -c "[ \"\$(cat /sys/fs/cgroup/cpuset\$(cat /proc/$sib/cpuset)/cpuset.cpus)\" = '$before' ]"
ok "sibling runs again" kt_progress sib
ok "state file empty once the retries succeeded" wait_for 5 test "$(state_lines)" = 0
ok "each failure logged once, naming the participant, and its retry" \
	test "$(grep -c "participant [0-9]*.*undo.*failed" "$KT_DIR/krexd.log")" = 1 -a \
	"$(grep -c "participant $sib_id.*thaw.*failed" "$KT_DIR/krexd.log")" = 1 -a \
	"$(grep -c "undone on retry" "$KT_DIR/krexd.log")" -ge 2
# No siblings: the isolation still runs (after the freeze phase, which has
# nothing to do; krexd_isolate_new.sh shows a draining sibling is not yet
# narrowed) and is counted on its own.
kt_bg lone "$CLIENT" region --gpus g2 --hold-ms 10
wait_for 10 kt_gone "$lone"
d=$(kt_field "$KT_DIR/lone.out" drain_us)
f=$(kt_field "$KT_DIR/lone.out" freeze_us)
i=$(kt_field "$KT_DIR/lone.out" isolate_us)
diag "no siblings: drain_us $d, isolate_us $i, freeze_us $f"
ok "no siblings: the isolation ran and is counted in isolate_us" test "${i:-0}" -gt 0
# The state file cannot be written (its temp file's name taken by a directory):
# the sibling is not frozen without a record, and the certificate says so.
mkdir "$KT_DIR/krexd.state.tmp"
kt_bg own3 "$CLIENT" region --gpus g0 --hold-ms 800
granted_runs() { wait_for 5 grep -qs granted "$KT_DIR/own3.out" && kt_progress sib; }
ok "state file unwritable: region granted, the sibling not frozen" granted_runs
wait_for 10 kt_gone "$own3"
note=$(kt_field "$KT_DIR/own3.out" note)
diag "certificate: $(kt_field "$KT_DIR/own3.out" outcome), note: $note"
ok "state file unwritable: certificate degraded, saying why" \
	sh -c "[ '$(kt_field "$KT_DIR/own3.out" outcome)' = degraded ] && echo '$note' | grep -q 'participant $sib_id not frozen: state file not written'"
rmdir "$KT_DIR/krexd.state.tmp"
krexd_stop
# An undo still being retried when the next region starts: that region is not
# isolated on top of it (its undo lines would record the isolation's values).
# The retries are held pending by a file (KREX_TEST_UNDO_HOLD: every undo write
# is dropped while it exists) until the next region has ended, whatever the
# host's load; removing it lets the next retry succeed.
: >"$KT_DIR/undo.hold"
KREX_TEST_UNDO_HOLD=$KT_DIR/undo.hold krexd_start
# (a sibling of this krexd, whose cpuset undo stays pending: the owner's own
# line is settled as soon as the owner exits and its cgroup goes)
kt_participant sib2 --gpus g0 --ack-drains
before2=$(cg_cpus "$sib2")
kt_bg a "$CLIENT" region --gpus g0 --hold-ms 100
wait_for 10 kt_gone "$a"
diag "first region: $(kt_field "$KT_DIR/a.out" outcome), note: $(kt_field "$KT_DIR/a.out" note)"
kt_bg b "$CLIENT" region --gpus g0 --hold-ms 100
wait_for 10 kt_gone "$b"
note=$(kt_field "$KT_DIR/b.out" note)
diag "next region: $(kt_field "$KT_DIR/b.out" outcome), moved $(kt_field "$KT_DIR/b.out" moved), note: $note"
ok "the next region is not isolated while an undo is retried, and says so" \
	sh -c "echo '$note' | grep -q 'isolation skipped: an earlier undo is still being retried'"
rm -f "$KT_DIR/undo.hold"
# (the retries back off to 5 s apart: 20 s is a guard against a hang only)
ok "then the retries finish: sibling's cpuset back, state file empty" \
	wait_for 20 sh -c "[ \"\$(cat /sys/fs/cgroup/cpuset\$(cat /proc/$sib2/cpuset)/cpuset.cpus)\" = '$before2' ] && [ \"\$(cat '$KT_DIR/krexd.state' | grep -c .)\" = 0 ]"
krexd_stop
[ -s "$KT_DIR/krexd.log" ] && sed 's/^/# krexd: /' "$KT_DIR/krexd.log" | grep -i "undo\|thaw\|retry" | head -20
done_testing
