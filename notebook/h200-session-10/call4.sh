#!/bin/bash
# Device call 4 of session 10 (issues 18 and 20), the tree of a805601 (the
# queue's busy-sample rule, the perf drivers' krexd on /dev/shm, krexd at
# SCHED_FIFO or, refused there, nice -20):
#  - test/gpu/proof.sh: issue 18's table (fidelity 0.1/1/10 ms with
#    alone-gapped, entry x3, agents 16/24/32);
#  - harmless x3, every framework, 20 s passes (issue 20: a second 3 of 3);
#  - test/perf/sched-bench.sh: krexd at normal priority against its
#    default (here nice -20) with every core busy, no GPU.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
left() { echo $((545 - ($(date +%s) - t0))); }
st proof
OUT=/tmp/o/proof timeout -k 5 330 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
cp /tmp/o/proof.txt "$O/proof.txt"; cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
st "harmless (limit $(($(left) - 40)) s)"
L=$(($(left) - 40)); [ "$L" -gt 190 ] && L=190
KREX_GATE_COUNTS=/tmp/o/counts KREX_HARMLESS_LIMIT=$((L - 10)) timeout "$L" bash test/gpu/harmless.sh --builddir "$B" \
	--out /tmp/o/harmless --seconds 20 --runs 3 >/tmp/o/harmless.txt 2>&1
echo "rc=$?" >>/tmp/o/harmless.txt
cp /tmp/o/harmless.txt "$O/harmless.md"
st sched-bench
timeout 60 make -C "$B/test/integration" krex-testclient >/dev/null 2>&1
timeout 30 bash test/perf/sched-bench.sh "$B" 2 200 8 >"$O/sched-bench.txt" 2>&1
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.fatbin.*' proof harmless counts 2>/dev/null
ls -la "$O/detail.tgz"
echo "---- proof"; sed -n '/| goal |/,$p' /tmp/o/proof.txt | head -20
grep -A4 "Where region entry" /tmp/o/proof.txt | grep "sample" | cut -c1-250 | head -4
echo "---- harmless"; grep -E "Goal|Overall|^All regions" /tmp/o/harmless.txt | cut -c1-250
for f in /tmp/o/harmless/run*/krex/jax.err; do echo "$f $(grep -c 'Delay kernel timed out' "$f")"; done 2>/dev/null
echo "---- sched-bench"; cat "$O/sched-bench.txt"
find /tmp/o/proof -name "*.krexd.log" -exec grep -ho "scheduling [a-z -]*[0-9]*" {} + 2>/dev/null | sort | uniq -c
cat "$O/steps.txt"
