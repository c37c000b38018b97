#!/bin/bash
# Device call 1 of session 34 (issue 18): krexd's priority at 32 sessions
# again, the way session 33's call 3 could not tell it: a warm-up window
# first (thrown away: session 33's call 3 and session 23's call 5 both ran
# their first window slowest), then KREX at 32 over MPS in the proof's KREX
# windows (52 s, 44 s counted) at sched_priority 1, 0, 0, 1 (call 3 ran
# 0, 1, 1, 0), each with its region log (call 3 had none: the causes of its
# 5 degraded regions at nice -20 were unknown), then the command lock at 32
# in the proof's lock window (140 s, 125 s counted), so that both
# priorities have a ratio from this call.  Code of the commit carried.
# About 460 s.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
mps_start
st "warm-up (thrown away): KREX at 32, 30 s"
timeout -k 10 70 python3 test/perf/agents.py --full --builddir "$B" --srcdir . \
	--out /tmp/o/w0 --n 32 --modes krex --scale 0.2 --window 30 --warm-s 8 \
	--budget-s 60 >/tmp/o/w0.txt 2>&1
echo "rc=$?" >>/tmp/o/w0.txt
i=0
for sp in 1 0 0 1; do
	i=$((i + 1))
	st "agents $i: sched_priority=$sp"
	mkdir -p "/tmp/o/a$i-sp$sp"
	timeout -k 10 100 python3 test/perf/agents.py --full --builddir "$B" --srcdir . \
		--out "/tmp/o/a$i-sp$sp" --n 32 --modes krex --scale 0.2 --window 52 --warm-s 8 \
		--budget-s 90 --krexd-opt sched_priority=$sp \
		--krexd-opt region_log="/tmp/o/a$i-sp$sp/regions.jsonl" >"/tmp/o/a$i.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/a$i.txt"
done
st "the command lock at 32, 140 s"
timeout -k 10 200 python3 test/perf/agents.py --full --builddir "$B" --srcdir . \
	--out /tmp/o/cmd --n 32 --modes cmd --scale 0.2 --window 140 --warm-s 15 \
	--budget-s 300 >/tmp/o/cmd.txt 2>&1
echo "rc=$?" >>/tmp/o/cmd.txt
mps_stop
st done
{
	cat "$O/steps.txt"
	for d in /tmp/o/w0 /tmp/o/a*-sp* /tmp/o/cmd; do
		echo "==== $(basename "$d")"
		grep -h "scheduling\|nice\|real-time" "$d"/agents.krex.32.krexd.log 2>/dev/null | head -3
		tables "$d" agents.md agents-breakdown.md agents-commands.md
		[ -f "$d/agents.krex.32.krexd.log" ] &&
			timeout 60 python3 test/perf/entry_split.py "$d/agents.krex.32.krexd.log" |
			sed -n '/^phase/,/^thaw_rq_us/p'
		[ -f "$d/regions.jsonl" ] && timeout 30 python3 notebook/h200-session-25/causes.py "$d/regions.jsonl"
	done
} >"$O/call1-summary.md" 2>&1
tar czf "$O/call1.tgz" -C /tmp/o $(cd /tmp/o && ls -d w0.txt a*.txt cmd.txt w0/*.csv a*-sp*/*.csv \
	a*-sp*/regions.jsonl cmd/*.csv 2>/dev/null)
rm -f "$O/steps.txt"
[ -s "$O/build.err" ] || rm -f "$O/build.err"
for d in /tmp/o/w0 /tmp/o/a*-sp* /tmp/o/cmd; do
	echo "== $(basename "$d")"
	tr -d '\r' <"$d/agents.csv" | awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR>1{print $h["mode"], "bench_per_h", $h["bench_per_h"], "benches", $h["benches"], "se", $h["benches_se"], "entry_p95", $h["entry_p95"], "clean", $h["clean"], "pace", $h["cpu_pace"]}'
done
ls "$O"
