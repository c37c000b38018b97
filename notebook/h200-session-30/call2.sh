#!/bin/bash
# Device call 2 of session 30 (issue 18, regions are cheap): krexd waiting
# for a CPU at a region's edges, on the GPU machine, with the cost line's
# new entry_rq_us / exit_rq_us / thaw_rq_us (run_delay) and the nice -20
# fallback's autogroup (7083d84).  No MPS.
#   0. the machine's scheduling facts (autogroup, cgroups, real-time);
#   1. the proof's entry run (all siblings, 1 ms, per sample, 300 regions,
#      settle=wait, log_level=debug) at sched_priority=0 then 1 (real-time,
#      or where refused nice -20 with the autogroup);
#   2. agents.py at 32 sessions, KREX, sched_priority 0 / 1 / 0 / 1 (24 s
#      windows), krexd's cost lines through entry_split.py.
# Everything in $O/call2.tgz, the summaries in $O/summary.txt.  ~300 s.
. notebook/gpu-call-prologue.sh
S=$O/summary.txt
st env
{
	echo "autogroup_enabled $(cat /proc/sys/kernel/sched_autogroup_enabled 2>&1)"
	echo "self cgroup: $(cat /proc/self/cgroup)"
	echo "self autogroup: $(cat /proc/self/autogroup 2>&1)"
	cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
	for d in /sys/fs/cgroup "$(dirname "$cg")" "$cg"; do
		echo "$d subtree_control: $(cat "$d/cgroup.subtree_control" 2>&1)"
	done
	chrt -f 1 true 2>&1 && echo "SCHED_FIFO: permitted" || echo "SCHED_FIFO: refused"
	nproc
} >/tmp/o/env-sched.txt 2>&1
cat /tmp/o/env-sched.txt >"$S"
for sp in 0 1; do
	st "entry sched_priority=$sp"
	d=/tmp/o/entry-sp$sp
	timeout 60 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir . --out "$d" \
		--sizes 1 --samples 1:300 --mixes all --sample-mixes all --modes krex --regions sample \
		--budget-s 40 --krexd-opt settle=wait --krexd-opt log_level=debug \
		--krexd-opt sched_priority=$sp >"$d.txt" 2>&1
	{
		echo "==== entry sched_priority=$sp"
		grep -h "scheduling\|priority refused" "$d"/*.krexd.log | head -2 | cut -c1-200
		timeout 30 python3 test/perf/entry_split.py "$d"/*.krexd.log
		cat "$d/fidelity-entry.md"
	} >>"$S" 2>&1
done
for r in 1 2; do
	for sp in 0 1; do
		st "agents 32 sched_priority=$sp round $r"
		d=/tmp/o/agents-sp$sp-r$r
		timeout 90 python3 test/perf/agents.py --full --builddir "$B" --srcdir . --out "$d" \
			--n 32 --modes krex --scale 0.2 --window 24 --warm-s 6 --budget-s 70 \
			--krexd-opt sched_priority=$sp >"$d.txt" 2>&1
		{
			echo "==== agents 32 sched_priority=$sp round $r"
			cat "$d/agents.md" 2>/dev/null | head -40
			timeout 30 python3 test/perf/entry_split.py "$d"/*.krexd.log | sed -n '/own work/,$p'
		} >>"$S" 2>&1
	done
done
st done
cp "$O/steps.txt" /tmp/o/
(cd /tmp/o && find . -type f -size -4M \( -name '*.md' -o -name '*.csv' -o -name '*.txt' \
	-o -name '*.log' \) | tar czf "$O/call2.tgz" -T -) 2>/dev/null
ls -la "$O"
grep -E "^(====|entry_us|thaw_us|exit_us|entry_rq|exit_rq|thaw_rq|freeze_us)|scheduling|autogroup|SCHED_FIFO|benchmarks" "$S" | cut -c1-220
cat "$O/steps.txt"
