#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The step's line: at the end of each --krex-shared step the SPANK plugin
# prints one line into the job's output with the step's regions on the node
# (from krexd's PROTO_SUMMARY): regions, clean, degraded, expired, entry p50
# and p95.  An srun step's line reaches srun's stderr, a batch step's the
# batch output file; a step without regions says 0; summary=no in
# plugstack.conf turns it off; a step without --krex-shared never gets one.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
cluster_check || skip_all "$CLUSTER_WHY"
krexd_real || skip_all "krexd not built"
KREX=$top_builddir/krex/krex
[ -x "$KREX" ] || skip_all "krex CLI not built"
plan 9
cluster_start linuxproc 1 || skip_all "$CLUSTER_WHY"
W() { echo "$KC_DIR/work/$1"; }
LINE='krex: step [0-9]*\.%s on [^ ]*: %s; entry p50 [0-9.]* [mu]*s, p95 [0-9.]* [mu]*s$'

# An srun step with three regions, one of them expired (a 100 ms lease held 400 ms).
ksrun --krex-shared --gres=shard:1 sh -c \
	"$KREX region -- true; $KREX region -- true; $KREX region --max 0.1 -- sleep 0.4; exit 0" \
	>"$(W srun.out)" 2>"$(W srun.err)"
diag "srun: $(grep krex: "$(W srun.err)")"
# shellcheck disable=SC2059
ok "srun's stderr has the step's line: 3 regions, 2 clean, 1 expired" \
	grep -q "$(printf "$LINE" 0 '3 regions, 2 clean, 0 degraded, 1 expired')" "$(W srun.err)"
ok "one line for the step" test "$(grep -c 'krex: step' "$(W srun.err)")" = 1
ok "nothing of it in the step's stdout" sh -c "! grep -q 'krex: step' '$(W srun.out)'"

# A batch job: two regions in the batch step, one in an srun step inside it
# (in a container, where the image has no srun: none).
inner="srun --krex-shared $KREX region -- true"
[ -z "${KC_CONTAINER_IMAGE:-}" ] || inner=true
j=$(ksbatch --krex-shared --gres=shard:1 -o "$(W batch.out)" \
	--wrap="$KREX region -- true; $KREX region -- true; $inner")
kwait 40 kjob_done "$j"
diag "batch: $(grep krex: "$(W batch.out)" | tr '\n' '|')"
# shellcheck disable=SC2059
ok "the batch output has the batch step's line: 2 regions, 2 clean" \
	grep -q "$(printf "$LINE" batch '2 regions, 2 clean, 0 degraded, 0 expired')" "$(W batch.out)"
if [ -z "${KC_CONTAINER_IMAGE:-}" ]; then
	# shellcheck disable=SC2059
	ok "and the srun step's line: 1 region" \
		grep -q "$(printf "$LINE" 0 '1 region, 1 clean, 0 degraded, 0 expired')" "$(W batch.out)"
else
	skip "and the srun step's line: 1 region" "the image has no Slurm client: no srun inside a containerized batch step"
fi
ok "with this job's id" grep -q "krex: step $j\.batch on " "$(W batch.out)"

# A step without regions, a step without the option.
ksrun --krex-shared --gres=shard:1 true 2>"$(W none.err)"
ok "a step without regions: 0 regions" grep -q 'krex: step [0-9]*\.0 on [^ ]*: 0 regions$' "$(W none.err)"
ksrun --gres=shard:1 true 2>"$(W plain.err)"
ok "a step without --krex-shared: no line" sh -c "! grep -q 'krex:' '$(W plain.err)'"

# summary=no
cluster_plugstack "summary=no"
ksrun --krex-shared --gres=shard:1 "$KREX" region -- true 2>"$(W off.err)"
ok "summary=no: no line" sh -c "! grep -q 'krex: step' '$(W off.err)'"
done_testing
