#!/bin/bash
# Device call 2 of session 18 (issue 18): the rate against the bound at 16,
# 24 and 32 sessions with the drivers running programs, not libtool's
# wrappers (call 1 found the lock's hold 25 % shorter without them).  krex
# and share (no lock, no KREX) at each N, the command lock at 32; 53 s
# counted each; the commands table and NVML's GPU utilisation per window.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st "agents 16,24,32: krex, share (65 s windows, 53 s counted)"
timeout -k 10 400 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/ag \
	--n 16,24,32 --modes krex,share --scale 0.2 --window 65 --warm-s 12 --budget-s 390 >/tmp/o/ag.txt 2>&1
echo "rc=$?" >>/tmp/o/ag.txt
st "agents 32: cmd"
timeout -k 10 80 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/agc \
	--n 32 --modes cmd --scale 0.2 --window 65 --warm-s 12 --budget-s 75 >/tmp/o/agc.txt 2>&1
echo "rc=$?" >>/tmp/o/agc.txt
rm -rf /tmp/o/ag/raw /tmp/o/agc/raw
tar czf "$O/call2.tgz" -C /tmp/o ag ag.txt agc agc.txt
st done
for d in ag agc; do echo "==== $d"; cat /tmp/o/$d/agents.md /tmp/o/$d/agents-breakdown.md /tmp/o/$d/agents-commands.md 2>/dev/null; tail -2 /tmp/o/$d.txt; done
cat "$O/env.txt" "$O/steps.txt"
