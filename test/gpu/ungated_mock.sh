#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The GPU script test/gpu/ungated-on-gpu.sh, dry run end to end on the mock
# NVML and the mock CUDA driver (TEST DOUBLES; no GPU, no torch), so that
# the run on the GPU is not the script's first: a CPU-only sibling without
# the gate named and clean, a GPU sibling without the gate (its pid put on
# the mock NVML by the script) degraded with the cause, a gated one not
# named; its table's checks all pass and nothing is left.
. "$top_srcdir/test/lib.sh"
[ -x "$top_builddir/krexd/krexd" ] || skip_all "krexd not built"
[ -x "$top_builddir/krex/krex" ] || skip_all "krex CLI not built"
[ -e "$top_builddir/test/mock/nvml/.libs/libnvidia-ml.so.1" ] || skip_all "mock NVML not built"
[ "$(id -u)" = 0 ] || skip_all "needs root (krexd's cgroups)"
command -v python3 >/dev/null || skip_all "no python3"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
run() { env KREX_GPU_MOCK=1 OUT="$T/out" timeout 200 bash "$top_srcdir/test/gpu/ungated-on-gpu.sh" "$top_builddir" >"$T/log" 2>&1; }
plan 5
ok "ungated-on-gpu.sh runs on the mock" run
ok "it says it is a mock run" grep -qs "^MOCK RUN" "$T/log"
ok "its 9 checks pass" grep -qs "^PASS: ungated-on-gpu (9 checks)" "$T/log"
ok "the GPU sibling's region was degraded with the cause" grep -qs '^| gpu: degraded | degraded | degraded | PASS |' "$T/out/table.md"
no_krexd() { # none of the krexd running has the script's run directory
	local p
	for p in $(pgrep -x krexd); do grep -qas "$T/out/work/run" "/proc/$p/cmdline" && return 1; done
	return 0
}
ok "no krexd of its own left" no_krexd
[ "$_tap_fail" = 0 ] || sed 's/^/# /' "$T/log" | tail -n 30
done_testing
