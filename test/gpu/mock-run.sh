# SPDX-License-Identifier: BSD-3-Clause
# mock-run.sh - sourced by the TAP tests that dry run a one-call GPU script
# on the mock NVML and the mock CUDA driver (ungated_mock.sh,
# ownctx_mock.sh), after test/lib.sh: skips where krexd, the krex CLI or
# the mock NVML are not built, without root or python3; T, a temp dir gone
# at exit; mock_run SCRIPT runs test/gpu/SCRIPT with KREX_GPU_MOCK=1 and
# OUT=$T/out, its output in $T/log; no_krexd: no krexd of the script's own
# is left (none has its run directory).
[ -x "$top_builddir/krexd/krexd" ] || skip_all "krexd not built"
[ -x "$top_builddir/krex/krex" ] || skip_all "krex CLI not built"
[ -e "$top_builddir/test/mock/nvml/.libs/libnvidia-ml.so.1" ] || skip_all "mock NVML not built"
[ "$(id -u)" = 0 ] || skip_all "needs root (krexd's cgroups)"
command -v python3 >/dev/null || skip_all "no python3"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
mock_run() {
	env KREX_GPU_MOCK=1 OUT="$T/out" timeout 200 bash "$top_srcdir/test/gpu/$1" "$top_builddir" >"$T/log" 2>&1
}
no_krexd() {
	local p
	for p in $(pgrep -x krexd); do grep -qas "$T/out/work/run" "/proc/$p/cmdline" && return 1; done
	return 0
}
