#!/bin/bash
# Device call 1 of session 18 (issue 18): where a GPU command's time goes at
# 24 sessions.  start-bench.py (what `krex run` adds to a start; krexd's
# time to make a participant, the cgroup migration), then agents.py at 24
# sessions, cmd, share and krex, with the new commands table (start-up, GPU
# work, exit per command; NVML's GPU utilisation), the build tree's programs
# run without libtool's wrapper scripts (the default now); then krex once
# more with the wrappers, as every earlier run had them.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; nproc; grep cgroup /proc/mounts; uname -r; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st "start-bench 1 and 8 at once"
{ timeout -k 5 60 python3 test/perf/start-bench.py --builddir "$B" --srcdir "$PWD" --n 50 --out /tmp/o/sb1
  timeout -k 5 60 python3 test/perf/start-bench.py --builddir "$B" --srcdir "$PWD" --n 20 --parallel 8 --out /tmp/o/sb8; } >"$O/start-bench.txt" 2>&1
st "agents 24: cmd, share, krex (80 s windows, 65 s counted)"
timeout -k 10 300 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/ag \
	--n 24 --modes cmd,share,krex --scale 0.2 --window 80 --warm-s 15 --budget-s 290 >/tmp/o/ag.txt 2>&1
echo "rc=$?" >>/tmp/o/ag.txt
st "agents 24: krex with libtool's wrappers (as before)"
timeout -k 10 90 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/agw \
	--n 24 --modes krex --scale 0.2 --window 80 --warm-s 15 --budget-s 85 --libtool-wrappers >/tmp/o/agw.txt 2>&1
echo "rc=$?" >>/tmp/o/agw.txt
rm -rf /tmp/o/ag/raw /tmp/o/agw/raw
tar czf "$O/call1.tgz" -C /tmp/o ag ag.txt agw agw.txt sb1 sb8
st done
cat "$O/start-bench.txt" | grep -v "^\["
for d in ag agw; do echo "==== $d"; cat /tmp/o/$d/agents.md /tmp/o/$d/agents-breakdown.md /tmp/o/$d/agents-commands.md 2>/dev/null; tail -2 /tmp/o/$d.txt; done
cat "$O/env.txt" "$O/steps.txt"
