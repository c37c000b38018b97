#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# What happened: krexd keeps the last `history` certificates and krex log
# shows them (table, --json, --job, --since, --outcome, --limit, pages of
# PROTO_LOG past one 64 KiB reply); a user sees only their own regions;
# one Slurm step's regions in figures (PROTO_SUMMARY: the SPANK plugin's
# line at step end); `history` changes on reload; bad options are refused.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
KREX=$top_builddir/krex/krex
command -v python3 >/dev/null || skip_all "no python3"

# rows ARGS...: the number of table rows krex log ARGS prints (after its two header lines).
rows() { "$KREX" log "$@" >"$KT_DIR/log.out" 2>&1 && grep -c '^20[0-9][0-9]-' "$KT_DIR/log.out"; }
rows_are() { local want=$1; shift; [ "$(rows "$@")" = "$want" ]; }
summary() { "$CLIENT" summary "$1" "$2"; }
summary_has() { summary "$1" "$2" | grep -q "$3"; }

kt_setup
kt_conf "gpus = g0" "drain_timeout = 200ms" "history = 5"
plan 33
ok "krexd starts" krexd_start

# Job 7 step 1: three clean regions and one whose lease runs out.
KREX_TEST_JOB=7.1 "$CLIENT" region --gpus g0 --count 3 --quiet
KREX_TEST_JOB=7.1 "$CLIENT" region --gpus g0 --max-ms 50 --hold-ms 300 --quiet
# Job 7 step 2: one degraded region (a sibling that never acknowledges the drain).
kt_participant c --gpus g0 --gate-noack
KREX_TEST_JOB=7.2 "$CLIENT" region --gpus g0 --hold-ms 10 --quiet
kill "$c"

ok "krex log shows the 5 regions" rows_are 5
ok "the table has its header" grep -q 'OUTCOME.*WAIT_MS.*DRAIN_MS.*FREEZE_MS.*SETTLE_MS.*CAUSES' "$KT_DIR/log.out"
ok "a job.step column" grep -q ' 7\.2 ' "$KT_DIR/log.out"
ok "--outcome degraded: the one degraded region" rows_are 1 --outcome degraded
ok "and its cause" grep -q 'did not acknowledge the drain' "$KT_DIR/log.out"
ok "--outcome clean,expired: 4" rows_are 4 --outcome clean,expired
ok "--job 7.1: 4" rows_are 4 --job 7.1
ok "--job 7: 5" rows_are 5 --job 7
ok "--job 7.1 --outcome expired: 1" rows_are 1 --job 7.1 --outcome expired
ok "--limit 2: 2" rows_are 2 --limit 2
ok "--since 1h: 5" rows_are 5 --since 1h

"$KREX" log --json >"$KT_DIR/log.json"
check_json() {
	python3 - "$KT_DIR/log.json" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert len(lines) == 5, len(lines)
objs = [json.loads(l) for l in lines]
seqs = [o["seq"] for o in objs]
assert seqs == sorted(seqs), seqs                     # oldest first
assert [o["certificate"]["outcome"] for o in objs] == ["clean"] * 3 + ["expired", "degraded"]
assert all(o["job"] == 7 and o["uid"] == 0 and o["node"] for o in objs)
assert [o["step"] for o in objs] == [1, 1, 1, 1, 2]
assert objs[4]["certificate"]["late"] == 1
assert all(o["time"] >= o["begin"] for o in objs)
PY
}
ok "--json: 5 lines of JSON, oldest first, outcomes, job, step, uid, node" check_json

# Bounded: a sixth region pushes the oldest out.
sleep 3
KREX_TEST_JOB=7.1 "$CLIENT" region --gpus g0 --quiet
ok "history = 5 keeps the newest 5" rows_are 5
ok "and says it keeps 5 of 6" grep -q 'keeps the last 5 of 6' "$KT_DIR/log.out"
ok "--since 2s: only the newest" rows_are 1 --since 2s

