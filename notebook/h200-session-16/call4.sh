#!/bin/bash
# Device call 4 of session 16 (issue 18): krexd no longer counts itself as
# foreign (call 3: over MPS, NVML lists krexd as an MPS client).  Under an
# MPS control daemon of this call's own: test/gpu/proof.sh (all of issue
# 18's goals; are the regions clean now?), then agents.py, krex only, at
# 16/24/32 sessions with 50 s windows (the proof's 18 s are too few
# benchmarks to judge the rate).  Everything packed into one tarball.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
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
st "proof over MPS"
OUT=/tmp/o/proof timeout -k 10 300 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
st "agents krex 16,24,32 over MPS, 50 s windows"
timeout -k 10 230 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/ag \
	--n 16,24,32 --modes krex --scale 0.2 --window 50 --warm-s 10 --budget-s 215 >/tmp/o/ag.txt 2>&1
echo "rc=$?" >>/tmp/o/ag.txt
st "mps stop"
mps_stop
trap - EXIT
rm -rf /tmp/o/proof/fidelity/raw /tmp/o/ag/raw
tar czf "$O/call4.tgz" -C /tmp/o proof proof.txt ag ag.txt
st done
sed -n '/## Issue 18/,$p' /tmp/o/proof.txt
grep -h "| krex | all | \(sample\|batch\) |" /tmp/o/proof/fidelity/fidelity.md | cut -c1-220
cat /tmp/o/ag/agents.md 2>/dev/null; tail -3 /tmp/o/ag.txt
cat "$O/steps.txt"
