#!/bin/bash
# Device call 1 of session 17 (issue 18): exit_wait on the H200.  agents.py,
# krex only, 24 and 32 sessions, 40 s counted each: first with krexd's
# default exit_wait (250ms), then with exit_wait=0 (krexd as before it).
# Counts the clean regions, and from krexd's debug log each exit wait:
# how long, and whether the process left ("gone") or outlived it.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
agents() {
	local name=$1
	shift
	timeout -k 10 130 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" --out /tmp/o/ag-$name \
		--n 24,32 --modes krex --scale 0.2 --window 50 --warm-s 10 --budget-s 120 \
		--krexd-opt region_log=/tmp/o/regions-$name.log "$@" >/tmp/o/ag-$name.txt 2>&1
	echo "rc=$?" >>/tmp/o/ag-$name.txt
}
st "agents krex 24,32, exit_wait default"
agents wait
st "agents krex 24,32, exit_wait=0"
agents nowait --krexd-opt exit_wait=0
st "summaries"
for m in wait nowait; do
	for f in /tmp/o/ag-$m/*.krexd.log; do
		[ -e "$f" ] || continue
		echo "==== $m $(basename "$f")"
		echo "exiting seen: $(grep -c 'would make it degraded and are exiting' "$f")"
		echo "waited, gone: $(grep -c 'for exiting processes to leave its GPUs .*: gone' "$f")"
		echo "waited, judged: $(grep -c 'for exiting processes to leave its GPUs .*: judged' "$f")"
		echo "outlived exit_wait: $(grep -c 'still on its GPUs after exit_wait' "$f")"
		grep -o 'waited [0-9]* us after the freeze for exiting processes' "$f" | awk '{print $2}' | sort -n |
			awk '{a[NR]=$1} END {if (NR) printf "wait us: n %d p50 %d p95 %d max %d\n", NR, a[int(NR*0.5+0.5)], a[int(NR*0.95+0.5)], a[NR]}'
	done
	echo "==== $m region_log: regions $(wc -l </tmp/o/regions-$m.log), clean $(grep -c '"outcome": *"clean"' /tmp/o/regions-$m.log)"
	grep -o '"note": *"[^"]*"' /tmp/o/regions-$m.log | sed 's/[0-9][0-9]*/N/g' | sort | uniq -c | sort -rn | head -8
done >"$O/exit-summary.txt" 2>&1
for m in wait nowait; do rm -rf /tmp/o/ag-$m/raw; done
tar czf "$O/call1.tgz" -C /tmp/o ag-wait ag-wait.txt ag-nowait ag-nowait.txt regions-wait.log regions-nowait.log
ls -la "$O"
st done
for m in wait nowait; do echo "==== $m"; cat /tmp/o/ag-$m/agents.md 2>/dev/null | head -8; tail -2 /tmp/o/ag-$m.txt; done
cat "$O/exit-summary.txt"
cat "$O/steps.txt"
