#!/bin/bash
# Device call 3 of session 33 (issue 18): KREX at 32 sessions over MPS in the
# proof's KREX windows (52 s, 44 s counted), krexd at its default normal
# priority (sched_priority = 0) and at sched_priority = 1 (SCHED_FIFO, or
# nice -20 with its autogroup where real-time is refused), interleaved
# 0, 1, 1, 0: does krexd's wait for a CPU (entry_rq_us, exit_rq_us; session
# 30 saw it fall from 2.4-9.3 ms to 0.3-0.6 ms of an entry at p50 in 24 s
# windows, too short to count a rate) move the rate at 32 sessions?  The
# code of 4e355c6 (the laggards followed).  About 290 s.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
mps_start
i=0
for sp in 0 1 1 0; do
	i=$((i + 1))
	st "agents $i: sched_priority=$sp"
	timeout -k 10 100 python3 test/perf/agents.py --full --builddir "$B" --srcdir . \
		--out "/tmp/o/a$i-sp$sp" --n 32 --modes krex --scale 0.2 --window 52 --warm-s 8 \
		--budget-s 90 --krexd-opt sched_priority=$sp >"/tmp/o/a$i.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/a$i.txt"
done
mps_stop
st done
{
	for d in /tmp/o/a*-sp*; do
		echo "==== $(basename "$d")"
		grep -h "sched\|nice" "$d"/agents.krex.32.krexd.log 2>/dev/null | head -3
		tables "$d" agents.md agents-breakdown.md agents-commands.md
		timeout 60 python3 test/perf/entry_split.py "$d/agents.krex.32.krexd.log" |
			sed -n '/^phase/,/^thaw_rq_us/p;/followed/,/^$/p'
	done
} >"$O/call3-summary.md" 2>&1
tar czf "$O/call3.tgz" -C /tmp/o $(cd /tmp/o && ls -d a*.txt a*-sp*/*.csv 2>/dev/null)
cat "$O/steps.txt"
for d in /tmp/o/a*-sp*; do
	echo "== $(basename "$d")"
	tr -d '\r' <"$d/agents.csv" | awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR>1{print "bench_per_h", $h["bench_per_h"], "benches", $h["benches"], "se", $h["benches_se"], "entry_p95", $h["entry_p95"], "clean", $h["clean"]}'
	timeout 60 python3 test/perf/entry_split.py "$d/agents.krex.32.krexd.log" | grep -E "^(entry_us|entry_rq_us|exit_us|exit_rq_us|freeze_us) "
done
