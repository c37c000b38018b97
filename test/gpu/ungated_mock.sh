#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The GPU script test/gpu/ungated-on-gpu.sh, dry run end to end on the mock
# NVML and the mock CUDA driver (TEST DOUBLES; no GPU, no torch), so that
# the run on the GPU is not the script's first: a CPU-only sibling without
# the gate named and clean, a GPU sibling without the gate (its pid put on
# the mock NVML by the script) degraded with the cause, a gated one not
# named; its table's checks all pass and nothing is left.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gpu/mock-run.sh"
plan 5
ok "ungated-on-gpu.sh runs on the mock" mock_run ungated-on-gpu.sh
ok "it says it is a mock run" grep -qs "^MOCK RUN" "$T/log"
ok "its 9 checks pass" grep -qs "^PASS: ungated-on-gpu (9 checks)" "$T/log"
ok "the GPU sibling's region was degraded with the cause" grep -qs '^| gpu: degraded | degraded | degraded | PASS |' "$T/out/table.md"
ok "no krexd of its own left" no_krexd
[ "$_tap_fail" = 0 ] || sed 's/^/# /' "$T/log" | tail -n 30
done_testing
