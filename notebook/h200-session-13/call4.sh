#!/bin/bash
# Device call 4 of session 13: the gate's warm-up changes on the real driver
# (the last launch's stream forgotten when destroyed; KREX_REGION_WARM_US
# letting its lock go between rounds).  A. harmless.sh, 2 runs of 2 x 20 s,
# every framework sibling, the default warm-up; B. the same with
# KREX_REGION_WARM_US=2000 in every process (owners warm by time); C. one
# entry run (fidelity.py, 1 ms, every sibling, per sample) to see the entry
# unchanged.
. notebook/gpu-call-prologue.sh
{ date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_BUILDDIR=$B
st "A harmless default"
OUT=/tmp/o/hA KREX_HARMLESS_LIMIT=170 timeout -k 5 180 bash test/gpu/harmless.sh --builddir "$B" \
	--seconds 20 --runs 2 >/tmp/o/hA.txt 2>&1
echo "rc=$?" >>/tmp/o/hA.txt
st "B harmless KREX_REGION_WARM_US=2000"
OUT=/tmp/o/hB KREX_REGION_WARM_US=2000 KREX_HARMLESS_LIMIT=170 timeout -k 5 180 bash test/gpu/harmless.sh \
	--builddir "$B" --seconds 20 --runs 2 >/tmp/o/hB.txt 2>&1
echo "rc=$?" >>/tmp/o/hB.txt
st "C entry"
timeout -k 5 80 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/entry \
	--sizes 1 --samples 1:300 --mixes all --sample-mixes all --modes krex --regions sample \
	--budget-s 60 --krexd-opt settle=wait >/tmp/o/entry.txt 2>&1
echo "rc=$?" >>/tmp/o/entry.txt
st done
for x in hA hB; do { echo "==== $x"; tail -25 /tmp/o/$x.txt; } >>"$O/harmless.txt"; done
{ sed -n '/^| size_ms/,/^$/p' /tmp/o/entry/fidelity.md | head -6; sed -n '/^| size_ms/,/^$/p' /tmp/o/entry/fidelity-entry.md | head -5; tail -1 /tmp/o/entry.txt; } >"$O/entry.md"
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.jsonl' hA hB entry hA.txt hB.txt 2>/dev/null
cat "$O/harmless.txt" | grep -v "^$" | tail -40; cut -c1-220 "$O/entry.md"; cat "$O/steps.txt"
