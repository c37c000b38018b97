#!/bin/bash
# Device call 3 of session 11 (issue 18), the tree with sched_priority on
# again by default (SCHED_FIFO 1; nice -20 where refused, as on this
# machine), the process list and nominal clocks on krexd's thread:
#  - test/perf/wake-bench.py: a woken process's wait for a CPU beside a
#    busy loop on every core, at nice 0, nice -20 and SCHED_FIFO 1 (the
#    scheduler's part of the entry's 4 ms tail), and the kernel;
#  - test/gpu/proof.sh with the new default.
. notebook/gpu-call-prologue.sh
{ date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
st wake-bench
timeout 60 python3 test/perf/wake-bench.py --wakes 300 --period-ms 10 >"$O/wake-bench.txt" 2>&1
echo "rc=$?" >>"$O/wake-bench.txt"
st proof
OUT=/tmp/o/proof timeout -k 5 330 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
cp /tmp/o/proof.txt "$O/proof.txt"; cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.fatbin.*' --exclude='*.jsonl' proof 2>/dev/null
ls -la "$O/detail.tgz"
cat "$O/wake-bench.txt"
echo "---- proof"; sed -n '/| goal |/,$p' /tmp/o/proof.txt | head -20
grep -A5 "Where region entry went" /tmp/o/proof.txt | grep "| krex" | cut -c1-240 | head -6
find /tmp/o/proof -name "*.krexd.log" -exec grep -ho "scheduling [a-z -]*[0-9]*" {} + 2>/dev/null | sort | uniq -c
cat "$O/steps.txt"
