#!/bin/bash
# Device call 5 of session 13: the final warm-up by time on the real driver
# (each round launches under the gate's capture lock and waits without it):
# harmless.sh, 2 runs of 2 x 20 s, every framework sibling, with
# KREX_REGION_WARM_US=2000 exported to the whole run.
. notebook/gpu-call-prologue.sh
{ date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_BUILDDIR=$B
st "harmless KREX_REGION_WARM_US=2000"
OUT=/tmp/o/hC KREX_REGION_WARM_US=2000 KREX_HARMLESS_LIMIT=170 timeout -k 5 180 bash test/gpu/harmless.sh \
	--builddir "$B" --seconds 20 --runs 2 >/tmp/o/hC.txt 2>&1
echo "rc=$?" >>/tmp/o/hC.txt
st done
grep -h "Goal\|^All regions\|Overall\|^rc=" /tmp/o/hC.txt >"$O/harmless.txt"
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.jsonl' hC hC.txt 2>/dev/null
cut -c1-200 "$O/harmless.txt"; cat "$O/steps.txt"
