#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Job and step are verified, never trusted (doc/security.md "What krexd
# trusts"), on a real cluster (proctrack/cgroup): root's --krex-shared
# batch job V takes one clean region and waits; then a user claims V's
# batch step in its REGISTER and takes expired regions: from inside a
# --krex-shared job of its own (krextest), and from outside Slurm
# (nobody).  V's step line must still say "1 region, 1 clean": its
# SUMMARY counts only what root's registration of V says is V's.  The
# user's regions count for its own job, or for none.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
cluster_check || skip_all "$CLUSTER_WHY"
krexd_real || skip_all "krexd not built"
KREX=$top_builddir/krex/krex
CLIENT=$top_builddir/test/integration/krex-testclient
[ -x "$KREX" ] || skip_all "krex CLI not built"
[ -x "$CLIENT" ] || skip_all "krex-testclient not built (make -C test/integration krex-testclient)"
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) not found"
kc_user || skip_all "no user $KC_USER"
NB_UID=$(id -u nobody 2>/dev/null) || skip_all "no user nobody"
plan 6
cluster_start cgroup 1 || skip_all "$CLUSTER_WHY"
W() { echo "$KC_DIR/work/$1"; }
SOCK=${KC_RUN}${KC_NODES%% *}/krexd.sock
BATCH=4294967291 # SLURM_BATCH_SCRIPT
LINE='krex: step %s.batch on [^ ]*: %s; entry p50'

# V: root's job, one clean region, then it waits for the go file
v=$(ksbatch --krex-shared --gres=shard:1 -o "$(W v.out)" \
	--wrap="$KREX region -- true; touch $(W v.ready); while [ ! -e $(W v.go) ]; do sleep 0.1; done")
kwait 40 test -e "$(W v.ready)" || diag "V: $(kjob_state "$v") $(cat "$(W v.out)")"
ok "root's job $v ran its region" test -e "$(W v.ready)"

# a user inside a --krex-shared job of its own claims V's batch step
u=$(ksbatch --uid="$KC_USER" --gid="$KC_USER" --krex-shared --gres=shard:1 -o "$(W u.out)" \
	--chdir="$KC_DIR/work" \
	--wrap="KREX_TEST_JOB=$v.$BATCH $CLIENT region --max-ms 10 --hold-ms 50 --count 3; echo rc=\$?")
kwait 40 kjob_done "$u" || diag "U: $(kjob_state "$u")"
diag "U: $(grep -E 'outcome|rc=|error' "$(W u.out)" | tr '\n' ' ')"
ok "the user's job took its regions (3, expired)" test "$(grep -c '^outcome=expired' "$(W u.out)")" = 3

# nobody, outside Slurm, claims V's batch step
KREX_SOCKET=$SOCK KREX_TEST_JOB=$v.$BATCH setpriv --reuid="$NB_UID" --regid="$(id -g nobody)" \
	--clear-groups -- "$CLIENT" region --max-ms 10 --hold-ms 50 --count 2 >"$(W nb.out)" 2>&1
diag "nobody: $(tr '\n' ' ' <"$(W nb.out)" | cut -c1-300)"
ok "nobody took its regions outside Slurm (2, expired)" test "$(grep -c '^outcome=expired' "$(W nb.out)")" = 2

touch "$(W v.go)"
kwait 40 kjob_done "$v" || diag "V: $(kjob_state "$v")"
diag "V's line: $(grep 'krex: step' "$(W v.out)")"
# shellcheck disable=SC2059
ok "V's step line counts only V's region: 1 region, 1 clean, 0 expired" \
	grep -q "$(printf "$LINE" "$v" '1 region, 1 clean, 0 degraded, 0 expired')" "$(W v.out)"
diag "U's line: $(grep 'krex: step' "$(W u.out)")"
# shellcheck disable=SC2059
ok "the user's regions count for its own job $u" \
	grep -q "$(printf "$LINE" "$u" '3 regions, 0 clean, 0 degraded, 3 expired')" "$(W u.out)"
KREX_SOCKET=$SOCK "$KREX" log --json >"$(W log.json)" 2>&1
ok "krex log: nobody's regions carry no job" python3 - "$(W log.json)" "$NB_UID" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mine = [r for r in rows if r.get("uid") == int(sys.argv[2])]
assert len(mine) == 2 and all(r.get("job", 0) == 0 for r in mine), mine
PY
done_testing
