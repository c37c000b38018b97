#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# harmless.sh on a real GPU under make check: a short run (2 x 20 s) of every
# framework sibling that is installed, with regions at random moments; passes
# when the goal is met.  Skips without an NVIDIA GPU, and when a framework is
# missing or too few regions were taken (the run is then incomplete, not
# failed).  The full proof is `bash test/gpu/harmless.sh` (doc/harmless.md).
. "$top_srcdir/test/lib.sh"

command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || skip_all "no NVIDIA GPU (harmless_mock.sh runs the harness on the mock)"
command -v python3 >/dev/null || skip_all "python3 not found"
need_root
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
plan 1
KREX_HARMLESS_LIMIT=300 bash "$top_srcdir/test/gpu/harmless.sh" --builddir "$top_builddir" \
	--out "$out" --seconds 20 --min-regions 50 >"$out/txt" 2>&1
rc=$?
grep -E '^\||Goal' "$out/txt" | sed 's/^/# /'
case $rc in
0) ok "harmless on the GPU: goal met" true ;;
3) skip "harmless on the GPU" "incomplete: $(grep -o 'Goal.*' "$out/txt" | head -1 | cut -c1-200)" ;;
*) ok "harmless on the GPU: goal met (rc $rc)" false ;;
esac
done_testing
