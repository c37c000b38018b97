#!/bin/bash
# Device call 1 of session 16 (issue 18, throughput): session 15 found KREX
# at plain time-slicing's rate and both at 79 % of the perfect sharer at 32
# sessions, with the CPU ruled out (call 3): what is left is the GPU shared
# among many processes' contexts.  Does NVIDIA MPS (one shared context on
# the GPU, the processes its clients) take that back, and do KREX's regions
# still work and time cleanly over MPS clients?  An experiment, not a
# feature: KREX has no MPS support; its foreign-process check will see the
# MPS server as a process that is not a participant.  At 32 sessions, the
# same run as session 15's call 1 at N=32 (default waits), under an MPS
# control daemon of this call's own (private pipe and log directories,
# stopped by the EXIT trap).  Nothing on the GPU's settings is changed.
. notebook/gpu-call-prologue.sh
{ date -u; nproc; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv
  command -v nvidia-cuda-mps-control nvidia-cuda-mps-server; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
command -v nvidia-cuda-mps-control >/dev/null || { echo "no nvidia-cuda-mps-control"; exit 0; }
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps/log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
mps_stop() {
	echo quit | timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1
	sleep 1
	pkill -KILL -f nvidia-cuda-mps 2>/dev/null
	cp -r /tmp/mps/log "$O/mps-log" 2>/dev/null
}
trap mps_stop EXIT
st "mps start"
timeout 10 nvidia-cuda-mps-control -d || { echo "MPS control daemon did not start"; exit 0; }
# The processes on the GPU 40 s into the run (MPS clients show as M+C).
( sleep 40; timeout 10 nvidia-smi >"$O/nvidia-smi-during.txt" 2>&1 ) &
st "agents 32 share,krex over MPS"
timeout -k 10 220 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/ag-mps \
	--n 32 --modes share,krex --scale 0.2 --window 65 --warm-s 15 --budget-s 200 >/tmp/o/ag-mps.txt 2>&1
echo "rc=$?" >>/tmp/o/ag-mps.txt
{ for f in agents.md agents-breakdown.md; do
	[ -f /tmp/o/ag-mps/$f ] && { echo; cat /tmp/o/ag-mps/$f; }; done
  tail -5 /tmp/o/ag-mps.txt; } >"$O/agents-call1.md"
mkdir -p "$O/ag-mps"; cp /tmp/o/ag-mps/*.md /tmp/o/ag-mps/*.csv /tmp/o/ag-mps/*.json "$O/ag-mps/" 2>/dev/null
st "mps stop"
mps_stop
trap - EXIT
st done
cat "$O/env.txt" "$O/agents-call1.md" "$O/steps.txt"; tail -20 "$O/nvidia-smi-during.txt" 2>/dev/null
