#!/bin/bash
# Device call 1 of session 26 (issue 18).  Session 25's call 2 found 29 of
# 61 regions degraded at 32 sessions over MPS, 37 of 41 causes a command
# started during the region listed as an MPS client.  3a35267: the gate
# registers with its contexts held, and krexd lists such a process over MPS
# without noting it.  The same run again (KREX at 32 over MPS, session 25's
# call 2's options) on this code: the causes left (causes.py), and the timed
# samples of clean regions with and without a late MPS client not noted
# (split.py, by the region ids agents.py now records).  About 150 s.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
mps_start
st "agents krex 32 over MPS, region log"
timeout -k 10 200 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" \
	--out /tmp/o/a --n 32 --modes krex --scale 0.2 --window 52 --warm-s 8 --budget-s 180 \
	--krexd-opt region_log=/tmp/o/regions.jsonl >/tmp/o/a.txt 2>&1
echo "rc=$?" >>/tmp/o/a.txt
mps_stop
st done
L=/tmp/o/a/agents.krex.32.krexd.log
{
	python3 notebook/h200-session-25/causes.py /tmp/o/regions.jsonl
	python3 notebook/h200-session-26/split.py /tmp/o/a krex 32 "$L"
	echo "==== krexd's log: late processes over MPS not noted, and noted"
	grep -c "is listed (an MPS client" "$L"
	grep -c "made during the region, has its process" "$L"
	tables /tmp/o/a agents.md agents-breakdown.md
	tail -3 /tmp/o/a.txt
} >"$O/call1.md" 2>&1
gzip -c /tmp/o/regions.jsonl >"$O/call1-regions.jsonl.gz"
cut -c1-300 "$O/call1.md" | head -40
cat "$O/steps.txt"
