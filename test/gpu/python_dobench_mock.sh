#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The GPU script test/gpu/python-dobench.sh dry run end to end on the mock
# CUDA driver (TEST DOUBLE; no GPU, no torch; timings mean nothing), so that
# the run on the H200 is not the script's first: both runs give figures with
# the cuda-driver timer, the krex run's certificate comes from krexd and
# names the gated mock sibling, and every check line passes.
. "$top_srcdir/test/lib.sh"
[ -x "$top_builddir/krexd/krexd" ] || skip_all "krexd not built"
[ -x "$top_builddir/krex/krex" ] || skip_all "krex CLI not built"
[ -x "$top_builddir/test/workloads/krex-hog" ] || skip_all "test/workloads/krex-hog not built"
[ -e "$top_builddir/test/mock/.libs/libcuda.so.1" ] || skip_all "mock libcuda not built"
command -v python3 >/dev/null || skip_all "no python3"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
run() {
	env KREX_GPU_MOCK=1 OUT="$T/out" timeout 200 bash "$top_srcdir/test/gpu/python-dobench.sh" \
		"$top_builddir" >"$T/log" 2>&1
}
rows() { grep -c "\"label\": \"$1\"" "$T/out/dobench.jsonl" 2>/dev/null || echo 0; }
plan 5
ok "python-dobench.sh runs on the mock and passes its checks" run
ok "it says it is a mock run" grep -qs "^MOCK RUN" "$T/log"
ok "one Bench per run in dobench.jsonl" test "$(rows alone)/$(rows krex)" = 1/1
ok "the krex run's do_bench region was clean with the sibling drained" \
	grep -qs "^krex cuda-driver: .* outcome=clean siblings=1 " "$T/log"
ok "no FAIL line" sh -c "! grep -q '^FAIL' '$T/log' && [ \$(grep -c '^PASS' '$T/log') -ge 3 ]"
[ "$_tap_fail" = 0 ] || sed 's/^/# /' "$T/log" | tail -n 30
done_testing
