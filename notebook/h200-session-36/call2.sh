#!/bin/bash
# Device call 2 of session 36 (issue 18): krexd's ctx_defer = 500ms against 0
# (the default) at 32 sessions over MPS, on the code where a region waiting
# for siblings' contexts being made also holds new contexts on its GPUs at
# their gates (gate page ctx_by), so that the wait drains the makers instead
# of admitting new ones that its close then cuts (session 35's call 4, the
# same windows without that hold: rate 4991 / 4991 against 4827 / 4991, the
# owner's queue wait 406-408 ms a benchmark, about half the waits ended by
# the bound).  Over an MPS control daemon of the call's own: a warm-up window
# (KREX at 32, thrown away), then ctx_defer 0, 500ms, plain sharing (the
# reference KREX is measured against at 32), 0, 500ms (52 s windows, 44 s
# counted, the proof's).  Each window: agents.py's tables, the start-up
# split (startup.py), the contexts cut by regions (overlap.py), the entry
# split, the regions' waits for contexts (krexd's log).  About 340 s.
. notebook/gpu-call-prologue.sh
. notebook/gpu-call-mps.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
mps_start
ag() { # ag NAME TIMEOUT ARGS...: one agents.py run at 32 into /tmp/o/NAME
	local n=$1 t=$2
	shift 2
	mkdir -p "/tmp/o/$n"
	timeout -k 10 "$t" python3 test/perf/agents.py --full --builddir "$B" --srcdir . \
		--out "/tmp/o/$n" --n 32 --scale 0.2 --warm-s 8 \
		--krexd-opt "region_log=/tmp/o/$n/regions.jsonl" "$@" >"/tmp/o/$n.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/$n.txt"
}
st "warm-up (thrown away): KREX at 32, 25 s"
ag w0 60 --modes krex --window 25 --budget-s 50
for r in d0a d500a share d0b d500b; do
	if [ "$r" = share ]; then
		st "plain sharing at 32"
		ag share 90 --modes share --window 52 --budget-s 80
		continue
	fi
	v=${r#d}
	v=${v%[ab]}
	st "KREX at 32, ctx_defer = ${v}ms"
	ag "$r" 90 --modes krex --window 52 --budget-s 80 --krexd-opt "ctx_defer=${v}ms"
done
mps_stop
st done
runs="d0a d500a d0b d500b"
{
	cat "$O/steps.txt"
	for d in w0 $runs share; do
		echo "==== $d"
		tables "/tmp/o/$d" agents.md agents-breakdown.md agents-commands.md
		f=/tmp/o/$d/agents.krex.32.krexd.log
		[ -f "$f" ] && timeout 60 python3 test/perf/entry_split.py "$f" |
			sed -n '/^phase/,/^thaw_rq_us/p;/freezes past/,/^$/p'
		[ -f "/tmp/o/$d/regions.jsonl" ] &&
			timeout 30 python3 notebook/h200-session-25/causes.py "/tmp/o/$d/regions.jsonl"
	done
	echo "==== startup.py"
	(cd /tmp/o && timeout 60 python3 "$OLDPWD/notebook/h200-session-35/startup.py" $runs)
	echo "==== overlap.py"
	(cd /tmp/o && timeout 60 python3 "$OLDPWD/notebook/h200-session-35/overlap.py" $runs)
	echo "==== the regions' waits for contexts being made (krexd's log)"
	for d in $runs; do
		f=/tmp/o/$d/agents.krex.32.krexd.log
		echo "$d: $(grep -c 'making GPU contexts: its gates close' "$f" 2>/dev/null) regions waited;" \
			"$(grep -o 'it starts after [0-9]* us' "$f" 2>/dev/null | awk '{s += $4; n++} END {if (n) printf "mean %.0f us, %d ended", s / n, n}')"
	done
	echo "==== the gates' drains: their waits for contexts being made (ctx_us)"
	for d in $runs; do
		cat /tmp/o/$d/w.krex.*.jsonl 2>/dev/null | python3 -c '
import json, sys
n = w = s = 0
for ln in sys.stdin:
    try:
        r = json.loads(ln)
    except ValueError:
        continue
    for g in (r.get("gates") or {}).values():
        for x in g:
            n += 1
            if x.get("ctx_us"):
                w += 1
                s += x["ctx_us"]
print("%s: %d drains, %d waited for contexts, mean %.0f us of those" % (sys.argv[1], n, w, s / w if w else 0))' "$d"
	done
} >"$O/call2-summary.md" 2>&1
tar czf "$O/call2.tgz" -C /tmp/o $(cd /tmp/o && ls -d ./*.txt ./*/*.csv ./*/regions.jsonl \
	./*/w.*.jsonl 2>/dev/null)
rm -f "$O/steps.txt"
[ -s "$O/build.err" ] || rm -f "$O/build.err"
for d in w0 $runs share; do
	echo "== $d"
	tr -d '\r' <"/tmp/o/$d/agents.csv" | awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR>1{print $h["n"], $h["mode"], "bench_per_h", $h["bench_per_h"], "benches", $h["benches"], "se", $h["benches_se"], "clean", $h["clean"], "wall_p95", $h["wall_p95"], "entry_p95", $h["entry_p95"], "pace", $h["cpu_pace"]}'
	tr -d '\r' <"/tmp/o/$d/agents-commands.csv" | cut -d, -f2-12
done
ls -la "$O"
