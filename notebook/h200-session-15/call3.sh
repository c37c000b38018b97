#!/bin/bash
# Device call 3 of session 15 (issue 18, throughput): calls 1-2 found KREX at
# plain sharing's rate and both 79-94 % of the perfect sharer.  Is the rest
# the GPU's time-slicing, or the CPU the waiting sessions spin on (the
# driver's default: a process with fewer contexts than CPUs spins in every
# synchronize; in share mode at 32 sessions the compile step, fixed CPU
# work, took 40 % longer than alone)?  At 32 sessions in one run: share with
# the default wait, then share and krex with KREX_WL_SCHED=blocking (the
# workloads' threads sleep in the driver while they wait).  And
# test/gpu/gpu_check.sh on the GPU (KREX_WL_SCHED there for real).
. notebook/gpu-call-prologue.sh
{ date -u; nproc; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st gpu_check
top_srcdir=$PWD top_builddir=$B timeout 60 sh test/gpu/gpu_check.sh >"$O/gpu_check.txt" 2>&1
echo "rc=$?" >>"$O/gpu_check.txt"
for m in auto blocking; do
	modes=share; [ $m = blocking ] && modes=share,krex
	st "agents 32 $modes, wait $m"
	( [ $m = blocking ] && export KREX_WL_SCHED=blocking
	timeout -k 10 200 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/ag-$m \
		--n 32 --modes $modes --scale 0.2 --window 65 --warm-s 15 --budget-s 190 >/tmp/o/ag-$m.txt 2>&1
	echo "rc=$?" >>/tmp/o/ag-$m.txt )
	{ echo "==== wait $m"; for f in agents.md agents-breakdown.md; do
		[ -f /tmp/o/ag-$m/$f ] && { echo; cat /tmp/o/ag-$m/$f; }; done
	  tail -3 /tmp/o/ag-$m.txt; } >>"$O/agents-call3.md"
done
st done
cat "$O/gpu_check.txt" "$O/agents-call3.md" "$O/steps.txt"
