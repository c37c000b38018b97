#!/bin/bash
# Device call 1 planned in session 40 (issue 18), for the next round with
# device time (session 40 had 189 s left: no start possible): the proof's
# settle part with the owner's own NVML watch of each region's recovery
# (settle_job.py's RecoveryWatch, ffb4f65), so that the settle line judges
# each settle against its own region's recovery; and cgmutex.py with the
# two operations alternated (does a v2 cgroup.freeze write wait behind a
# move under way?).  The settle part took 45 s on an H100 in session 39,
# cgmutex.py 8 s, the build about 60 s: about 2 minutes.
. notebook/gpu-call-prologue.sh
st "cgmutex.py"
timeout 30 python3 notebook/h200-session-39/cgmutex.py 5 >"$O/cgmutex.txt" 2>&1
cat "$O/cgmutex.txt"
export KREX_PROOF_PART=settle
CALL=call1 PROOF_LIMIT=240 PROOF_MPS=0
. notebook/gpu-call-proof.sh
[ -s "$O/build.err" ] || rm -f "$O/build.err" # steps.txt stays beside proof.md
cat /tmp/o/proof/settle/table.md 2>/dev/null
ls -la "$O"
