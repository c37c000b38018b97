#!/bin/bash
# Device call 2 of session 39 (issue 18): the proof's settle and fidelity
# parts on the landed code (the mover thread, `krex status`'s moving state),
# without MPS: KREX_PROOF_PART=fidelity,settle (test/gpu/proof.sh), so that
# one table judges the entry p95 (three runs), per-sample and batch fidelity
# at 0.1 / 1 / 10 ms against alone and alone-gapped, and the settle goal
# from settle.sh's recovery (one owner, the torch sibling before each
# region) and chain (two owners back to back) modes.  Session 37's fidelity
# part took 177 s on an H100, session 12's settle modes about 70 s: about
# 280 s with the build and cgmutex.py (8 s); the proof's own limits 340 + 200 s.
. notebook/gpu-call-prologue.sh
# first (no GPU): do the cgroup operations of krexd's loop wait behind a
# move under way (cgroup_mutex held through the RCU grace period)?
st "cgmutex.py"
timeout 30 python3 notebook/h200-session-39/cgmutex.py 4 >"$O/cgmutex.txt" 2>&1
cat "$O/cgmutex.txt"
export KREX_PROOF_PART=fidelity,settle
CALL=call2 PROOF_LIMIT=540 PROOF_MPS=0
. notebook/gpu-call-proof.sh
{
	echo "==== steps.txt"
	cat "$O/steps.txt"
} >>"$O/proof.md" 2>/dev/null && rm -f "$O/steps.txt"
[ -s "$O/build.err" ] || rm -f "$O/build.err"
rm -f "$O/proof-agents.md"
cat "$O/proof-settle.md" 2>/dev/null | tail -20
ls -la "$O"
