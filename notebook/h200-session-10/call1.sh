#!/bin/bash
# Device call 1 of session 10 (issues 20 and 18), the first on the H200
# since the gate's changes c30f76f, e6a74dc, ec33d81 and 0f6aebf (a drain's
# first round lets work onto a busy stream through; a call that waits for
# the host is never passed; a thread counts as parked only once it asked
# in the current epoch; doc/gate.md):
#  - harmless x3, every framework (issue 20's goal: PASS 3 of 3, JAX
#    included), with every gated process's counts and JAX's
#    "Delay kernel timed out" lines counted per run;
#  - entry, all mix, three runs (issue 18's goal: p95 <= 10 ms in 3 of 3),
#    krexd at log_level=debug: krexd's wait for each sibling's ack.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
st harmless
KREX_GATE_COUNTS=/tmp/o/counts KREX_HARMLESS_LIMIT=285 timeout 295 bash test/gpu/harmless.sh --builddir "$B" \
	--out /tmp/o/harmless --seconds 20 --runs 3 >/tmp/o/harmless.txt 2>&1
echo "rc=$?" >>/tmp/o/harmless.txt
cp /tmp/o/harmless.txt "$O/harmless.md" 2>/dev/null
cp /tmp/o/counts "$O/gate-counts.txt" 2>/dev/null
timeout 60 /usr/local/cuda/bin/nvcc -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
	-o /tmp/o/fma.fatbin test/workloads/fma.cu >/tmp/o/nvcc.log 2>&1
for run in 1 2 3; do
	st "entry-all run $run"
	KREX_WL_MODULE=/tmp/o/fma.fatbin timeout -k 5 70 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir . \
		--out /tmp/o/entry$run --sizes 1 --samples 1:300 --mixes all --sample-mixes all --modes krex --regions sample \
		--budget-s 55 --krexd-opt settle=wait --krexd-opt log_level=debug >/tmp/o/entry$run.txt 2>&1
	echo "rc=$?" >>/tmp/o/entry$run.txt
	L=$(ls /tmp/o/entry$run/*all*.krexd.log 2>/dev/null | head -1)
	[ -n "$L" ] && timeout 20 python3 test/perf/krexlog.py "$L" >"$O/acks$run.md" 2>&1
done
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' . 2>/dev/null
echo "---- harmless"
grep -E "^\| (jax|triton)|Goal|new under|left:|tool probe|Overall|budget" /tmp/o/harmless.txt | cut -c1-300 | head -30
echo "---- Delay kernel timed out, per run (jax.err of the krex pass)"
for f in /tmp/o/harmless/run*/krex/jax.err; do echo "$f $(grep -c 'Delay kernel timed out' "$f")"; done 2>/dev/null
echo "---- gate counts (summed over gated processes)"
awk '$2 ~ /^gate\./ { n[$2] += $3 } END { for (k in n) print k, n[k] }' /tmp/o/counts 2>/dev/null | sort
for run in 1 2 3; do
	echo "---- entry $run"; grep -A4 "Where region entry" /tmp/o/entry$run.txt | tail -1 | cut -c1-300; tail -1 /tmp/o/entry$run.txt
	head -20 "$O/acks$run.md" 2>/dev/null | cut -c1-200
done
cat "$O/steps.txt"
