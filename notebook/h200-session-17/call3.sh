#!/bin/bash
# Device call 3 of session 17 (issue 18): exiting-siblings.sh on the H200
# (60 s): do drains meet siblings whose CUDA is shutting down, and what does
# the driver answer them (status 2 needs CUDA_ERROR_DEINITIALIZED)?
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st "exiting siblings, 60 s"
OUT=/tmp/o/ex timeout -k 10 150 bash notebook/h200-session-17/exiting-siblings.sh "$B" 60 >/tmp/o/ex.txt 2>&1
echo "rc=$?" >>/tmp/o/ex.txt
tar czf "$O/call3.tgz" -C /tmp/o ex ex.txt
st done
cat /tmp/o/ex.txt
cat "$O/steps.txt"
