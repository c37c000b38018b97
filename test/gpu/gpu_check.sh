#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Tier 4 (gpu) under make check: on a machine with an NVIDIA GPU, the gate
# sees a driver-API program's launches through cuGetProcAddress and the
# program's results stay right.  Skips without a GPU.  The full GPU run is
# test/gpu/run-gpu.sh (doc/gpu.md).
. "$top_srcdir/test/lib.sh"
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || skip_all "no NVIDIA GPU"
WL=$top_builddir/test/workloads
[ -f "$WL/fma.fatbin" ] || skip_all "fma.fatbin not built (no nvcc)"
G=$top_builddir/gate/.libs/libkrexgate.so
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
plan 2
ok "krex-procaddr right under the gate" env LD_PRELOAD="$G" KREX_GATE_COUNTS="$T/c" \
	"$WL/krex-procaddr"
ok "the gate saw its 8 launches" \
	test "$(awk '$2 ~ /^cuLaunchKernel/ { n += $3 } END { print n + 0 }' "$T/c")" = 8
done_testing
