#!/bin/bash
# Device call 1 of session 35 (issue 18): where a GPU command's start-up
# goes at 32 sessions.  Over MPS, KREX's commands took 1.76-1.94 s from
# spawn to their first launch against 0.51-0.53 s when sharing plainly and
# 0.18 s alone (session 34): at 32 sessions the largest loss of KREX's
# iteration against sharing's.  krex-victim now stamps cuInit's return, the
# context's and the module's (t_init, t_ctx, t_mod) and the gate logs how
# long each context waited at a closed gate (agents.py: init_s, ctx_s,
# ctx_held_s, module_s).  Over an MPS control daemon of the call's own: a
# warm-up window (KREX at 32, thrown away), then share and KREX at 32 in one
# agents.py run, then KREX at 32 with the gate's context hold off
# (KREX_GATE_CONTEXTS=pass: what the hold costs in start-up, and what its
# absence costs the timed kernel), then KREX at 32 again.  52 s windows (44 s
# counted), as the proof's.  About 380 s.
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
st "share and KREX at 32"
ag sk 170 --modes share,krex --window 52 --budget-s 150
st "KREX at 32, KREX_GATE_CONTEXTS=pass"
KREX_GATE_CONTEXTS=pass ag pass 90 --modes krex --window 52 --budget-s 80
st "KREX at 32 again"
ag k2 90 --modes krex --window 52 --budget-s 80
mps_stop
st done
{
	cat "$O/steps.txt"
	for d in w0 sk pass k2; do
		echo "==== $d"
		tables "/tmp/o/$d" agents.md agents-breakdown.md agents-commands.md
		f=/tmp/o/$d/agents.krex.32.krexd.log
		[ -f "$f" ] && timeout 60 python3 test/perf/entry_split.py "$f" |
			sed -n '/^phase/,/^thaw_rq_us/p;/freezes past/,/^$/p'
		[ -f "/tmp/o/$d/regions.jsonl" ] &&
			timeout 30 python3 notebook/h200-session-25/causes.py "/tmp/o/$d/regions.jsonl"
	done
} >"$O/call1-summary.md" 2>&1
# the per-command phases (w.MODE.SLOT.jsonl), the CSVs, the region logs
tar czf "$O/call1.tgz" -C /tmp/o $(cd /tmp/o && ls -d ./*.txt ./*/*.csv ./*/regions.jsonl \
	./*/w.*.jsonl 2>/dev/null)
rm -f "$O/steps.txt"
[ -s "$O/build.err" ] || rm -f "$O/build.err"
for d in w0 sk pass k2; do
	echo "== $d"
	tr -d '\r' <"/tmp/o/$d/agents.csv" | awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR>1{print $h["n"], $h["mode"], "bench_per_h", $h["bench_per_h"], "benches", $h["benches"], "se", $h["benches_se"], "clean", $h["clean"], "wall_p95", $h["wall_p95"], "pace", $h["cpu_pace"]}'
	tr -d '\r' <"/tmp/o/$d/agents-commands.csv" | cut -d, -f2-12
done
ls -la "$O"
