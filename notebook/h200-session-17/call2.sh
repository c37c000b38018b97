#!/bin/bash
# Device call 2 of session 17 (issue 18): a drain that finds its process's
# CUDA shut down answers "exiting" (KREX_DRAIN_EXITING) and krexd judges it
# by whether the process left the GPU; with exit_wait (call 1).  agents.py,
# krex only, 24 and 32 sessions, 40 s counted, krexd at its defaults: the
# clean regions, the acks with status 2 and 1, the exit waits, the notes.
# Then test/gpu/proof.sh (issue 18's goals, the fidelity rows) on this build.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
st "agents krex 24,32"
timeout -k 10 130 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/ag \
	--n 24,32 --modes krex --scale 0.2 --window 50 --warm-s 10 --budget-s 120 \
	--krexd-opt region_log=/tmp/o/regions.log >/tmp/o/ag.txt 2>&1
echo "rc=$?" >>/tmp/o/ag.txt
st "summary"
{
	for f in /tmp/o/ag/*.krexd.log; do
		[ -e "$f" ] || continue
		echo "==== $(basename "$f")"
		echo "acks status 2 (exiting): $(grep -c 'acknowledged the drain after .* status 2' "$f")"
		echo "acks status 1 (failed): $(grep -c 'acknowledged the drain after .* status 1' "$f")"
		echo "exiting at the drain, left the GPU: $(grep -c 'was exiting at the drain and has left the GPU' "$f")"
		echo "exiting processes seen at the settle: $(grep -c 'would make it degraded and are exiting' "$f")"
		echo "waited, gone: $(grep -c 'for exiting processes to leave its GPUs .*: gone' "$f")"
		echo "waited, judged: $(grep -c 'for exiting processes to leave its GPUs .*: judged' "$f")"
		echo "outlived exit_wait: $(grep -c 'still on its GPUs after exit_wait' "$f")"
		grep -o 'waited [0-9]* us after the freeze for exiting processes' "$f" | awk '{print $2}' | sort -n |
			awk '{a[NR]=$1} END {if (NR) printf "wait us: n %d p50 %d p95 %d max %d\n", NR, a[int(NR*0.5+0.5)], a[int(NR*0.95+0.5)], a[NR]}'
	done
	echo "==== region_log: regions $(wc -l </tmp/o/regions.log), clean $(grep -c '"outcome":"clean"' /tmp/o/regions.log)"
	grep -o '"note":"[^"]*"' /tmp/o/regions.log | sed 's/[0-9][0-9]*/N/g' | sort | uniq -c | sort -rn | head -8
} >"$O/exit-summary.txt" 2>&1
st "proof"
OUT=/tmp/o/proof timeout -k 10 300 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
rm -rf /tmp/o/proof/fidelity/raw /tmp/o/ag/raw
tar czf "$O/call2.tgz" -C /tmp/o proof proof.txt ag ag.txt regions.log
st done
cat /tmp/o/ag/agents.md 2>/dev/null | head -8; tail -2 /tmp/o/ag.txt
cat "$O/exit-summary.txt"
sed -n '/## Issue 18/,$p' /tmp/o/proof.txt
grep -h "| krex | all | \(sample\|batch\) |" /tmp/o/proof/fidelity/fidelity.md | cut -c1-220
cat "$O/steps.txt"
