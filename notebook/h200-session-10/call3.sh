#!/bin/bash
# Device call 3 of session 10 (issues 20 and 18), after call 2's findings
# were mended: the bounded queue takes a sample only from a busy stream
# (525ed0d), the perf drivers run krexd on /dev/shm, krexd's event loop at
# SCHED_FIFO 1 (d203cd0).
#  - entry, all mix: three runs as shipped, one with sched_priority=0;
#  - harmless x3, every framework, 20 s passes (issue 20's goal: PASS 3 of
#    3), every gate traced (KREX_GATE_TRACE: queue waits that gave up, with
#    their limits) and counted.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
timeout 60 /usr/local/cuda/bin/nvcc -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
	-o /tmp/o/fma.fatbin test/workloads/fma.cu >/tmp/o/nvcc.log 2>&1
entry() { # NAME [fidelity.py options...]
	local n=$1
	shift
	st "entry $n"
	KREX_WL_MODULE=/tmp/o/fma.fatbin timeout -k 5 70 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir . \
		--out /tmp/o/entry-$n --sizes 1 --samples 1:300 --mixes all --sample-mixes all --modes krex --regions sample \
		--budget-s 55 --krexd-opt settle=wait --krexd-opt log_level=debug "$@" >/tmp/o/entry-$n.txt 2>&1
	echo "rc=$?" >>/tmp/o/entry-$n.txt
}
entry rt1
entry normal --krexd-opt sched_priority=0
entry rt2
entry rt3
st harmless
mkdir -p /tmp/o/trace
KREX_GATE_TRACE=/tmp/o/trace KREX_GATE_COUNTS=/tmp/o/counts KREX_HARMLESS_LIMIT=285 timeout 295 \
	bash test/gpu/harmless.sh --builddir "$B" --out /tmp/o/harmless --seconds 20 --runs 3 >/tmp/o/harmless.txt 2>&1
echo "rc=$?" >>/tmp/o/harmless.txt
st done
cp /tmp/o/harmless.txt "$O/harmless.md" 2>/dev/null
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' . 2>/dev/null
for n in rt1 normal rt2 rt3; do
	echo "---- entry $n: $(grep -o 'scheduling [a-z-]*' /tmp/o/entry-$n/*all*.krexd.log | head -1)"
	grep -A4 "Where region entry" /tmp/o/entry-$n.txt | tail -1 | cut -c1-300; tail -1 /tmp/o/entry-$n.txt
	grep -h "acknowledged the drain after" /tmp/o/entry-$n/*all*.krexd.log | awk '{ for (i = 1; i <= NF; i++) { if ($i == "after") w = $(i + 1); if ($i == "drain" && $(i - 2) == "its") d = $(i + 1) } print w - d }' |
		sort -n | awk '{ a[NR] = $1 } END { if (NR) print "krexd wait minus the gate own drain, us: p50", a[int(NR * .5) + 1], "p95", a[int(NR * .95) + 1], "n", NR }'
done
echo "---- harmless"
grep -E "^\| (jax|triton)|Goal|new under|Overall" /tmp/o/harmless.txt | cut -c1-300 | head -20
echo "---- Delay kernel timed out, per run"
for f in /tmp/o/harmless/run*/krex/jax.err; do echo "$f $(grep -c 'Delay kernel timed out' "$f")"; done 2>/dev/null
echo "---- queue waits (all gated processes): how they ended, limit ms, suspect ms"
cat /tmp/o/trace/trace.* 2>/dev/null | awk '$3 == "queue-wait" { print $6, $8, $12 }' | sort | uniq -c | sort -rn | head -12
echo "---- gate counts (summed)"
awk '$2 ~ /^gate\./ { n[$2] += $3 } END { for (k in n) print k, n[k] }' /tmp/o/counts 2>/dev/null | sort
cat "$O/steps.txt"
