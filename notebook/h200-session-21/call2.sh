#!/bin/bash
# Device call 2 of session 21 (issue 18): after call 1, the gate's warm-up
# times its kernel with two timing events (the calls a timed sample makes)
# and libregion spins for krexd's replies by default (KREX_REGION_SPIN_US=
# 10000).  edge.py again (the default against spin off, each with and
# without krex-victim's --warm-events), then test/gpu/proof.sh.
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st edge
timeout -k 10 200 python3 notebook/h200-session-21/edge.py --builddir "$B" --out /tmp/o/edge \
	--rounds 3 --samples 1500 --all-samples 800 \
	--variants alone,gap-sleep,krex,krex-wev,krex-nospin,krex-nospin-wev >"$O/edge2.txt" 2>&1
echo "rc=$?" >>"$O/edge2.txt"
st proof
OUT=/tmp/o/proof timeout -k 10 300 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
st done
cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
cat /tmp/o/proof/fidelity/fidelity.md /tmp/o/proof/env.txt >"$O/proof-fidelity.md" 2>/dev/null
tar czf "$O/call2.tgz" -C /tmp/o edge proof.txt proof/fidelity/fidelity.md proof/fidelity/fidelity.csv \
	proof/fidelity/raw proof/entry2/raw proof/entry3/raw proof/agents/agents.md proof/env.txt 2>/dev/null
grep -A30 '^| phase' "$O/edge2.txt"; cat "$O/proof.md" "$O/steps.txt"; tail -3 /tmp/o/proof.txt
