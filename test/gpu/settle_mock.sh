#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The GPU proof script test/gpu/settle.sh, dry run end to end on the mock
# NVML and the mock CUDA driver (TEST DOUBLES; no GPU, no torch; timings
# mean nothing), so that the run on the H200 is not the script's first: every
# mode runs, settle = mark and settle = off degrade every region the story
# leaves capped at the grant (inherited, not the owner's), settle = wait waits
# out the 500 ms story and is clean, chain mode's two owners get chained
# regions, the owner's own NVML watch sees what krexd saw, and the report
# prints its table and verdict.
. "$top_srcdir/test/lib.sh"
[ -x "$top_builddir/krexd/krexd" ] || skip_all "krexd not built"
[ -x "$top_builddir/krex/krex" ] || skip_all "krex CLI not built"
[ -e "$top_builddir/test/mock/nvml/.libs/libnvidia-ml.so.1" ] || skip_all "mock NVML not built"
command -v python3 >/dev/null || skip_all "no python3"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
count() { # MODE OUTCOME: regions of MODE with OUTCOME
	grep -c "\"outcome\": \"$2\"" "$T/out/$1.jsonl" 2>/dev/null || echo 0
}
run_settle() {
	env KREX_GPU_MOCK=1 REGIONS=4 SAMPLES=3 GAP_MS=50 CHAIN_MAX=30s OUT="$T/out" \
		timeout 200 bash "$top_srcdir/test/gpu/settle.sh" "$top_builddir" >"$T/log" 2>&1
}
plan 14
ok "settle.sh runs on the mock" run_settle
ok "it says it is a mock run" grep -qs "^MOCK RUN" "$T/log"
ok "off: 4 regions degraded (they start capped)" test "$(count off degraded)" = 4
ok "mark: 4 regions degraded by the power cap at the grant" test "$(count mark degraded)" = 4 -a \
	"$(grep -c '"note": "power cap at the grant: SM 1500 MHz of 1980' "$T/out/mark.jsonl")" = 4
ok "wait: 4 regions clean" test "$(count wait clean)" = 4
# the mock GPU is back 500 ms after each region's story begins: no grant
# before (the clock the mock reads, against the story file's mtime), and
# clean (check 5), so the settle ended on the clock and not at its timeout
ok "wait: each region granted only once the mock GPU was back (>= 500 ms after the story)" \
	test "$(grep -o '"story_to_grant_ms": [0-9.]*' "$T/out/wait.jsonl" |
		awk '$2 >= 500' | wc -l)" = 4
# the owner's own NVML watch (settle_job.py's RecoveryWatch) reads the mock
# too: a read after each grant, back in wait mode, still capped under off
ok "wait: the owner's watch saw the mock GPU back at each grant" \
	test "$(grep -c '"back_at_grant": true' "$T/out/wait.jsonl")" = 4
ok "off: ... and capped at each (settle = off does not wait)" \
	test "$(grep -c '"back_at_grant": false' "$T/out/off.jsonl")" = 4
ok "chain: both owners' regions recorded" test "$(grep -c '"label": "chain-' "$T/out/chain.jsonl")" = 8
ok "chain: regions were chained" \
	test "$(grep -o '"chained": [1-9][0-9]*' "$T/out/chain.jsonl" | wc -l)" -ge 1
# the test hook holds krexd's first grant until both owners' first requests
# are queued: whichever is granted first, the other's first region is
# chained to it (chain_max 30 s here: no cut, whatever the load)
ok "chain: krexd's first grant waited for both requests (KREX_TEST_GRANT_QUEUED)" \
	grep -qs "KREX_TEST_GRANT_QUEUED=2: the first grant waits" "$T/out/work/krexd-chain.log"
ok "chain: one owner's first region was chained to the other's" \
	test "$(grep '"i": 0,' "$T/out/chain.jsonl" | grep -c '"chained": 1,')" = 1
ok "chain: no chained region waited (the mock GPU is back 500 ms after the story starts)" \
	test "$(grep '"chained": [1-9]' "$T/out/chain.jsonl" | grep -vc '"settle_us": 0,')" = 0
ok "the report has its table and says the timings are not judged" \
	grep -qs "^verdict: not judged (mock run)" "$T/out/table.md"
[ "$_tap_fail" = 0 ] || sed 's/^/# /' "$T/log" | tail -n 30
done_testing
