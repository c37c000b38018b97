#!/bin/bash
# Device call 3 of session 7:
#  - issue 24: test/gpu/ungated-on-gpu.sh (a sibling that never joined the
#    gate named in the certificate; degraded only with a process on the GPU)
#  - issue 18: drain_boost (krexd lowers a drain thread's nice while it
#    waits for it), side by side in this one call: entry all mix with
#    drain_boost=10 (the default) x2 and =0 x1; agents at 24 and 32
#    sessions, cmd, krex (boost 10), krex with drain_boost=0
set -u
O=${OUT:?}
mkdir -p /tmp/o
t0=$(date +%s)
st() { echo "== $(($(date +%s) - t0)) s: $*" | tee -a "$O/steps.txt"; }
st build
B=$(timeout 90 bash scripts/gpu-build.sh 2>"$O/build.err" | tail -1)
[ -x "$B/krexd/krexd" ] || { echo "BUILD FAILED"; tail -30 "$O/build.err"; exit 1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
st ungated
OUT=/tmp/o/ungated timeout -k 5 150 bash test/gpu/ungated-on-gpu.sh "$B" >/tmp/o/ungated.txt 2>&1
echo "rc=$?" >>/tmp/o/ungated.txt
timeout 60 /usr/local/cuda/bin/nvcc -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
	-o /tmp/o/fma.fatbin test/workloads/fma.cu >/tmp/o/nvcc.log 2>&1
export KREX_WL_MODULE=/tmp/o/fma.fatbin
for run in b10-1 b0 b10-2; do
	st "entry $run"
	boost=${run%%-*}; boost=${boost#b}
	timeout -k 5 70 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir . \
		--out /tmp/o/entry-$run --sizes 1 --samples 1:300 --mixes all --sample-mixes all --modes krex --regions sample \
		--budget-s 55 --krexd-opt settle=wait --krexd-opt drain_boost=$boost >/tmp/o/entry-$run.txt 2>&1
	echo "rc=$?" >>/tmp/o/entry-$run.txt
done
for b in 10 0; do
	st "agents boost $b"
	m=krex; [ $b = 10 ] && m=cmd,krex
	timeout -k 10 120 python3 test/perf/agents.py --full --builddir "$B" --srcdir . --out /tmp/o/agents-b$b \
		--n 24,32 --modes $m --scale 0.2 --window 24 --warm-s 6 --budget-s 110 \
		--krexd-opt drain_boost=$b >/tmp/o/agents-b$b.txt 2>&1
	echo "rc=$?" >>/tmp/o/agents-b$b.txt
done
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' . 2>/dev/null
echo "---- ungated"; tail -14 /tmp/o/ungated.txt
for run in b10-1 b0 b10-2; do
	echo "---- entry $run"; grep -A4 "Where region entry" /tmp/o/entry-$run.txt | tail -1 | cut -c1-200
	grep -A8 "Drain per sibling" /tmp/o/entry-$run.txt | grep "^| krex" | cut -c1-140
done
for b in 10 0; do
	echo "---- agents boost $b"; grep -A8 "Agent sessions per hour" /tmp/o/agents-b$b.txt | grep -E "^\| (24|32)" | cut -c1-200
	grep -A10 "Where the time goes" /tmp/o/agents-b$b.txt | grep -E "^\| (24|32) \| krex" | cut -c1-220
done
cat "$O/steps.txt"
