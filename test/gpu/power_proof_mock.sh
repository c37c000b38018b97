#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The GPU proof script test/gpu/power-proof.sh, dry run end to end on the mock
# NVML and the mock CUDA driver (TEST DOUBLES; no GPU, no torch; timings mean
# nothing), so that the run on the H200 is not the script's first.  Each
# region inherits a sibling's power cap (300 ms recovery) and its owner's work
# reaches the cap again inside it (an event line of the mock's script): with
# settle = wait every region waits, is clean and reports its own cap; with
# settle = off every region starts capped and is degraded; the report's
# counts pass; alone and wait, measured in two interleaved blocks each, are
# pooled, and each block has its row.
. "$top_srcdir/test/lib.sh"
[ -x "$top_builddir/krexd/krexd" ] || skip_all "krexd not built"
[ -x "$top_builddir/krex/krex" ] || skip_all "krex CLI not built"
[ -e "$top_builddir/test/mock/nvml/.libs/libnvidia-ml.so.1" ] || skip_all "mock NVML not built"
command -v python3 >/dev/null || skip_all "no python3"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
count() { # MODE PATTERN: regions of MODE whose JSON line matches PATTERN
	grep -c -- "$2" "$T/out/$1.jsonl" 2>/dev/null || echo 0
}
run_proof() {
	env KREX_GPU_MOCK=1 REGIONS=6 MODES="alone wait alone wait off" OUT="$T/out" \
		timeout 200 bash "$top_srcdir/test/gpu/power-proof.sh" "$top_builddir" >"$T/log" 2>&1
}
plan 8
ok "power-proof.sh runs on the mock" run_proof
ok "it says it is a mock run" grep -qs "^MOCK RUN" "$T/log"
ok "wait: 12 regions clean (two blocks, one file)" test "$(count wait '"outcome_name": "clean"')" = 12
ok "wait: each waited for the inherited cap and reports its own cap" \
	test "$(grep -c '"settle_us": [1-9][0-9]*,.*"own_power_cap_samples": [1-9]' "$T/out/wait.jsonl")" = 12
ok "off: 6 regions started capped, each degraded for the cap at the grant" \
	test "$(count off '"note": "power cap at the grant: SM 1500 MHz of 1980')" = 6
ok "the table counts 0 regions degraded for the owner's own cap" \
	grep -qs '^| wait | 12 | 12 | 0 | 0 | 12 | 0 / 0 |' "$T/out/table.md"
ok "the table shows each block's p50 (alone 1 and 2, wait 1 and 2)" \
	test "$(grep -cE '^\| (alone|wait) \| [12] \| 6 \|' "$T/out/table.md")" = 4
ok "the report's counts pass" grep -qs "^verdict (counts only, mock run): PASS" "$T/out/table.md"
[ "$_tap_fail" = 0 ] || sed 's/^/# /' "$T/log" | tail -n 30
done_testing
