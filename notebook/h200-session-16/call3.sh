#!/bin/bash
# Device call 3 of session 16 (issue 18): call 2's proof over MPS had every
# KREX region degraded (0/1000 clean and the like), though krexd no longer
# counted the MPS server as foreign ("over MPS" in its log).  Why?  Small
# fidelity runs over MPS, 1 ms, a region per sample, 40 samples, with no
# sibling, each sibling kind alone and all, krexd at debug; every file they
# write (the certificates, krexd's logs) packed into one tarball.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv; } >"$O/env.txt" 2>&1
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
st "fidelity over MPS, mixes none,async,sync,torch,all"
timeout -k 10 150 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/f3 \
	--sizes 1 --samples 1:40 --mixes none,async,sync,torch,all --sample-mixes none,async,sync,torch,all \
	--modes krex --regions sample --budget-s 120 --krexd-opt region_log=/tmp/o/f3/regions.log >/tmp/o/f3.txt 2>&1
echo "rc=$?" >>/tmp/o/f3.txt
timeout 10 nvidia-smi >/tmp/o/f3/nvidia-smi.txt 2>&1
cp /tmp/mps/log/*.log /tmp/o/f3/ 2>/dev/null
st "mps stop"
mps_stop
trap - EXIT
tar czf "$O/f3.tgz" -C /tmp/o f3 f3.txt
st done
cat /tmp/o/f3/fidelity.md 2>/dev/null; tail -3 /tmp/o/f3.txt
grep -o '"outcome":"[a-z]*"\|"note":"[^"]*"' /tmp/o/f3/regions.log 2>/dev/null | sort | uniq -c | sort -rn | head -20
cat "$O/steps.txt"
