#!/bin/bash
# Device call 1 planned in session 25 (issue 18; not run in session 25: no
# device machine was lent).  Does MPS raise KREX's rate with the current
# code, and does the CPU hold the rate at 32 sessions?  agents.py, plain
# sharing and KREX at 32 sessions without MPS, then at 24 and 32 over an MPS
# control daemon of the call's own, the proof's agents windows (52 s, 44 s
# counted); the breakdown's CPU columns (cpu_iter_s, cmd_cpu_s,
# cpu_util_pct, from session 25) say whether the GPU commands spin-wait and
# the CPU is saturated (session 24's call 1: the compile step 8.7 s for 4.0
# nominal at 32 sessions; its call 2: 4.2 s).  About 420 s.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
agents() { # NAME N
	timeout -k 10 "$3" python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" \
		--out "/tmp/o/$1" --n "$2" --modes share,krex --scale 0.2 --window 52 --warm-s 8 \
		--budget-s $(($3 - 20)) >"/tmp/o/$1.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/$1.txt"
	tables "/tmp/o/$1" agents.md agents-breakdown.md agents-commands.md agents-siblings.md \
		>"$O/call1-$1.md"
	tail -3 "/tmp/o/$1.txt" >>"$O/call1-$1.md"
}
st "agents share,krex 32 without MPS"
agents nomps 32 160
mps_start
st "agents share,krex 24,32 over MPS"
agents mps 24,32 280
mps_stop
st done
cut -c1-300 "$O"/call1-*.md
cat "$O/steps.txt"
