#!/bin/bash
# Device call 2 of session 16 (issue 18): call 1 found KREX over NVIDIA MPS
# at 5688 benchmarks an hour at 32 sessions (4752 without MPS in session
# 15), its 79 regions all degraded for the MPS server, a process that is not
# a participant.  krexd now knows the server (3a15d57).  This call: the
# reference without MPS (fidelity.py, alone, 0.1/1/10 ms, the proof's sample
# counts), then test/gpu/proof.sh, all of issue 18's goals, under an MPS
# control daemon of this call's own (stopped by the EXIT trap).  Are the
# regions over MPS clean, and are their timings as good as alone on the GPU
# without MPS?  Nothing on the GPU's settings is changed.
. notebook/gpu-call-prologue.sh
{ date -u; nproc; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st "reference without MPS: fidelity alone"
timeout -k 10 80 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/ref \
	--sizes 0.1,1,10 --samples 0.1:1000,1:1000,10:300 --mixes all --modes alone --regions batch \
	--budget-s 60 >/tmp/o/ref.txt 2>&1
echo "rc=$?" >>/tmp/o/ref.txt
{ cat /tmp/o/ref/fidelity.md 2>/dev/null; tail -3 /tmp/o/ref.txt; } >"$O/ref-no-mps.md"
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
OUT=/tmp/o/proof timeout -k 10 440 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
cp /tmp/o/proof.txt "$O/proof-over-mps.txt"
mkdir -p "$O/proof"
cp /tmp/o/proof/*.md /tmp/o/proof/env.txt "$O/proof/" 2>/dev/null
for d in fidelity agents; do cp /tmp/o/proof/$d/*.md "$O/proof/" 2>/dev/null; done
grep -rh "over MPS" /tmp/o/proof 2>/dev/null | head -3 >"$O/krexd-over-mps.txt"
st "mps stop"
mps_stop
trap - EXIT
st done
cat "$O/ref-no-mps.md"; tail -40 "$O/proof-over-mps.txt"; cat "$O/krexd-over-mps.txt" "$O/steps.txt"
