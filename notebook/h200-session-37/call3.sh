#!/bin/bash
# Device call 3 of session 37 (issue 18): do GPU contexts made and ended by
# another process slow kernels being timed?  KREX's commands lose their
# start-up against plain sharing in their context (calls 1-2: ctx_s 2-3x
# sharing's, stopped by other sessions' regions: held at the gate or frozen
# halfway), and krexd counts a context made during a region against it; if
# making one did not disturb the GPU, the gate could let contexts be made
# during regions.  krex-victim times 1 ms and 0.1 ms kernels (no KREX, no
# region) alone, beside ctxchurn.py proc (a process after another: cuInit,
# the primary context, 64 MiB, exit) and beside ctxchurn.py inproc
# (cuCtxCreate, 64 MiB, free, cuCtxDestroy, again), 3 interleaved rounds,
# without MPS and then over an MPS control daemon of the call's own.  No
# GPU setting changed.  About 200 s with the build.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
N=notebook/h200-session-37
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks_event_reasons.active \
	--format=csv >"$O/env.txt" 2>&1
st "contexts made beside timed kernels, no MPS"
KREX_CHURN_TAG=nomps timeout 170 bash $N/ctxchurn-run.sh "$B" /tmp/o/cc 3
mps_start
st "the same over MPS"
KREX_CHURN_TAG=mps timeout 170 bash $N/ctxchurn-run.sh "$B" /tmp/o/cc 3
mps_stop
st done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks_event_reasons.active --format=csv >>"$O/env.txt" 2>&1
{
	cat "$O/steps.txt"
	timeout 60 python3 $N/ctxchurn-sum.py /tmp/o/cc
	grep -h '^err' /tmp/o/cc/raw/*.churn | sort | uniq -c
} >"$O/call3.md" 2>&1
cp /tmp/o/cc/runs.txt "$O/"
tar czf "$O/call3.tgz" -C /tmp/o cc 2>/dev/null
rm -f "$O/steps.txt"
[ -s "$O/build.err" ] || rm -f "$O/build.err"
cat "$O/call3.md"
pgrep -af 'ctxchurn|krex-victim' || echo "no churner or victim left"
