#!/bin/bash
# Device call 3 of session 20 (issue 18): call 1's favordynmods pair again
# at 32 sessions (a fresh machine: off first, on last, the kernel keeping it
# on), with the proof (test/gpu/proof.sh, krexd's defaults: favordynmods
# off) between them; proof_table.py now judges the fidelity goals against
# alone before and after, pooled.
. notebook/gpu-call-prologue.sh
N=notebook/h200-session-20
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
run() { # NAME N KREXD-OPT...
	local n=$1 s=$2; shift 2
	st "agents $s krex $*"
	timeout -k 10 110 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" \
		--out /tmp/o/$n --n $s --modes krex --scale 0.2 --window 65 --warm-s 12 --budget-s 100 \
		--krexd-opt region_log=/tmp/o/$n.regions "$@" >/tmp/o/$n.txt 2>&1
	echo "rc=$?" >>/tmp/o/$n.txt
	python3 $N/madein.py /tmp/o/$n >>"$O/madein.txt" 2>&1
	rm -rf /tmp/o/$n/raw
}
run off32 32
st proof
OUT=/tmp/o/proof timeout -k 10 300 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
run on32 32 --krexd-opt favordynmods=yes
st done
for d in off32 on32; do
	f=/tmp/o/$d.regions
	echo "==== $d: regions $(grep -c '"outcome"' $f 2>/dev/null), clean $(grep -c '"outcome": *"clean"' $f 2>/dev/null)"
	cat /tmp/o/$d/agents.md /tmp/o/$d/agents-breakdown.md /tmp/o/$d/agents-commands.md 2>/dev/null
	tail -2 /tmp/o/$d.txt
done >"$O/summary3.txt" 2>&1
cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
cat /tmp/o/proof/fidelity/fidelity.md /tmp/o/proof/env.txt >"$O/proof-fidelity.md" 2>/dev/null
tar czf "$O/call3.tgz" -C /tmp/o off32 on32 off32.txt on32.txt off32.regions on32.regions proof.txt \
	proof/fidelity/fidelity.md proof/fidelity/fidelity.csv proof/fidelity/raw proof/entry2/raw proof/entry3/raw \
	proof/agents/agents.md proof/env.txt 2>/dev/null
grep -E '^(====|[|] 32 [|] krex [|])' "$O/summary3.txt"
cat "$O/madein.txt" "$O/proof.md" "$O/steps.txt"; tail -3 /tmp/o/proof.txt
