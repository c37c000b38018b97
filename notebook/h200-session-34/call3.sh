#!/bin/bash
# Device call 3 of session 34 (issue 18): what 4x the lock asks, against
# plain sharing measured over MPS.  4x the lock at 24 sessions is 96-99 %
# of agents.py's perfect time-sliced sharer's rate on the H100 (session
# 33), but over MPS the kernels of different processes overlap and that
# sharer bounds nothing; plain sharing (no lock, no KREX: every kernel, the
# timed ones too, shares the GPU; its timings are not clean) is what a GPU
# shared without regions gives.  Over an MPS control daemon of the call's
# own: a warm-up window (KREX at 24, thrown away), then in one agents.py
# run share and KREX at 24 and at 32 (the proof's KREX windows: 52 s, 44 s
# counted; agents.py runs the modes in turn within each N), then the
# command lock at 24 in the proof's lock window (140 s, 125 s counted).
# About 440 s.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
mps_start
st "warm-up (thrown away): KREX at 24, 30 s"
timeout -k 10 70 python3 test/perf/agents.py --full --builddir "$B" --srcdir . \
	--out /tmp/o/w0 --n 24 --modes krex --scale 0.2 --window 30 --warm-s 8 \
	--budget-s 60 >/tmp/o/w0.txt 2>&1
echo "rc=$?" >>/tmp/o/w0.txt
st "share and KREX at 24 and 32"
mkdir -p /tmp/o/sk
timeout -k 10 300 python3 test/perf/agents.py --full --builddir "$B" --srcdir . \
	--out /tmp/o/sk --n 24,32 --modes share,krex --scale 0.2 --window 52 --warm-s 8 \
	--budget-s 260 --krexd-opt region_log=/tmp/o/sk/regions.jsonl >/tmp/o/sk.txt 2>&1
echo "rc=$?" >>/tmp/o/sk.txt
st "the command lock at 24, 140 s"
timeout -k 10 200 python3 test/perf/agents.py --full --builddir "$B" --srcdir . \
	--out /tmp/o/cmd --n 24 --modes cmd --scale 0.2 --window 140 --warm-s 15 \
	--budget-s 190 >/tmp/o/cmd.txt 2>&1
echo "rc=$?" >>/tmp/o/cmd.txt
mps_stop
st done
{
	cat "$O/steps.txt"
	for d in /tmp/o/w0 /tmp/o/sk /tmp/o/cmd; do
		echo "==== $(basename "$d")"
		tables "$d" agents.md agents-breakdown.md agents-commands.md
		for f in "$d"/agents.krex.*.krexd.log; do
			[ -f "$f" ] || continue
			echo "== entry_split.py $(basename "$f")"
			timeout 60 python3 test/perf/entry_split.py "$f" | sed -n '/^phase/,/^thaw_rq_us/p;/freezes past/,/^$/p'
		done
		[ -f "$d/regions.jsonl" ] && timeout 30 python3 notebook/h200-session-25/causes.py "$d/regions.jsonl"
	done
} >"$O/call3-summary.md" 2>&1
tar czf "$O/call3.tgz" -C /tmp/o $(cd /tmp/o && ls -d w0.txt sk.txt cmd.txt w0/*.csv sk/*.csv \
	sk/regions.jsonl cmd/*.csv 2>/dev/null)
gzip -c /tmp/o/sk/agents.krex.32.krexd.log >"$O/call3-krexd32.log.gz" 2>/dev/null
rm -f "$O/steps.txt"
[ -s "$O/build.err" ] || rm -f "$O/build.err"
for d in /tmp/o/w0 /tmp/o/sk /tmp/o/cmd; do
	echo "== $(basename "$d")"
	tr -d '\r' <"$d/agents.csv" | awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR>1{print $h["n"], $h["mode"], "bench_per_h", $h["bench_per_h"], "benches", $h["benches"], "se", $h["benches_se"], "sharer", $h["sharer_per_h"], "clean", $h["clean"], "pace", $h["cpu_pace"], "mps", $h["mps"]}'
done
ls -la "$O"
