#!/bin/bash
# Device call 4 of session 12 (issue 18, warm edges): call 3 found a 0.1 ms
# kernel after a 1.5 ms idle gap 3.2 % slower in event time (p95) when the
# host thread slept through the gap, and 0.8 % when it spun (3 untimed
# kernels after both).  The owner sleeps in krex_region_begin while krexd
# drains, freezes and isolates.  KREX_REGION_SPIN_US=20000 (libregion: wait
# for the grant without sleeping, at most 20 ms) against the default,
# alternated (A B A B): fidelity.py, one region per sample, 0.1 and 1 ms,
# every sibling, alone / krex / alone-gapped.
. notebook/gpu-call-prologue.sh
{ date -u; uname -r; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv; } >"$O/env.txt" 2>&1
run() {
	local name=$1 spin=$2
	st "fidelity $name"
	KREX_REGION_SPIN_US=$spin timeout -k 5 100 python3 test/perf/fidelity.py --full --builddir "$B" \
		--srcdir "$PWD" --out "/tmp/o/$name" --sizes 0.1,1 --samples 0.1:400,1:300 --mixes all \
		--sample-mixes all --modes alone,krex,alone-gapped --regions sample --budget-s 90 \
		--krexd-opt settle=wait >"/tmp/o/$name.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/$name.txt"
	{ echo "==== $name (KREX_REGION_SPIN_US=$spin)"; sed -n '/^| size_ms/,/^$/p' /tmp/o/$name/fidelity.md | head -12; } >>"$O/fidelity.md"
}
run a1-sleep 0
run b1-spin 20000
run a2-sleep 0
run b2-spin 20000
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.jsonl' a1-sleep b1-spin a2-sleep b2-spin 2>/dev/null
cat "$O/fidelity.md"; cat "$O/steps.txt"
