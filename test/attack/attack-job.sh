#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Job and step are verified, never trusted (doc/security.md "What krexd
# trusts"): an unprivileged user outside Slurm registers claiming job
# 4242 step 0 and takes regions.  krexd registers it with no job: job
# 4242's SUMMARY (what the SPANK plugin prints into that job's output),
# krex log and STATUS carry none of it, and krexd logs the refused claim.
# A process inside a step that root registered for the same user (as the
# SPANK plugin does) carries that step's job.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
at_setup
at_need_krex
command -v python3 >/dev/null || skip_all "python3 not found"
plan 8
kt_conf "gpus = g0" "freezer = signal"
krexd_start

# jobs_of UID: the "job.step" of each participant of UID in STATUS
jobs_of() {
	"$KREX" status --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(" ".join("%d.%d" % (p["job"], p["step"]) for p in s["participants"] if p["uid"] == int(sys.argv[1])))' "$1"
}

KREX_TEST_JOB=4242.0 as_user "$CLIENT" region --gpus g0 --count 3 >"$KT_DIR/r.out" 2>&1
ok "the user's regions are granted" test "$(grep -c '^outcome=clean' "$KT_DIR/r.out")" = 3
"$CLIENT" summary 4242 0 >"$KT_DIR/s.out" 2>&1
diag "$(cat "$KT_DIR/s.out")"
ok "job 4242.0's summary (root's view: every uid) counts none of them" grep -q 'regions=0 ' "$KT_DIR/s.out"
"$KREX" log --json >"$KT_DIR/log.json" 2>&1
ok "krex log: the user's regions carry no job" python3 - "$KT_DIR/log.json" "$AT_UID" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mine = [r for r in rows if r.get("uid") == int(sys.argv[2])]
assert len(mine) == 3, rows
assert all(r.get("job", 0) == 0 for r in mine), mine
PY
ok "krexd logs the claim it could not verify" grep -q "uid $AT_UID claimed job 4242.0" "$KT_DIR/krexd.log"

KREX_TEST_JOB=4242.0 at_bg claim "$CLIENT" participant --gpus g0
wait_for 5 grep -qs registered "$KT_DIR/claim.out"
ok "STATUS: the claiming participant has no job" test "$(jobs_of "$AT_UID")" = "0.0"
kill "$claim" 2>/dev/null
wait_for 5 sh -c "[ -z \"\$(\"$KREX\" status --json | grep '\"uid\":$AT_UID')\" ]"

# root registers the user's "step" (a shell of the user) with job 77.0, as
# the SPANK plugin does; a region taken from inside it is job 77.0's
GO=$KT_DIR/go
at_bg step sh -c "while [ ! -e '$GO' ]; do sleep 0.05; done; KREX_TEST_JOB=4242.0 '$CLIENT' region --gpus g0"
wait_for 5 sh -c "[ \"\$(stat -c %u /proc/$step)\" = $AT_UID ] && grep -qx sh /proc/$step/comm"
KREX_TEST_JOB=77.0 "$CLIENT" as-pid "$step" >"$KT_DIR/spank.out" 2>&1
ok "root registers the user's step as job 77.0" grep -qs registered "$KT_DIR/spank.out"
touch "$GO"
wait_for 10 grep -qs outcome= "$KT_DIR/step.out"
"$CLIENT" summary 77 0 >"$KT_DIR/s77.out" 2>&1
diag "$(cat "$KT_DIR/step.out" "$KT_DIR/s77.out" | tr '\n' ' ')"
ok "a region from inside the step root registered is the step's (77.0: 1 region)" grep -q 'regions=1 ' "$KT_DIR/s77.out"
"$CLIENT" summary 4242 0 >"$KT_DIR/s2.out" 2>&1
ok "and not the job it claimed (4242.0: 0 regions)" grep -q 'regions=0 ' "$KT_DIR/s2.out"
done_testing
