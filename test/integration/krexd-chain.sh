#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Chained regions (doc/design.md "Chained regions"): a region queued for a
# GPU is granted at the end of the one before without a thaw-freeze cycle
# and without a settle (a sibling's counter does not move from the first
# grant to the last end); the chain is cut after chain_max, and the siblings
# then run for chain_gap; a chain is no way around region_time_per_uid; an
# owner dying mid-chain or krexd stopping or killed mid-chain leaves nothing frozen;
# the isolation is redone for each owner and undone at the end.
# Every step waits on an event: a client's output, krexd's status or log.
# With the mock NVML (a GPU always at its clock), so that a region that
# enters on its own settles (the certificate's known bit 0x20) and a
# chained one does not.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

NVML_LIBS=$top_builddir/test/mock/nvml/.libs
[ -e "$NVML_LIBS/libnvidia-ml.so.1" ] || skip_all "mock NVML not built"

queued() { "$CLIENT" status | grep -c 'state=queued' | grep -qx "$1"; }
logged() { grep -qs "$1" "$KT_DIR/krexd.log"; }
held_by() { grep -qs "^granted" "$KT_DIR/$1.out"; }
ended() { grep -qs "^outcome=" "$KT_DIR/$1.out"; }
# owner NAME: a region on GPU 0 held until $KT_DIR/NAME.go exists
owner() { rm -f "$KT_DIR/$1.go"; kt_bg "$1" "$CLIENT" region --gpus 0 --hold-until "$KT_DIR/$1.go"; }
# holder: the sibling s counting, and owner h holding the GPU with s frozen
holder() {
	kt_participant s --gpus 0
	owner h
	wait_for 5 held_by h && wait_for 5 kt_stalled s
}
settled() { test $(($(kt_field "$KT_DIR/$1.out" known) & 32)) = "$2"; }
# ended_chained NAME N: NAME's region ended with chained = N
ended_chained() { ended "$1" && test "$(kt_field "$KT_DIR/$1.out" chained)" = "$2"; }
sib_free() { kt_progress s && none_stopped; }
both_gone() { kt_gone "$x" && kt_gone "$y"; }
cpus() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/"$1"/status 2>/dev/null; }
none_stopped() {
	for p in $KT_PIDS; do
		grep -qs '^State:.*T (stopped)' /proc/"$p"/status && return 1
	done
	return 0
}
restart() {
	krexd_stop
	kill -KILL $KT_PIDS 2>/dev/null
	wait $KT_PIDS 2>/dev/null
	KT_PIDS=
	rm -f "$KT_DIR"/*.go "$KT_DIR/krexd.log"
	krexd_start "$@"
}

kt_setup
export LD_LIBRARY_PATH=$NVML_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KREX_MOCK_NVML=$KT_DIR/nvml.txt
printf '%s\n' "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40" >"$KREX_MOCK_NVML"
kt_conf "gpus = 0" "log_level = debug"
plan 51

# 1. Two owners queued behind a holder: chained, the sibling never runs.
ok "krexd starts (chain_max 60s)" krexd_start -o chain_max=60s
holder
c1=$(kt_count s)
owner a
wait_for 5 queued 1
ch=$(cpus "$h") ca=$(cpus "$a") cs=$(cpus "$s")
kt_participant j --gpus 0
ok "a participant that joins during the region runs" kt_progress j
touch "$KT_DIR/h.go"
ok "the second owner is granted" wait_for 10 held_by a
ok "the participant that joined is frozen in the chained region" kt_stalled j
# Isolation: redone for the new owner, the old owner's undone (2 CPUs here:
# the owner keeps one, its siblings get the other).
now="h $(cpus "$h") a $(cpus "$a") s $(cpus "$s") j $(cpus "$j")"
if [ "$(nproc)" -lt 2 ]; then
	skip "isolation: first region" "one CPU: nothing to move siblings to"
	skip "isolation: chained" "one CPU: nothing to move siblings to"
else
	ok "first region: its owner on its own CPUs ($ch), the sibling moved off them ($cs)" \
		test -n "$ch" -a "$ch" != "$cs"
	ok "chained: the new owner on those CPUs, the old owner and the joiner moved off ($now)" \
		test "$(cpus "$a")/$(cpus "$h")/$(cpus "$j")" = "$ch/$cs/$cs"
fi
ok "chained: krexd says so" logged "chained to region .* (participant"
c2=$(kt_count s)
ok "the sibling did not run between the two regions ($c1 -> $c2)" test "$c1" = "$c2"
touch "$KT_DIR/a.go"
ok "the chained region ends" wait_for 5 ended a
ok "the first region's certificate (printed once its owner was thawed): not chained" wait_for 5 ended_chained h 0
ok "its certificate: chained = 1, clean" test "$(kt_field "$KT_DIR/a.out" chained)/$(kt_field "$KT_DIR/a.out" outcome)" = 1/clean
ok "the first region settled, the chained one did not" settled h 32 && settled a 0
ok "the chained region froze, before its grant, the sibling, the old owner and the one that joined" \
	test "$(kt_field "$KT_DIR/a.out" siblings)/$(kt_field "$KT_DIR/a.out" frozen)" = 3/3
ok "the sibling runs again after the chain" kt_progress s
ok "and every participant's CPUs are back ($(cpus $$))" test "$(cpus "$s")/$(cpus "$j")" = "$(cpus $$)/$(cpus $$)"

# 2. chain_max cut: the next region waits chain_gap, during which the sibling runs.
ok "krexd restarts (chain_max 1ms, chain_gap 1s)" restart -o chain_max=1ms -o chain_gap=1s
holder
owner a
wait_for 5 queued 1
c1=$(kt_count s)
touch "$KT_DIR/h.go"
ok "the chain is cut: krexd says so" wait_for 10 logged "chain cut after 0 chained"
ok "the next owner is granted after the gap" wait_for 10 held_by a
c2=$(kt_count s)
ok "the sibling ran in the gap ($c1 -> $c2)" test "$c2" -gt "$c1"
touch "$KT_DIR/a.go"
wait_for 5 ended a
ok "not chained; it waited at least chain_gap" test "$(kt_field "$KT_DIR/a.out" chained)" = 0 -a "$(kt_field "$KT_DIR/a.out" wait_us)" -ge 1000000

# 3. An owner dying mid-chain: the chain goes on to the next, then ends; nothing left frozen.
ok "krexd restarts (chain_max 60s)" restart -o chain_max=60s
holder
c1=$(kt_count s)
owner a
wait_for 5 queued 1
owner b
wait_for 5 queued 2
touch "$KT_DIR/h.go"
wait_for 10 held_by a
kill -KILL "$a"
ok "the owner that died: the next is granted, chained" wait_for 10 held_by b
ok "krexd chained past the dead owner" wait_for 5 logged "chained to region .* 3 in its chain"
ok "the sibling still did not run" test "$(kt_count s)" = "$c1"
touch "$KT_DIR/b.go"
ok "the last region ends: chained = 2" wait_for 5 ended_chained b 2
ok "the sibling runs again, nothing stopped" sib_free

# 4. krexd stopping mid-chain thaws everything.
owner h
wait_for 5 held_by h && wait_for 5 kt_stalled s
owner a
wait_for 5 queued 1
touch "$KT_DIR/h.go"
ok "mid-chain again" wait_for 10 held_by a
krexd_stop
ok "krexd stopped mid-chain: the sibling runs" kt_progress s
ok "and nothing is left stopped" none_stopped

# 4b. krexd killed (SIGKILL) mid-chain: the chain carried the sibling's and
# the old owner's freeze from one region to the next; the state file must
# say so, and a new krexd thaws them from it.
ok "krexd restarts (chain_max 60s)" restart -o chain_max=60s
holder
owner a
wait_for 5 queued 1
touch "$KT_DIR/h.go"
ok "mid-chain once more" wait_for 10 held_by a
ok "the state file lists the chained region's freeze" \
	grep -Eq '^(cgroup1|cgroup2|pid) ' "$KT_DIR/krexd.state"
kill -KILL "$KREXD_PID"
wait "$KREXD_PID" 2>/dev/null
KREXD_PID=
ok "krexd killed mid-chain: the sibling still stopped" kt_stalled s
ok "krexd starts again" krexd_start -o chain_max=60s
ok "the new krexd thawed the sibling" kt_progress s
ok "and the old owner: it runs again and ends" wait_for 10 kt_gone "$h"
ok "nothing is left stopped" none_stopped
ok "the state file emptied" test ! -s "$KT_DIR/krexd.state"

# 5. A chain is no way around region_time_per_uid (two participants of one uid).
if ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
	for i in 1 2 3 4 5; do skip "region_time_per_uid" "no user nobody or no setpriv"; done
else
	kt_conf "region_time_per_uid = 300ms"
	restart -o chain_max=60s
	u=$(id -u nobody)
	asu() { setpriv --reuid="$u" --regid="$(id -g nobody)" --clear-groups -- "$@"; }
	owner h
	wait_for 5 held_by h
	kt_bg x asu "$CLIENT" region --gpus 0 --count 5 --hold-ms 100
	kt_bg y asu "$CLIENT" region --gpus 0 --count 5 --hold-ms 100
	wait_for 5 queued 2
	touch "$KT_DIR/h.go"
	ok "both of the uid's loops stop" wait_for 20 both_gone
	ok "some of its regions were chained" sh -c "grep -h '^chained=' $KT_DIR/x.out $KT_DIR/y.out | grep -qv '=0'"
	# In grant order, each lease is at most what the uid had left when it
	# started: 300 ms less what its earlier regions held (1 us rounding each).
	cat "$KT_DIR/x.out" "$KT_DIR/y.out" | awk -F= '
		$1 == "region_id" { id = $2 } $1 == "lease_us" { l[id] = $2 } $1 == "held_us" { h[id] = $2 }
		END { for (i in l) print i, l[i], h[i] }' | sort -n >"$KT_DIR/leases"
	diag "the uid's regions (id lease_us held_us): $(tr '\n' ' ' <"$KT_DIR/leases")"
	ok "no lease of the uid's was more than it had left" awk '
		{ if ($2 > 300000 - used + NR) bad = 1; used += $3 } END { exit bad || NR < 2 }' "$KT_DIR/leases"
	ok "then the uid is refused (error 14, region_time_per_uid)" grep -qs 'error 14 .*region_time_per_uid' "$KT_DIR/x.out" "$KT_DIR/y.out"
	ok "nothing left stopped" none_stopped
fi

# 6. A sibling whose drain acknowledgement said its process was exiting
# (KREX_DRAIN_EXITING, 2) stays frozen through the chain, and the chained
# region judges it as the one before did: by whether its process is still
# on the GPU.  Not as a sibling frozen by KREX whose work was never drained
# (an H100 at 32 sessions: a clean region, then "participant N was
# suspended at entry (frozen by KREX for another region, 0 ms)" in the one
# chained to it; notebook/h200-session-34).
kt_conf "region_time_per_uid = 0"
restart -o chain_max=60s
kt_participant e --gpus 0 --ack-status 2
# chain_of NAME1 NAME2: NAME1 held, NAME2 queued, then chained and ended
chain_of() {
	owner "$1"
	wait_for 5 held_by "$1" || return 1
	owner "$2"
	wait_for 5 queued 1 || return 1
	touch "$KT_DIR/$1.go"
	wait_for 10 held_by "$2" || return 1
	touch "$KT_DIR/$2.go"
	wait_for 10 ended "$1" && wait_for 10 ended "$2"
}
field() { kt_field "$KT_DIR/$1.out" "$2"; }
ok "an exiting sibling off the GPU: two regions chained" chain_of e1 e2
ok "... the first clean" test "$(field e1 outcome)/$(field e1 note)" = clean/
ok "... the chained one clean too, no note (chained $(field e2 chained))" \
	test "$(field e2 chained)/$(field e2 outcome)/$(field e2 note)" = 1/clean/
ok "... krexd judged it in the chained region: it left the GPU" \
	logged "region $(field e2 region_id): participant [0-9]* was exiting at the drain and has left the GPU"
printf '%s\n' "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40 pids=$e" >"$KREX_MOCK_NVML"
ok "its process on the GPU: two regions chained" chain_of e3 e4
note='^note=participant [0-9]*: its process was exiting at the drain and its process '$e' is still on the GPU$'
ok "... the first degraded, the note says why" grep -qs "$note" "$KT_DIR/e3.out"
ok "... the chained one the same, not 'suspended at entry' (chained $(field e4 chained))" \
	sh -c "test '$(field e4 chained)/$(field e4 outcome)' = 1/degraded && grep -qs '$note' '$KT_DIR/e4.out'"
ok "nothing left stopped at the end" none_stopped
done_testing
