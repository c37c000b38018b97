#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The GPU script test/gpu/ownctx-on-gpu.sh, dry run end to end on the mock
# NVML and the mock CUDA driver (TEST DOUBLES; no GPU), so that the run on
# the GPU is not the script's first: a sibling's kernel queued in a context
# of its own (cuCtxCreate) before its primary context's last release is
# waited for by the next region's drain (its host function after the
# kernel ran before the owner's command: 1 of the 5 checks fails with a
# gate that forgets every context at that release), the region clean, the
# sibling's result right; nothing is left.
. "$top_srcdir/test/lib.sh"
[ -x "$top_builddir/test/workloads/krex-ownctx" ] || skip_all "krex-ownctx not built"
. "$top_srcdir/test/gpu/mock-run.sh"
plan 7
ok "ownctx-on-gpu.sh runs on the mock" mock_run ownctx-on-gpu.sh
ok "it says it is a mock run" grep -qs "^MOCK RUN" "$T/log"
ok "its 5 checks pass" grep -qs "^PASS: ownctx-on-gpu (5 checks)" "$T/log"
ok "the drain waited for the kernel in the sibling's own context" \
	grep -qs '^| the sibling.s kernel ended before the owner.s command .* | before | before | PASS |' "$T/out/table.md"
# the kernel in the last of 40 contexts of its own (more than 16: fails with a table of 16)
export KREX_OWNCTX_N=40
ok "and with 40 contexts of its own, the kernel in the last" mock_run ownctx-on-gpu.sh
ok "the drain waited for that kernel" \
	grep -qs '^| the sibling.s kernel ended before the owner.s command .* | before | before | PASS |' "$T/out/table.md"
unset KREX_OWNCTX_N
ok "no krexd of its own left" no_krexd
[ "$_tap_fail" = 0 ] || sed 's/^/# /' "$T/log" | tail -n 30
done_testing
