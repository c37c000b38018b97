#!/bin/bash
# Device call 4 of session 20 (issue 18): where the 0.1 ms per-sample wall
# excess is (about 3 us at p95, events +0.7-0.9 %, calls 2-3).  fidelity.py,
# one region per sample at 0.1 ms, 1500 samples, settle=wait: A, every
# sibling, modes krex and krex-noiso (isolate=none: the owner's thread is not
# moved to its cores at the grant) side by side with one alone; C, no sibling
# at all.  Each against alone at the start and before and after
# (brk_wall_p95_pct).
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
fid() { # NAME MIX FIDELITY-OPT...
	local n=$1 m=$2; shift 2
	st "fidelity $n $m $*"
	timeout -k 10 70 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/$n \
		--sizes 0.1 --samples 0.1:1500 --mixes $m --sample-mixes $m --ablation-mixes $m \
		--regions sample \
		--budget-s 55 --krexd-opt settle=wait "$@" >/tmp/o/$n.txt 2>&1
	echo "rc=$?" >>/tmp/o/$n.txt
	{ echo "==== $n: mix $m $*"; grep -E '^[|] (size_ms|0.1) ' /tmp/o/$n/fidelity.md; grep -E '^[|] 0.1 ' /tmp/o/$n/fidelity-entry.md; } >>"$O/call4.txt" 2>&1
}
fid A all --modes alone,krex,krex-noiso
fid C none --modes alone,krex
st done
tar czf "$O/call4.tgz" -C /tmp/o A C A.txt C.txt 2>/dev/null
cat "$O/call4.txt" "$O/steps.txt"
