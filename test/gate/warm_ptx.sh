#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The gate's region warm-up kernel (gate/warm_ptx.h) is valid PTX:
# ptxas assembles it for sm_90 (H100/H200) and sm_80.  Skips without ptxas.
. "$top_srcdir/test/lib.sh"
PTXAS=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null)
[ -n "$PTXAS" ] || skip_all "no ptxas (CUDA toolkit) here"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
plan 3
ok "the PTX prints" sh -c "'$top_builddir/test/gate/warm_ptx_print' >'$T/warm.ptx' && grep -q krex_warm '$T/warm.ptx'"
ok "ptxas assembles it for sm_90" "$PTXAS" -arch=sm_90 "$T/warm.ptx" -o "$T/w90.cubin"
ok "and for sm_80" "$PTXAS" -arch=sm_80 "$T/warm.ptx" -o "$T/w80.cubin"
done_testing
