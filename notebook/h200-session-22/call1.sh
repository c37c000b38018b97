#!/bin/bash
# Device call 1 of session 22 (issue 18): the batch-style excess (session 21's
# call 4: many samples a region, 0.1 / 1 ms wall p95 +1.30 / +0.66 % against
# alone, no region edge inside; call 3 -0.74 / -0.13 %).  batchedge.py: alone,
# alone beside an NVML reader every 20 ms (krexd's clock samples in a held
# region) and every 2 ms, the gate without regions, batch regions, with no
# sibling and with every sibling; each batch sample's place in its region.
# Then the same batch regions under a krexd with isolate=none, then
# test/gpu/proof.sh (session 21's legacy-stream check and cgroup fix had not
# run on the GPU).
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv >"$O/env.txt" 2>&1
st batchedge
timeout -k 10 170 python3 notebook/h200-session-22/batchedge.py --builddir "$B" --out /tmp/o/be \
	--rounds 4 >"$O/batchedge.txt" 2>&1
echo "rc=$?" >>"$O/batchedge.txt"
st batchedge-noiso
timeout -k 10 70 python3 notebook/h200-session-22/batchedge.py --builddir "$B" --out /tmp/o/be2 \
	--rounds 4 --phases all --variants krex --noiso --tag=-noiso >"$O/batchedge-noiso.txt" 2>&1
echo "rc=$?" >>"$O/batchedge-noiso.txt"
python3 notebook/h200-session-22/batchedge.py --out /tmp/o/be,/tmp/o/be2 --summarize >"$O/batchedge-table.txt" 2>&1
st proof
OUT=/tmp/o/proof timeout -k 10 290 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
st done
cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
cat /tmp/o/proof/fidelity/fidelity.md /tmp/o/proof/env.txt >"$O/proof-fidelity.md" 2>/dev/null
tar czf "$O/call1.tgz" -C /tmp/o be be2 proof.txt proof/fidelity/fidelity.md proof/fidelity/fidelity.csv \
	proof/fidelity/raw proof/agents/agents.md proof/env.txt 2>/dev/null
cat "$O/batchedge-table.txt" "$O/proof.md" "$O/steps.txt"; tail -3 /tmp/o/proof.txt
