#!/bin/bash
# Device call 1 of session 20 (issue 18): the kernel's favordynmods and
# krexd's making of participants.  Without it each move of a pid into a
# cgroup waits for an RCU grace period, on krexd's loop (session 18: "made
# in" p50 17-19 ms at 16-32 sessions).  The kernel keeps favordynmods on
# once on, so this call runs off first, then on (krexd's favordynmods = yes
# turns it on): migbench.py (the raw move, idle and with 16 busy loops, and a
# fork's cost), start-bench.py (krex run, 300 ms apart, 16 busy loops), and
# agents.py KREX at 24 and 32 sessions (53 s counted) with krexd's "made in".
. notebook/gpu-call-prologue.sh
N=notebook/h200-session-20
{ date -u; uname -r; grep -E ' - cgroup2? ' /proc/self/mountinfo
  nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
mig() { # LABEL
	st "migbench $1"
	{ timeout -k 5 40 python3 $N/migbench.py /sys/fs/cgroup 40 300 0 "$1-idle"
	  timeout -k 5 40 python3 $N/migbench.py /sys/fs/cgroup 40 300 16 "$1-busy16"; } >>"$O/migbench.txt" 2>&1
}
sb() { # NAME KREXD-OPT...
	local n=$1; shift
	st "start-bench $n"
	timeout -k 5 90 python3 test/perf/start-bench.py --builddir "$B" --srcdir "$PWD" --n 40 \
		--gap-ms 300 --busy 16 --out /tmp/o/$n "$@" 2>&1 | grep -v '^\[' >>"$O/start-bench.txt"
	grep -E ' - cgroup2 ' /proc/self/mountinfo >>"$O/start-bench.txt"
}
run() { # NAME N KREXD-OPT...
	local n=$1 s=$2; shift 2
	st "agents $s krex $*"
	timeout -k 10 110 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$PWD" \
		--out /tmp/o/$n --n $s --modes krex --scale 0.2 --window 65 --warm-s 12 --budget-s 100 \
		--krexd-opt region_log=/tmp/o/$n.regions "$@" >/tmp/o/$n.txt 2>&1
	echo "rc=$?" >>/tmp/o/$n.txt
	python3 $N/madein.py /tmp/o/$n >>"$O/madein.txt" 2>&1
	rm -rf /tmp/o/$n/raw
}
mig off
sb sb-off
run off24 24
run off32 32
sb sb-on --krexd-opt favordynmods=yes
mig on
run on24 24 --krexd-opt favordynmods=yes
run on32 32 --krexd-opt favordynmods=yes
st done
for d in off24 off32 on24 on32; do
	f=/tmp/o/$d.regions
	echo "==== $d: regions $(grep -c '"outcome"' $f 2>/dev/null), clean $(grep -c '"outcome": *"clean"' $f 2>/dev/null)"
	cat /tmp/o/$d/agents.md /tmp/o/$d/agents-breakdown.md /tmp/o/$d/agents-commands.md 2>/dev/null
	tail -2 /tmp/o/$d.txt
done >"$O/summary.txt" 2>&1
grep -h 'favordynmods' /tmp/o/*/*.log /tmp/o/*/*/*.log 2>/dev/null | sort | uniq -c | head >"$O/krexd-says.txt"
tar czf "$O/call1.tgz" -C /tmp/o off24 off32 on24 on32 off24.txt off32.txt on24.txt on32.txt off24.regions off32.regions on24.regions on32.regions 2>/dev/null
grep -E '^(====|[|] (24|32) [|] krex [|])' "$O/summary.txt"
cat "$O/env.txt" "$O/migbench.txt" "$O/start-bench.txt" "$O/madein.txt" "$O/krexd-says.txt" "$O/steps.txt"
