#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A state file krexd cannot write: the sibling is not frozen (a freeze with
# no record could never be undone after a crash), the certificate says so
# (degraded, a note naming the state file), the log says so, and the
# sibling runs on.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
kt_setup
plan 4
kt_conf "gpus = g0" "freezer = signal"
krexd_start || { diag "krexd did not start"; exit 1; }
kt_participant sib --gpus g0 --ack-drains
mkdir "$KT_DIR/krexd.state.tmp" # the write's temp file cannot be made: EISDIR
"$CLIENT" region --gpus g0 --hold-ms 100 >"$KT_DIR/reg.out" 2>&1
diag "$(grep -E 'outcome|frozen|note' "$KT_DIR/reg.out" | tr '\n' ' ')"
ok "the sibling was not frozen without a record" grep -qs '^frozen=0' "$KT_DIR/reg.out"
ok "the certificate is degraded" grep -qs '^outcome=degraded' "$KT_DIR/reg.out"
ok "its note names the state file" grep -qs '^note=.*state file' "$KT_DIR/reg.out"
ok "the sibling runs again" kt_progress sib
done_testing
