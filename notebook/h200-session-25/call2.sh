#!/bin/bash
# Device call 2 of session 25 (issue 18): call 1 found KREX over MPS at 5482
# / 5318 benchmarks an hour at 24 / 32 sessions (3845 at 32 without MPS),
# but only 38 of 67 and 29 of 65 of its regions clean (47 of 47 without
# MPS; session 16's call 4, over MPS: 57 of 58, 53 of 56).  Why?  KREX alone
# at 32 sessions over MPS, the same window, krexd writing its region log
# (region_log): every degraded region's cause counted (causes.py), and
# krexd's MPS lines.  About 150 s.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
mps_start
st "agents krex 32 over MPS, region log"
timeout -k 10 200 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" \
	--out /tmp/o/d --n 32 --modes krex --scale 0.2 --window 52 --warm-s 8 --budget-s 180 \
	--krexd-opt region_log=/tmp/o/regions.jsonl >/tmp/o/d.txt 2>&1
echo "rc=$?" >>/tmp/o/d.txt
mps_stop
st done
{
	python3 notebook/h200-session-25/causes.py /tmp/o/regions.jsonl
	echo "==== krexd's log: MPS, foreign, not counted"
	grep -h -i -E "mps|foreign|not counted" /tmp/o/d/agents.krex.32.krexd.log | cut -c1-300 | sort | uniq -c | sort -rn | head -20
	tables /tmp/o/d agents.md agents-breakdown.md
	tail -3 /tmp/o/d.txt
} >"$O/call2-causes.md" 2>&1
gzip -c /tmp/o/regions.jsonl >"$O/call2-regions.jsonl.gz"
cut -c1-400 "$O/call2-causes.md" | head -60
cat "$O/steps.txt"