# One step's figures (the SPANK plugin's line): independent of the history's size.
ok "summary 7.1: 5 regions, 4 clean, 1 expired" summary_has 7 1 'regions=5 clean=4 degraded=0 expired=1 '
ok "summary 7.2: 1 region, degraded, 1 late sibling" summary_has 7 2 'regions=1 clean=0 degraded=1 expired=0 late=1 '
ok "summary of a step without regions: zeros" summary_has 9 9 'regions=0 clean=0 degraded=0 expired=0 late=0 p50=0 p95=0'
p50=$(summary 7 1 | sed -n 's/.* p50=\([0-9]*\) p95=\([0-9]*\) max=\([0-9]*\).*/\1 \2 \3/p')
ordered() { set -- $p50; [ "$1" -gt 0 ] && [ "$1" -le "$2" ] && [ "$2" -le "$3" ]; }
ok "entry p50 <= p95 <= max, > 0 ($p50)" ordered

# A user sees their own regions, root everyone's (doc/security.md).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	NB="setpriv --reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups --"
	# nobody's "step": a shell root registers as job 8.0 (as the SPANK plugin
	# does); the region from inside it is 8.0's.  nobody's own claim is not
	# taken (test/attack/attack-job.sh).
	kt_bg nbstep $NB sh -c "while [ ! -e '$KT_DIR/go' ]; do sleep 0.05; done; KREX_TEST_JOB=9.0 '$CLIENT' region --gpus g0 --quiet"
	wait_for 5 sh -c "[ \"\$(stat -c %u /proc/$nbstep/stat)\" = $(id -u nobody) ] && grep -qx sh /proc/$nbstep/comm"
	KREX_TEST_JOB=8.0 "$CLIENT" as-pid "$nbstep" >/dev/null
	touch "$KT_DIR/go"
	wait_for 10 kt_gone "$nbstep"
	$NB "$KREX" log >"$KT_DIR/nobody.out" 2>&1
	ok "nobody's krex log shows only nobody's region" test "$(grep -c '^20[0-9][0-9]-' "$KT_DIR/nobody.out")" = 1
	ok "and it is job 8.0" grep -q ' 8\.0 ' "$KT_DIR/nobody.out"
	ok "root's shows every region kept" rows_are 5
	ok "nobody's summary of root's step 7.1: zeros" test "$($NB "$CLIENT" summary 7 1 | cut -d' ' -f3)" = regions=0
	ok "nobody's summary of its own step 8.0: 1 region" test "$($NB "$CLIENT" summary 8 0 | cut -d' ' -f3)" = regions=1
else
	for t in 1 2 3 4 5; do skip "a user sees their own regions ($t)" "needs root and setpriv"; done
fi

# Bad options: a clear error, exit 2.
bad() { local want=$1; shift; "$KREX" log "$@" >"$KT_DIR/bad.out" 2>&1; [ $? = 2 ] && grep -q -e "$want" "$KT_DIR/bad.out"; }
ok "--outcome bogus refused" bad "--outcome takes clean, degraded or expired" --outcome bogus
ok "--job x refused" bad "--job takes JOB or JOB.STEP" --job x
ok "--since soon refused" bad "--since takes a duration" --since soon

# history changes on reload.
sed -i 's/^history = 5$/history = 2/' "$KT_DIR/krexd.conf"
kill -HUP "$KREXD_PID"
ok "after a reload with history = 2, 2 are kept" wait_for 5 rows_are 2

# Pages: 450 regions do not fit one 64 KiB reply.
krexd_stop
krexd_start -o history=1000
"$CLIENT" region --gpus g0 --count 450 --quiet
ok "450 regions in pages: krex log shows 450" rows_are 450
ok "--json too" test "$("$KREX" log --json | wc -l)" = 450
ok "--limit 300 crosses a page: 300" rows_are 300 --limit 300
ok "the newest 300 (regions 151..450)" test "$(awk '/^20[0-9][0-9]-/ {print $3}' "$KT_DIR/log.out" | sed -n '1p;$p' | tr '\n' ' ')" = "151 450 "
done_testing
