#!/bin/bash
# Device call 5 of session 16 (issue 18): does MPS raise KREX's rate, side
# by side in one call?  agents.py, krex only, 24 and 32 sessions, 40 s
# counted: first without MPS, then under an MPS control daemon of this
# call's own (calls 1 and 4 were over MPS only, against session 15's runs).
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
agents() {
	timeout -k 10 130 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/ag-$1 \
		--n 24,32 --modes krex --scale 0.2 --window 50 --warm-s 10 --budget-s 120 >/tmp/o/ag-$1.txt 2>&1
	echo "rc=$?" >>/tmp/o/ag-$1.txt
}
st "agents krex 24,32 without MPS"
agents nomps
command -v nvidia-cuda-mps-control >/dev/null || { echo "no nvidia-cuda-mps-control"; exit 0; }
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps/log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
mps_stop() {
	echo quit | timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1
	sleep 1
	pkill -KILL -f nvidia-cuda-mps 2>/dev/null
}
trap mps_stop EXIT
st "mps start"
timeout 10 nvidia-cuda-mps-control -d || { echo "MPS control daemon did not start"; exit 0; }
st "agents krex 24,32 over MPS"
agents mps
st "mps stop"
mps_stop
trap - EXIT
for m in nomps mps; do rm -rf /tmp/o/ag-$m/raw; done
tar czf "$O/call5.tgz" -C /tmp/o ag-nomps ag-nomps.txt ag-mps ag-mps.txt
st done
for m in nomps mps; do echo "==== $m"; cat /tmp/o/ag-$m/agents.md 2>/dev/null; tail -2 /tmp/o/ag-$m.txt; done
cat "$O/steps.txt"
