#!/bin/bash
# Device call 3 of session 25 (issue 18): call 2 found why KREX's regions
# over MPS are degraded: 37 of 41 causes "participant N, made during the
# region, has its process N on the GPU" (a command started during the
# region; over MPS NVML lists a process as an MPS client from its CUDA
# initialisation, before the context the gate holds back).  Are those
# timings worse?  KREX at 32 over MPS again, the victims' samples split by
# their region's certificate (timing.py), the causes counted again.
# About 150 s.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
mps_start
st "agents krex 32 over MPS"
timeout -k 10 200 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" \
	--out /tmp/o/e --n 32 --modes krex --scale 0.2 --window 52 --warm-s 8 --budget-s 180 \
	--krexd-opt region_log=/tmp/o/regions.jsonl >/tmp/o/e.txt 2>&1
echo "rc=$?" >>/tmp/o/e.txt
mps_stop
st done
{
	python3 notebook/h200-session-25/timing.py /tmp/o/e krex 32
	head -2 /tmp/o/e/agents.md
	python3 notebook/h200-session-25/causes.py /tmp/o/regions.jsonl
	tables /tmp/o/e agents.md
	tail -3 /tmp/o/e.txt
} >"$O/call3-timing.md" 2>&1
cut -c1-300 "$O/call3-timing.md"
cat "$O/steps.txt"
