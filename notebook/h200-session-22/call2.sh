#!/bin/bash
# Device call 2 of session 22 (issue 18): call 1 found the gate without a
# region 3 % slower at the p95 of a 0.1 ms kernel than alone (4 rounds of 4).
# The bounded queue queried its marks before a mark's launch, between the
# thread's own two events; now gq_before() makes no event call unless a wait
# may be needed.  batchedge.py with no sibling: alone, the new gate, the old
# gate (this tree with the old gate/gate_queue.[ch], carried in .gpu/old),
# batch regions; krex-launchrate (empty kernels) alone and under both gates.
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
. notebook/h200-session-22/oldgate.sh
st batchedge
timeout -k 10 300 python3 notebook/h200-session-22/batchedge.py --builddir "$B" --out /tmp/o/be \
	--rounds 4 --phases none --variants alone,gate,gate-old,krex --old-builddir /tmp/krex-old-build \
	--launchrate 200000 >"$O/batchedge2.txt" 2>&1
echo "rc=$?" >>"$O/batchedge2.txt"
python3 notebook/h200-session-22/batchedge.py --out /tmp/o/be --summarize >"$O/batchedge2-table.txt" 2>&1
st done
tar czf "$O/call2.tgz" -C /tmp/o be 2>/dev/null
cat "$O/batchedge2-table.txt"; grep launchrate "$O/batchedge2.txt"; cat "$O/steps.txt"
