#!/bin/bash
# Device call 2 of session 24 (issue 18): call 1 found KREX at 3518 / 4009 /
# 3682 benchmarks an hour at 16 / 24 / 32 sessions (76 / 70 / 65 % of the
# bound), well under sessions 18-22 on the same code (the command lock's
# hold 2.8 s against 2.06 then).  Is that KREX or this round's machine?
# agents.py with plain sharing (no lock, no KREX) and KREX side by side at
# each N, the same windows as the proof's agents part (52 s, 44 counted).
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st "agents 16,24,32 share,krex"
timeout -k 10 420 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" \
	--out /tmp/o/a --n 16,24,32 --modes share,krex --scale 0.2 --window 52 --warm-s 8 \
	--budget-s 380 >/tmp/o/a.txt 2>&1
echo "rc=$?" >>/tmp/o/a.txt
st done
for f in agents.md agents-breakdown.md; do
	[ -f /tmp/o/a/$f ] && { echo "==== $f"; cat /tmp/o/a/$f; }
done >"$O/call2-agents.md"
tail -5 /tmp/o/a.txt >>"$O/call2-agents.md"
cut -c1-300 "$O/call2-agents.md"; cat "$O/steps.txt"
