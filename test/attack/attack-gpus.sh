#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Who may name which GPU (gpu_policy) and the GPU table: an unprivileged
# user may not name a GPU outside the node's list, under gpu_policy = step
# only its own step's GPUs, and filling the table does not outlive the
# participants that filled it (pruned when the last one leaves).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
at_setup
SHIPPED=$top_builddir/contrib/krexd.conf # made from contrib/krexd.conf.in
[ -r "$SHIPPED" ] || skip_all "$SHIPPED not built (make)"
plan 10
kt_conf "gpus = g0,g1" "freezer = signal"
krexd_start

as_user "$ATTACK" register 1 g0 >"$KT_DIR/r1.out" 2>&1
ok "a user may name a GPU of the node's list" grep -qs 'registered=1' "$KT_DIR/r1.out"
as_user "$ATTACK" register 1 evil >"$KT_DIR/r2.out" 2>&1
diag "$(tr '\n' ' ' <"$KT_DIR/r2.out")"
ok "a user may not add a GPU name outside gpus= (gpu_policy configured)" grep -qs 'last_error=error 11 GPU evil is not one' "$KT_DIR/r2.out"
krexd_stop

# gpu_policy = step: only the GPUs root registered the user's step with
: >"$KT_DIR/krexd.conf"
kt_conf "gpus = g0,g1" "freezer = signal" "gpu_policy = step"
krexd_start
as_user "$ATTACK" register 1 g1 >"$KT_DIR/s1.out" 2>&1
ok "step policy, no step of the user registered: refused" grep -qs 'last_error=error 3 ' "$KT_DIR/s1.out"
kt_bg step setpriv --reuid="$AT_UID" --regid="$(id -g "$AT_USER")" --clear-groups -- sleep 30
# the step's process must be the user's (setpriv has switched and exec'd) before root names it
wait_for 5 sh -c "[ \"\$(stat -c %u /proc/$step)\" = $AT_UID ] && grep -qx sleep /proc/$step/comm"
"$CLIENT" as-pid "$step" >"$KT_DIR/spank.out" 2>&1 # root names g0 for it, as the SPANK plugin does
as_user "$ATTACK" register 1 g1 >"$KT_DIR/s2.out" 2>&1
diag "$(tr '\n' ' ' <"$KT_DIR/s2.out")"
ok "step policy: another GPU than the step's is refused" grep -qs 'last_error=error 3 uid .* may not name GPU g1' "$KT_DIR/s2.out"
as_user "$ATTACK" register 1 g0 >"$KT_DIR/s3.out" 2>&1
diag "$(tr "\n" " " <"$KT_DIR/s3.out")"
ok "step policy: the step's GPU is allowed" grep -qs 'registered=1' "$KT_DIR/s3.out"
krexd_stop

# The shipped krexd.conf (no gpus= list): a user may bring only
# max_gpus_per_uid names of its own into the table (8), so one user holding
# made-up names cannot make every new name fail for everyone; the names are
# pruned when its participants leave.
: >"$KT_DIR/krexd.conf"
cat "$SHIPPED" >>"$KT_DIR/krexd.conf"
kt_conf "freezer = signal"
krexd_start
names=$(seq -s, -f 'x%g' 0 63)
as_user "$ATTACK" register 1 "$names" >"$KT_DIR/f0.out" 2>&1
diag "$(tr '\n' ' ' <"$KT_DIR/f0.out")"
ok "64 made-up names from one user are refused (max_gpus_per_uid)" grep -qs 'last_error=error 14 uid [0-9]* .*max_gpus_per_uid' "$KT_DIR/f0.out"
names=$(seq -s, -f 'x%g' 0 7)
KREX_ATTACK_HOLD=3 as_user "$ATTACK" register 1 "$names" >"$KT_DIR/f1.out" 2>&1 &
filler=$!
KT_PIDS="$KT_PIDS $filler"
wait_for 5 grep -qs registered= "$KT_DIR/f1.out"
ok "8 names of its own are taken" grep -qs 'registered=1' "$KT_DIR/f1.out"
as_user "$ATTACK" register 1 x9 >"$KT_DIR/f9.out" 2>&1
ok "while it holds them, a ninth new name of the same user is refused" grep -qs 'last_error=error 14 .*max_gpus_per_uid' "$KT_DIR/f9.out"
"$CLIENT" participant --gpus fresh0 >"$KT_DIR/full.out" 2>&1 &
KT_PIDS="$KT_PIDS $!"
wait_for 10 grep -qs 'error\|registered' "$KT_DIR/full.out"
ok "and another's new name is taken meanwhile" grep -qs 'registered' "$KT_DIR/full.out"
wait_for 10 kt_gone "$filler"
wait_for 10 sh -c "! \"$CLIENT\" status | grep -q 'gpus=x0'"
as_user "$ATTACK" register 1 "$names" >"$KT_DIR/f2.out" 2>&1
diag "$(tr '\n' ' ' <"$KT_DIR/f2.out")"
ok "after its participants leave, its names are pruned and it may name 8 again" grep -qs 'registered=1' "$KT_DIR/f2.out"
done_testing
