#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krexd.conf(5) ctx_defer against what a member's CTX_MAKING claims
# (doc/design.md "Contexts being made at a close"; the gate's own use is
# test/gate/context_defer.sh): a connection without a drain thread that
# sends one gets an error and krexd goes on; a member that says it makes
# contexts and never that it made them delays the next region on its GPU
# at most ctx_defer from its claim, and no region after that; the region is
# clean; the metrics file counts the one wait.  Waits on krexd's log, the
# clients' output and the metrics file.  The first region's request must
# come within ctx_defer of the claim: ctx_defer is 2 s, its bound 10 s here
# (the test hook KREX_TEST_CTX_DEFER_MS, HACKING.md "Flakes"), ten times
# a client's start on a loaded machine, and the region then waits out those
# 10 s (context_defer.sh's first case failed when its 2 s were the bound).
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
plan 14
export KREX_TEST_CTX_DEFER_MS=10000
ok "krexd starts (ctx_defer = 2s, its bound 10 s by the test hook)" krexd_start

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
ok "the next region is granted" wait_for 20 grep -qs "^outcome=" "$KT_DIR/r1.out"
ok "... clean ($(kt_field "$KT_DIR/r1.out" outcome))" test "$(kt_field "$KT_DIR/r1.out" outcome)" = clean
ok "... after waiting for the claim (wait_us $(kt_field "$KT_DIR/r1.out" wait_us))" \
	test "$(waits)" = 1
ok "... the bound the hook's (krexd said so)" logged "test hook KREX_TEST_CTX_DEFER_MS=10000: ctx_defer is 10000 ms"
ok "the metrics count one region that waited for contexts" \
	wait_for 10 val_is krex_region_ctx_defer_total 1
ok "... and its wait ($(val krex_region_ctx_defer_seconds_total) s)" \
	awk "BEGIN { exit !($(val krex_region_ctx_defer_seconds_total) > 0) }"
kt_bg r2 "$CLIENT" region --gpus 0 --hold-ms 10
ok "a region after that is granted" wait_for 20 grep -qs "^outcome=" "$KT_DIR/r2.out"
ok "... without waiting for the claim, older than ctx_defer" test "$(waits)" = 1
ok "the metrics count both regions, still one wait" \
	wait_for 10 sh -c "$PROM --value 'krex_regions_total{outcome=\"clean\"}' '$MET' | grep -qx 2 &&
		$PROM --value krex_region_ctx_defer_total '$MET' | grep -qx 1"
ok "the metrics file is valid Prometheus text" $PROM "$MET"
done_testing
