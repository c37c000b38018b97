#!/bin/bash
# Device call 3 of session 21 (issue 18): after call 2, the gate's warm-up
# also runs on the owner's legacy default stream when its last launch went
# there (it had taken NULL for "no stream" and warmed a stream of its own
# only).  edge.py (the default, with --warm-events, spin off; alone), then
# test/gpu/proof.sh again.
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st edge
timeout -k 10 240 python3 notebook/h200-session-21/edge.py --builddir "$B" --out /tmp/o/edge \
	--rounds 3 --samples 1500 --all-samples 800 \
	--variants alone,krex,krex-wev,krex-nospin >"$O/edge3.txt" 2>&1
echo "rc=$?" >>"$O/edge3.txt"
python3 notebook/h200-session-21/edge.py --out /tmp/o/edge --summarize >"$O/edge3-table.txt" 2>&1
st proof
OUT=/tmp/o/proof timeout -k 10 300 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
st done
cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
cat /tmp/o/proof/fidelity/fidelity.md /tmp/o/proof/env.txt >"$O/proof-fidelity.md" 2>/dev/null
tar czf "$O/call3.tgz" -C /tmp/o edge proof.txt proof/fidelity/fidelity.md proof/fidelity/fidelity.csv \
	proof/fidelity/raw proof/entry2/raw proof/entry3/raw proof/agents/agents.md proof/env.txt 2>/dev/null
cat "$O/edge3-table.txt" "$O/proof.md" "$O/steps.txt"; tail -3 /tmp/o/proof.txt
