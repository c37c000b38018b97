#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# contrib/slurm/job_submit.lua on a real slurmctld (JobSubmitPlugins=lua):
# --krex-shared --gres=gpu:1 becomes a shard request, --krex-shared alone gets
# one shard, a job without the option keeps its whole GPU.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
cluster_check || skip_all "$CLUSTER_WHY"
[ -f /usr/lib/x86_64-linux-gnu/slurm-wlm/job_submit_lua.so ] ||
	skip_all "Slurm's job_submit/lua plugin is not installed"
KC_SLURM_EXTRA="JobSubmitPlugins=lua"
KC_CONF_FILES=$top_srcdir/contrib/slurm/job_submit.lua
plan 5
cluster_start linuxproc 1 || skip_all "$CLUSTER_WHY"
gres_of() { krun scontrol show job "$1" | sed -n 's/.*TresPerNode=\([^ ]*\).*/\1/p'; }
j1=$(krun sbatch --parsable --hold --krex-shared --gres=gpu:1 --wrap=true)
j2=$(krun sbatch --parsable --hold --krex-shared --wrap=true)
j3=$(krun sbatch --parsable --hold --gres=gpu:1 --wrap=true)
j4=$(KREX_SHARED=1 krun sbatch --parsable --hold --wrap=true)
diag "job $j1: $(gres_of "$j1"); job $j2: $(gres_of "$j2"); job $j3: $(gres_of "$j3")"
ok "the script loaded" grep -q "krex: job_submit.lua loaded" "$KC_DIR/slurmctld.log"
ok "--krex-shared --gres=gpu:1 becomes shard:1" test "$(gres_of "$j1")" = "gres:shard:1"
ok "--krex-shared alone gets shard:1" test "$(gres_of "$j2")" = "gres:shard:1"
ok "a job without the option keeps gpu:1" test "$(gres_of "$j3")" = "gres:gpu:1"
ok "KREX_SHARED=1 in the environment counts as --krex-shared" test "$(gres_of "$j4")" = "gres:shard:1"
krun scancel "$j1" "$j2" "$j3" "$j4" 2>/dev/null
done_testing
