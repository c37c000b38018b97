#!/bin/bash
# Device call 3 of session 22 (issue 18): the final code of the session.
# A. krex-launchrate (empty kernels) alone, under the gate and under the old
#    gate (call 2 had the new gate slower in 4 rounds of 4, 1-9 %: no call
#    more on the launch path in the double), 8 rounds; with it the gate
#    without a region at 0.1 ms again.
# B. test/gpu/proof.sh: fidelity.py now interleaves alone and krex in 3
#    rounds (--rounds 3) and judges against that alone.
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
. notebook/h200-session-22/oldgate.sh
st launchrate
timeout -k 10 120 python3 notebook/h200-session-22/batchedge.py --builddir "$B" --out /tmp/o/be \
	--rounds 8 --phases none --sizes 0.1 --variants alone,gate,gate-old --old-builddir /tmp/krex-old-build \
	--launchrate 200000 >"$O/batchedge3.txt" 2>&1
echo "rc=$?" >>"$O/batchedge3.txt"
python3 notebook/h200-session-22/batchedge.py --out /tmp/o/be --summarize >"$O/batchedge3-table.txt" 2>&1
st proof
OUT=/tmp/o/proof timeout -k 10 420 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
st done
cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
cat /tmp/o/proof/fidelity/fidelity.md /tmp/o/proof/fidelity/fidelity-rounds.md /tmp/o/proof/env.txt >"$O/proof-fidelity.md" 2>/dev/null
tar czf "$O/call3.tgz" -C /tmp/o be proof.txt proof/fidelity/fidelity.md proof/fidelity/fidelity.csv \
	proof/fidelity/fidelity-rounds.csv proof/fidelity/raw proof/agents/agents.md proof/env.txt 2>/dev/null
cat "$O/batchedge3-table.txt"; grep "launchrate.*mean" "$O/batchedge3.txt"; cat "$O/proof.md" "$O/steps.txt"; tail -3 /tmp/o/proof.txt
