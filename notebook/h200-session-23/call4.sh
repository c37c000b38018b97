#!/bin/bash
# Device call 4 of session 23 (issue 18): what the isolation costs and buys
# when every sibling is frozen (the proof's mix: isolate=participants moves
# only siblings of the region's GPU, all frozen by cgroup2 all region).
# fidelity.py, every sibling, settle=wait, one region per sample at 0.1 and
# 1 ms, modes alone, krex and krex-noiso (isolate=none) interleaved in 3
# rounds; then krexd's cost line of each region (isolate_us, undo_us,
# thaw_us, state_us, iso_cpuset) per mode from the last round's logs.
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st fidelity
timeout -k 10 240 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/iso \
	--sizes 0.1,1 --samples 0.1:600,1:600 --mixes all --sample-mixes all \
	--modes alone,krex,krex-noiso --regions sample --ablation-regions sample --rounds 3 \
	--budget-s 200 --krexd-opt settle=wait >/tmp/o/iso.txt 2>&1
echo "rc=$?" >>/tmp/o/iso.txt
st costs
for m in krex krex-noiso; do
	echo "## $m (krexd's cost lines, last round)"
	grep -h "cost siblings" /tmp/o/iso/$m.all.krexd.log | python3 -c '
import re, sys
v = {}
for ln in sys.stdin:
    for k, x in re.findall(r"(\w+)=(\d+)", ln):
        v.setdefault(k, []).append(int(x))
def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]
for k in ("entry_us", "isolate_us", "iso_cpuset", "iso_affinity", "freeze_us", "undo_us", "thaw_us", "exit_us", "state_writes", "state_us"):
    if k in v:
        print("%s n %d p50 %d p95 %d" % (k, len(v[k]), q(v[k], .5), q(v[k], .95)))
'
done >"$O/costs.txt" 2>&1
cp /tmp/o/iso/fidelity.md /tmp/o/iso/fidelity-entry.md /tmp/o/iso/fidelity-rounds.md "$O/" 2>/dev/null
tar czf "$O/call4.tgz" -C /tmp/o iso.txt iso 2>/dev/null
st done
tail -3 /tmp/o/iso.txt; cat "$O/costs.txt"; cat "$O/fidelity.md" "$O/fidelity-entry.md" | cut -c1-400; cat "$O/steps.txt"
