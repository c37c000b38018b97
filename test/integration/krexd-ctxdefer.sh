#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krexd.conf(5) ctx_defer against what a member's CTX_MAKING claims
# (doc/design.md "Contexts being made at a close"; the gate's own use is
# test/gate/context_defer.sh): a connection without a drain thread that
# sends one gets an error and krexd goes on; a member that says it makes
# contexts and never that it made them delays the next region on its GPU
# until its process is gone, or at most ctx_defer from its claim, and no
# region after that; the regions are clean; the metrics file counts the
# waits.  Waits on krexd's log, the clients' output and the metrics file,
# never on the pace of the test: the first krexd's bound is 10 min (the test
# hook KREX_TEST_CTX_DEFER_MS, HACKING.md "Flakes"), so that its region
# waits whenever it comes and its wait ends when the member is killed; the
# second krexd's bound is 100 ms, and a region that follows a region granted
# after the claim comes after the bound, whatever the load, and must not wait.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

kt_setup
MET=$KT_DIR/textfile/krex.prom
PROM="python3 $top_srcdir/test/integration/promcheck.py"
mkdir -p "$KT_DIR/textfile"
kt_conf "gpus = 0" "log_level = debug" "ctx_defer = 2s" "metrics_file = $MET"
logged() { grep -qs "$1" "$KT_DIR/krexd.log"; }
waits() { grep -c 'making GPU contexts: its gates close when they are made' "$KT_DIR/krexd.log"; }
val() { $PROM --value "$1" "$MET" 2>/dev/null; }
val_is() { [ "$(val "$1")" = "$2" ]; }
plan 23
export KREX_TEST_CTX_DEFER_MS=600000
ok "krexd starts (ctx_defer = 2s, its bound 10 min by the test hook)" krexd_start
unset KREX_TEST_CTX_DEFER_MS

"$CLIENT" participant --gpus 0 --ctx-making >"$KT_DIR/nm.out" 2>&1 &
NM=$!
KT_PIDS="$KT_PIDS $NM"
ok "CTX_MAKING from a connection without a drain thread: an error" \
	wait_for 10 grep -qs "ctx_making: error 7 CTX_MAKING from a connection without a drain thread" \
	"$KT_DIR/nm.out"
ok "... and krexd goes on" "$CLIENT" status
kill "$NM" 2>/dev/null

kt_participant m --gpus 0 --ack-drains --ctx-making
ok "a member says it makes contexts (and never that it made them)" \
	wait_for 10 grep -qs "ctx_making sent" "$KT_DIR/m.out"
wait_for 10 logged "CTX_MAKING"
kt_bg r1 "$CLIENT" region --gpus 0 --hold-ms 10
ok "the next region waits for the claim" wait_for 20 sh -c "test \"\$(grep -c 'making GPU contexts: its gates close when they are made' '$KT_DIR/krexd.log')\" = 1"
ok "... the bound the hook's (krexd said so)" logged "test hook KREX_TEST_CTX_DEFER_MS=600000: ctx_defer is 600000 ms"
ok "... not granted while it waits" sh -c "! grep -qs '^outcome=' '$KT_DIR/r1.out'"
kill "$m" 2>/dev/null
ok "the member killed: the region is granted" wait_for 20 grep -qs "^outcome=" "$KT_DIR/r1.out"
ok "... clean ($(kt_field "$KT_DIR/r1.out" outcome))" test "$(kt_field "$KT_DIR/r1.out" outcome)" = clean
ok "... krexd said its wait ended" logged "the contexts being made at its start are made"
ok "the metrics count one region that waited for contexts" \
	wait_for 10 val_is krex_region_ctx_defer_total 1
ok "... and its wait ($(val krex_region_ctx_defer_seconds_total) s)" \
	awk "BEGIN { exit !($(val krex_region_ctx_defer_seconds_total) > 0) }"

krexd_stop
rm -f "$MET"
W0=$(waits)
L0=$(($(wc -l <"$KT_DIR/krexd.log") + 1))
ok "krexd restarts with ctx_defer = 100ms, no hook" krexd_start -o ctx_defer=100ms
ok "... the hook off" sh -c "! tail -n +$L0 '$KT_DIR/krexd.log' | grep -q 'test hook KREX_TEST_CTX_DEFER_MS'"
kt_participant m2 --gpus 0 --ack-drains --ctx-making
ok "a member says it makes contexts (and never that it made them)" \
	wait_for 10 grep -qs "ctx_making sent" "$KT_DIR/m2.out"
wait_for 10 sh -c "tail -n +$L0 '$KT_DIR/krexd.log' | grep -q CTX_MAKING"
kt_bg r2 "$CLIENT" region --gpus 0 --hold-ms 10
ok "the next region is granted (at most the bound after the claim)" \
	wait_for 20 grep -qs "^outcome=" "$KT_DIR/r2.out"
ok "... clean ($(kt_field "$KT_DIR/r2.out" outcome))" test "$(kt_field "$KT_DIR/r2.out" outcome)" = clean
W1=$(waits)
diag "it waited for the claim: $((W1 - W0)) (0 when it came after the bound)"
kt_bg r3 "$CLIENT" region --gpus 0 --hold-ms 10
ok "a region after that is granted" wait_for 20 grep -qs "^outcome=" "$KT_DIR/r3.out"
ok "... clean ($(kt_field "$KT_DIR/r3.out" outcome))" test "$(kt_field "$KT_DIR/r3.out" outcome)" = clean
ok "... without waiting for the claim, older than ctx_defer" test "$(waits)" = "$W1"
ok "the metrics count both regions and the waits ($((W1 - W0)))" \
	wait_for 10 sh -c "$PROM --value 'krex_regions_total{outcome=\"clean\"}' '$MET' | grep -qx 2 &&
		$PROM --value krex_region_ctx_defer_total '$MET' | grep -qx $((W1 - W0))"
ok "the metrics file is valid Prometheus text" $PROM "$MET"
ok "the member of the claim is still there" kill -0 "$m2"
done_testing
