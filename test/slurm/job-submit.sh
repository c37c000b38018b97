#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# contrib/slurm/job_submit.lua on a real slurmctld (JobSubmitPlugins=lua):
# --krex-shared --gres=gpu:1 becomes a shard request, --krex-shared alone gets
# one shard, a job without the option keeps its whole GPU.  The TRES form is
# Slurm's own: "gres:shard:1" in 22.05, "gres/shard:1" from 23.02 on.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
cluster_check || skip_all "$CLUSTER_WHY"
[ -f "$KC_SLURM_PLUGINDIR/job_submit_lua.so" ] ||
	skip_all "Slurm's job_submit/lua plugin is not installed (no $KC_SLURM_PLUGINDIR/job_submit_lua.so)"
KC_SLURM_EXTRA="JobSubmitPlugins=lua"
KC_CONF_FILES=$top_srcdir/contrib/slurm/job_submit.lua
ver=$(kc_slurm_version)
case "$ver" in
2[01].* | 22.*) G="gres:" ;;
*) G="gres/" ;;
esac
plan 8
cluster_start linuxproc 1 || skip_all "$CLUSTER_WHY"
diag "Slurm $ver: TRES written as ${G}NAME:COUNT"
gres_of() { [ -n "$1" ] || { echo "(not submitted)"; return; }; krun scontrol show job "$1" | sed -n 's/.*TresPerNode=\([^ ]*\).*/\1/p'; }
sub() { krun sbatch --parsable --hold -o /dev/null "$@" --wrap=true; }
j1=$(sub --krex-shared --gres=gpu:1)
j2=$(sub --krex-shared)
j3=$(sub --gres=gpu:1)
j4=$(KREX_SHARED=1 sub)
j5=$(sub --krex-shared --gpus-per-node=1)
j6=$(sub --krex-shared --gres=shard:3)
j7=$(KREX_SHARED=0 sub)
for j in $j1 $j2 $j3 $j4 $j5 $j6 $j7; do diag "job $j: TresPerNode=$(gres_of "$j")"; done
ok "the script loaded" grep -q "krex: job_submit.lua loaded" "$KC_DIR/slurmctld.log"
ok "--krex-shared --gres=gpu:1 becomes ${G}shard:1" test "$(gres_of "$j1")" = "${G}shard:1"
ok "--krex-shared alone gets ${G}shard:1" test "$(gres_of "$j2")" = "${G}shard:1"
ok "a job without the option keeps ${G}gpu:1" test "$(gres_of "$j3")" = "${G}gpu:1"
ok "KREX_SHARED=1 in the environment counts as --krex-shared" test "$(gres_of "$j4")" = "${G}shard:1"
ok "--krex-shared --gpus-per-node=1 becomes ${G}shard:1" test "$(gres_of "$j5")" = "${G}shard:1"
ok "--krex-shared --gres=shard:3 is kept" test "$(gres_of "$j6")" = "${G}shard:3"
ok "KREX_SHARED=0 is no request: no gres added" test -z "$(gres_of "$j7")"
krun scancel $j1 $j2 $j3 $j4 $j5 $j6 $j7 2>/dev/null
done_testing
