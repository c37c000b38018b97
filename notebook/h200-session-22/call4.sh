#!/bin/bash
# Device call 4 of session 22 (issue 18): test/gpu/proof.sh on the session's
# final code (call 3's tree plus proof_table.py reading every round's
# certificates for entry run 1), on another machine: does the interleaved
# reference hold?
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st proof
OUT=/tmp/o/proof timeout -k 10 480 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
st done
cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
cat /tmp/o/proof/fidelity/fidelity.md /tmp/o/proof/fidelity/fidelity-rounds.md /tmp/o/proof/env.txt >"$O/proof-fidelity.md" 2>/dev/null
tar czf "$O/call4.tgz" -C /tmp/o proof.txt proof/fidelity/fidelity.md proof/fidelity/fidelity.csv \
	proof/fidelity/fidelity-rounds.csv proof/fidelity/raw proof/entry2/raw proof/entry3/raw \
	proof/agents/agents.md proof/env.txt 2>/dev/null
cat "$O/proof.md" "$O/steps.txt"; tail -3 /tmp/o/proof.txt
