#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Tier 4 (gpu) under make check: on a machine with an NVIDIA GPU, the gate
# sees a driver-API program's launches through cuGetProcAddress and the
# program's results stay right; the GPU checks skip without a GPU.  The full
# GPU run is test/gpu/run-gpu.sh (doc/gpu.md).  Before them, on the mock
# driver (a TEST DOUBLE): the workloads' KREX_WL_SCHED (how their threads
# wait for the GPU, agents.py's diagnostics) refuses what it cannot do.
. "$top_srcdir/test/lib.sh"
WL=$top_builddir/test/workloads
[ -x "$WL/krex-victim" ] || skip_all "workloads not built"
G=$top_builddir/gate/.libs/libkrexgate.so
T=$(mktemp -d) || exit 1
export KREX_MOCK_GPU=/krex-gpucheck-$$
trap 'rm -rf "$T" "/dev/shm$KREX_MOCK_GPU"' EXIT
plan 6
on_mock() { env LD_LIBRARY_PATH="$top_builddir/test/mock/.libs" "$@" >"$T/out" 2>&1; }
ok "on the mock, KREX_WL_SCHED unset: krex-victim runs" on_mock "$WL/krex-victim" run 10 5
ok "KREX_WL_SCHED=bogus: refused, and the message says what it takes" sh -c \
	"! KREX_WL_SCHED=bogus LD_LIBRARY_PATH='$top_builddir/test/mock/.libs' '$WL/krex-victim' run 10 5 2>'$T/err' &&
	grep -q 'KREX_WL_SCHED=bogus: not spin, yield or blocking' '$T/err'"
ok "KREX_WL_SCHED=blocking on a driver without cuDevicePrimaryCtxSetFlags: refused, said" sh -c \
	"! KREX_WL_SCHED=blocking LD_LIBRARY_PATH='$top_builddir/test/mock/.libs' '$WL/krex-victim' run 10 5 2>'$T/err' &&
	grep -q 'libcuda lacks cuDevicePrimaryCtxSetFlags' '$T/err'"
if ! { command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; }; then
	for t in "krex-procaddr right under the gate" "the gate saw its 8 launches" \
		"KREX_WL_SCHED=blocking: krex-victim runs on the GPU"; do
		skip "$t" "no NVIDIA GPU"
	done
elif [ ! -f "$WL/fma.fatbin" ]; then
	for t in "krex-procaddr right under the gate" "the gate saw its 8 launches" \
		"KREX_WL_SCHED=blocking: krex-victim runs on the GPU"; do
		skip "$t" "fma.fatbin not built (no nvcc)"
	done
else
	ok "krex-procaddr right under the gate" env LD_PRELOAD="$G" KREX_GATE_COUNTS="$T/c" \
		"$WL/krex-procaddr"
	ok "the gate saw its 8 launches" \
		test "$(awk '$2 ~ /^cuLaunchKernel/ { n += $3 } END { print n + 0 }' "$T/c")" = 8
	ok "KREX_WL_SCHED=blocking: krex-victim runs on the GPU" env KREX_WL_SCHED=blocking \
		"$WL/krex-victim" run 1000 5
fi
done_testing
