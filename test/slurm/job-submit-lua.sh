#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# contrib/slurm/job_submit.lua without Slurm (Lua and job_submit_mock.lua):
# each request in both TRES forms, "gres:NAME:N" (Slurm 22.05) and
# "gres/NAME:N" (23.02 and later), becomes what it should, in its own form.
# job-submit.sh checks the script on a real slurmctld.
. "$top_srcdir/test/lib.sh"
LUA=$(command -v lua5.4 || command -v lua5.3 || command -v lua) ||
	skip_all "no Lua interpreter (Debian: lua5.4)"
SCRIPT=$top_srcdir/contrib/slurm/job_submit.lua
MOCK=$top_srcdir/test/slurm/job_submit_mock.lua

# is SEP TRES KREX WANT: the script turns TRES into WANT.
is() {
	local got
	got=$("$LUA" "$MOCK" "$SCRIPT" "$1" "$2" "$3" 2>&1)
	[ "$got" = "$4" ] || { diag "got '$got', want '$4'"; return 1; }
}

plan 22
for sep in : /; do
	G=gres$sep
	ok "[$G] --krex-shared gpu:1 becomes shard:1" is "$sep" "${G}gpu:1" option "${G}shard:1"
	ok "[$G] a typed gpu:h200:2 becomes shard:2" is "$sep" "${G}gpu:h200:2" option "${G}shard:2"
	ok "[$G] gpu without a count becomes shard:1" is "$sep" "${G}gpu" option "${G}shard:1"
	ok "[$G] the other entries of the list are kept" \
		is "$sep" "${G}gpu:2,${G}nic:1" option "${G}shard:2,${G}nic:1"
	ok "[$G] no request gets shard:1 in Slurm's own form" is "$sep" - option "${G}shard:1"
	ok "[$G] a request without a GPU gets shard:1 added" \
		is "$sep" "${G}nic:1" option "${G}nic:1,${G}shard:1"
	ok "[$G] a shard request is kept" is "$sep" "${G}shard:3" option "${G}shard:3"
	ok "[$G] a job without the option keeps its GPU" is "$sep" "${G}gpu:1" none "${G}gpu:1"
	ok "[$G] KREX_SHARED=1 counts as the option" is "$sep" "${G}gpu:1" env=1 "${G}shard:1"
	ok "[$G] KREX_SHARED=0 does not" is "$sep" "${G}gpu:1" env=0 "${G}gpu:1"
	ok "[$G] a gres named gpus is not converted" is "$sep" "${G}gpus:1" option "${G}gpus:1"
done
done_testing
