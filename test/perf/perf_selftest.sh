#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The benchmark drivers themselves (fidelity.py, agents.py, plot.sh) on stub
# binaries (test/perf/stubs: same CLIs, exact made-up figures): the matrix,
# the inflation arithmetic, skip and interrupt paths, no process left behind.
# Needs nothing built; the stubs' figures are not timings.
. "$top_srcdir/test/lib.sh"

command -v python3 >/dev/null || skip_all "python3 not found"
perf=$top_srcdir/test/perf
tmp=$(mktemp -d)
pid=
# The drivers stop every process they start (checked below); a driver still
# running when this test ends is stopped by its pid, then stops its own.
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
export PYTHONDONTWRITEBYTECODE=1 KREX_STUB_STATE=$tmp/state
mkdir -p "$tmp/state" "$tmp/b/test/workloads" "$tmp/b/krexd" "$tmp/b/krex"
for s in krex-victim krex-hog; do ln -s "$perf/stubs/$s" "$tmp/b/test/workloads/$s"; done
ln -s "$perf/stubs/krexd" "$tmp/b/krexd/krexd"
ln -s "$perf/stubs/krex" "$tmp/b/krex/krex"
common=(--builddir "$tmp/b" --torch-loop /nonexistent --budget-s 60)

# col CSV MODE REGION SIZE COLUMN: one value of fidelity.csv.
col() {
	awk -F, -v m="$2" -v r="$3" -v s="$4" -v c="$5" '
		NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
		$h["mode"] == m && $h["region"] == r && $h["size_ms"] == s { print $h[c] }' "$1"
}
# near X Y: |X - Y| < 0.01
near() { awk -v x="$1" -v y="$2" 'BEGIN { d = x - y; exit !(x != "" && d < 0.01 && d > -0.01) }'; }
leftovers() { ! pgrep -f "$tmp/b/" >/dev/null; }

plan 27

# The drain per sibling's parser (krexlog.py) on a planted log: known
# p50/p95, the slowest ack, failed acks, a chained region, a region that did
# not end, an unregistered participant, a journal prefix, gate lines
# (test/perf/stubs/planted-*.txt).
planted() {
	python3 - "$perf" <<-'PY'
	import sys
	sys.path.insert(0, sys.argv[1])
	import krexlog as K
	p = K.parse_krexd(K.read_lines(sys.argv[1] + "/stubs/planted-krexd.txt"))
	g = {"async": K.parse_gate(K.read_lines(sys.argv[1] + "/stubs/planted-gate.txt"))}
	rows = {r["sibling"]: r for r in K.table(p, lambda label, pid: label, g, ["async"])}
	want = {
	    "async": dict(participants=1, drains=3, slowest=2, failed=0, wait_p50_ms=2.0,
	                  wait_p95_ms=2.9, wait_max_ms=3.0, own_p50_ms=1.9, own_p95_ms=1.99,
	                  own_max_ms=2.0, gated_ms=21.5, gate_drains=2, in_driver_p95_ms=1.43,
	                  passes=2, let_through=7, onto_busy=5, parked_max=4),
	    "sync": dict(participants=1, drains=2, slowest=1, failed=1, wait_p50_ms=2.25,
	                 wait_p95_ms=2.925, wait_max_ms=3.0, gated_ms=21.5),
	    "victim": dict(participants=1, drains=0, slowest=0, wait_p50_ms=None, gated_ms=0.0),
	    "participant 9": dict(participants=1, drains=1, wait_p50_ms=0.7, own_max_ms=0.6)}
	bad = [(s, k, rows.get(s, {}).get(k), v) for s, w in want.items() for k, v in w.items()
	       if s not in rows or not (rows[s].get(k) == v or (v is not None and rows[s].get(k)
	                                is not None and abs(rows[s][k] - v) < 1e-9))]
	bad += [("rows", sorted(rows))] if len(rows) != len(want) else []
	for b in bad:
	    print("# planted: %s" % (b,))
	sys.exit(1 if bad else 0)
	PY
}
ok "krexlog.py on a planted log: p50/p95/max per sibling, slowest, failed, gated (chained), gate lines" planted
# entry_split.py on planted laggard lines (test/perf/stubs/planted-laggards.txt):
# the tasks followed to the freeze's end summed per state at the look; a
# task's wait counted at most the time followed (region 3's 5 ms in 2: the
# kernel adds a wait begun before the look when the task runs).
followed() {
	out=$(python3 "$perf/entry_split.py" "$perf/stubs/planted-laggards.txt") || return 1
	printf '%s\n' "$out" | grep -Eq '^ +R +0 gone, +3 there +22\.0 ms followed +ran +4\.1 \( 19 %\) +waited for a CPU +14\.0 \( 64 %\)$' &&
		printf '%s\n' "$out" | grep -Eq '^ +D +0 gone, +1 there +16\.0 ms followed +ran +0\.2 \( +1 %\)' &&
		printf '%s\n' "$out" | grep -Eq '^ +X +1 gone, +0 there ' &&
		printf '%s\n' "$out" | grep -q '1 D, 0 S, 0 other; of those not frozen 1 exiting$'
}
ok "entry_split.py: laggard tasks followed to the freeze's end, ran and waited per state, the exiting ones gone" followed
nodebug() {
	echo "krexd: info: krexd started" >"$tmp/plain.log"
	! python3 "$perf/krexlog.py" "$tmp/plain.log" >/dev/null 2>"$tmp/plain.err" &&
		grep -q "log_level=debug" "$tmp/plain.err"
}
ok "krexlog.py on a log without debug lines: status 1, says why" nodebug

f=$tmp/fid
timeout 120 python3 "$perf/fidelity.py" --quick "${common[@]}" --drain-log --out "$f" \
	>"$tmp/fid.txt" 2>"$tmp/fid.err"
ok "fidelity --quick on stubs completes" [ $? = 0 ]
rows=$(($(wc -l <"$f/fidelity.csv") - 1))
ok "fidelity.csv holds the whole matrix (alone, shared, krex sample/batch, alone-gapped, alone-end: $rows rows)" \
	[ "$rows" = 12 ]
ok "shared p95 inflation is the stub's 200 %" near "$(col "$f/fidelity.csv" shared none 1 infl_wall_p95_pct)" 200
ok "krex p95 inflation (in regions) is 0 %" near "$(col "$f/fidelity.csv" krex sample 10 infl_wall_p95_pct)" 0
entry_clean() {
	[ "$(col "$f/fidelity.csv" krex batch 1 entry_p95)" = 0.5 ] &&
		[ "$(col "$f/fidelity.csv" krex batch 1 clean)" = 4/4 ]
}
ok "region entry and clean regions (4 of 4 batches) reported" entry_clean
ok "alone-gapped: a gap of the krex entry p50 (0.5 ms) before each sample" \
	sh -c "grep -q '^1,alone-gapped,none,none,.*gap 500 us' '$f/fidelity.csv'"
# ecol MODE REGION SIZE COLUMN: one value of fidelity-entry.csv.
ecol() { col "$f/fidelity-entry.csv" "$@"; }
entry_split() {
	near "$(ecol krex batch 1 drain_p50)" 0.3 && near "$(ecol krex batch 1 freeze_p95)" 0.1 &&
		near "$(ecol krex sample 10 other_p50)" 0.04 && [ "$(ecol krex sample 10 regions)" = 40 ]
}
ok "entry breakdown from the certificates (drain 0.3, freeze 0.1, isolate 0.05 after it, other 0.04 ms)" entry_split
# The stub krexd logs the siblings the stub krex noted, in start order: async
# first (J = 1), then sync, then cpu, which ends every drain; the victim is
# never drained; torch never started (no torch_loop.py): no row.
scol() {
	awk -F, -v s="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
		$h["mode"] == "krex" && $h["sibling"] == s { print $h[c] }' "$f/fidelity-siblings.csv"
}
siblings() {
	[ "$(sed 1d "$f/fidelity-siblings.csv" | cut -d, -f3 | sort | tr '\n' ' ')" = "async cpu sync victim " ] &&
		near "$(scol async wait_p50_ms)" 1.25 && near "$(scol async wait_p95_ms)" 1.385 &&
		near "$(scol sync wait_p50_ms)" 2.25 && [ "$(scol cpu slowest)" = 4 ] &&
		[ "$(scol async slowest)" = 0 ] && near "$(scol sync gated_ms)" 40 &&
		[ "$(scol cpu let_through)" = 6 ] && [ "$(scol victim drains)" = 0 ] &&
		grep -q "^## Drain per sibling" "$tmp/fid.txt" && [ -s "$f/fidelity-siblings.md" ]
}
ok "--drain-log: a row per sibling the run had, named by its label (krexd's wait, gate lines, gated)" siblings
ok "no stub process left after the run" leftovers

timeout 60 python3 "$perf/fidelity.py" --quick "${common[@]}" --settle-s 5 --out "$tmp/int" \
	>"$tmp/int.txt" 2>&1 &
pid=$!
wait_for 20 test -e "$tmp/int/shared.all.cpu.count"
kill -TERM $pid
wait $pid
rc=$?
pid=
interrupted() { [ $rc = 1 ] && grep -q INTERRUPTED "$tmp/int.txt" && [ -s "$tmp/int/fidelity.csv" ]; }
ok "SIGTERM: fidelity stops with status 1 and still prints its table" interrupted
wait_for 10 leftovers
ok "SIGTERM: no stub process left" leftovers
nodrainlog() {
	timeout 60 python3 "$perf/fidelity.py" --quick "${common[@]}" --modes krex --mixes sync \
		--sizes 1 --out "$tmp/nodl" >"$tmp/nodl.txt" 2>&1 &&
		grep -q "krexd -F" "$tmp/nodl/krex.sync.krexd.log" &&
		! grep -q log_level=debug "$tmp/nodl/krex.sync.krexd.log" &&
		[ ! -e "$tmp/nodl/fidelity-siblings.csv" ] && ! grep -q "Drain per sibling" "$tmp/nodl.txt"
}
ok "without --drain-log (quick, no mock): krexd not at debug, no drain table" nodrainlog

# No sibling, the gate with no region, and a spacer before each sample: the
# spacer reaches the victim (iters calibrated from its ms), the rows are there.
spacer() {
	local s=$tmp/sp
	timeout 60 python3 "$perf/fidelity.py" --quick "${common[@]}" --mixes none --sample-mixes none \
		--modes alone,krex --regions none,sample --sizes 1 --spacer-ms 0.2 --out "$s" \
		>"$tmp/sp.txt" 2>&1 &&
		near "$(col "$s/fidelity.csv" alone none 1 ev_p95)" 1 &&
		near "$(col "$s/fidelity.csv" alone none 1 wall_p95)" 1.2 &&
		near "$(col "$s/fidelity.csv" krex none 1 wall_p95)" 1.2 &&
		[ "$(col "$s/fidelity.csv" krex sample 1 clean)" = 200/200 ] &&
		grep -q "after an untimed 0.2 ms spacer kernel" "$tmp/sp.txt" &&
		! python3 "$perf/fidelity.py" --quick "${common[@]}" --regions bogus --out "$s.x" 2>/dev/null
}
ok "mix none, region style none, --spacer-ms: rows there, the spacer reaches the victim; a bad style refused" spacer

python3 "$perf/fidelity.py" --quick "${common[@]}" --victim /nonexistent --out "$tmp/skip" \
	>/dev/null 2>&1
ok "fidelity without a victim says skip (77)" [ $? = 77 ]

a=$tmp/ag
timeout 120 python3 "$perf/agents.py" --quick "${common[@]}" --n 2 --window 2 --scale 0.005 \
	--modes job,cmd,share,krex --drain-log --out "$a" >"$tmp/ag.txt" 2>"$tmp/ag.err"
rc=$?
# Rows with a rate (bench_per_h, column 6) and a KREX ratio (column 8).
agents_rows() {
	[ $rc = 0 ] &&
		[ "$(awk -F, 'NR > 1 && $6 != "" && $8 != "" { n++ } END { print n }' "$a/agents.csv")" = 4 ]
}
ok "agents on stubs: one row per mode and N (share too), KREX ratios, no failure" agents_rows
# The breakdown from the stub's certificates (0.3 ms drain, 0.1 ms freeze a
# region) and a bound for every row.
breakdown() {
	python3 - "$a" <<-'PY'
	import csv, sys
	b = [r for r in csv.DictReader(open(sys.argv[1] + "/agents-breakdown.csv")) if r["mode"] == "krex"]
	ok = b and all(abs(float(r["drain_ms"]) - 0.3 * float(r["regions"])) < 1e-6 and
	               abs(float(r["freeze_ms"]) - 0.1 * float(r["regions"])) < 1e-6 for r in b)
	rows = list(csv.DictReader(open(sys.argv[1] + "/agents.csv")))
	ok = ok and all(r["bound_per_h"] and r["of_bound_pct"] for r in rows)
	# the GPU's own bound (every kernel of an iteration, serialized) in every row
	ok = ok and all(r["gpu_bound_per_h"] and
	                float(r["bound_per_h"]) <= float(r["gpu_bound_per_h"]) + 0.5 for r in rows)
	sys.exit(0 if ok else 1)
	PY
}
ok "agents' breakdown from the certificates, a bound per row" breakdown
# Over MPS (--mps on) the kernels of different processes run at once: the
# serialized GPU bound is printed but left out of bound_per_h, and the table
# says so.  50 ms kernels: 15 of them an iteration make that bound (4800 an
# hour) the smallest, were it counted.
timeout 120 python3 "$perf/agents.py" --quick "${common[@]}" --n 2 --window 2 --scale 0.005 \
	--kernel-ms 50 --modes krex --mps on --out "$tmp/agm" >"$tmp/agm.txt" 2>&1
mps_bound() {
	python3 - "$tmp/agm" <<-'PY'
	import csv, sys
	rows = list(csv.DictReader(open(sys.argv[1] + "/agents.csv")))
	f = lambda r, k: float(r[k]) if r[k] not in ("", "-") else None
	ok = bool(rows)
	for r in rows:
	    b = [f(r, k) for k in ("ideal_per_h", "cpu_bound_per_h", "region_bound_per_h")]
	    ok = ok and f(r, "gpu_bound_per_h") is not None and \
	        f(r, "gpu_bound_per_h") < min(x for x in b if x) and \
	        abs(f(r, "bound_per_h") - min(x for x in b if x)) < 0.5
	    print("# " + ", ".join("%s %s" % (k, r[k]) for k in (
	        "ideal_per_h", "cpu_bound_per_h", "region_bound_per_h", "gpu_bound_per_h",
	        "bound_per_h")))
	sys.exit(0 if ok else 1)
	PY
}
ok "agents --mps on: the GPU's serialized bound printed, left out of bound_per_h" mps_bound
ok "... and the table says over MPS" sh -c "grep -q '^## Agent sessions per hour .*, over MPS$' '$tmp/agm/agents.md' &&
	grep -q '^over MPS (--mps on): ' '$tmp/agm.txt'"
# The perfect sharer (sharer.py, a simulation): one session never waits, so
# it runs at the nominal iteration; more sessions never beat N sessions that
# never wait, nor the GPU's own bound (every kernel, serialized); at 16 cores
# and 32 sessions the model's GPU is the limit (0.6 s a 12.4 s iteration).
perfect_sharer() {
	python3 - "$perf" "$a" <<-'PY'
	import csv, sys
	sys.path.insert(0, sys.argv[1])
	import sharer
	from agents import DURATIONS
	d = {k: v * 0.2 for k, v in DURATIONS.items()}
	nominal = d["think"] + d["compile"] + d["correct_host"] + d["bench_host"] + 0.6
	sim = lambda n, cores=16: sharer.simulate(n, d, 0.38, 0.001, 200, 200, 200, cores)
	r1, it1 = sim(1)
	ok = abs(it1 - nominal) / nominal < 0.03
	rates = [sim(n)[0] for n in (4, 8, 16, 24, 32)]
	ok = ok and all(r <= n * 3600.0 / nominal * 1.03 and r <= 6000 * 1.005
	                for n, r in zip((4, 8, 16, 24, 32), rates))
	ok = ok and all(b >= a * 0.98 for a, b in zip(rates, rates[1:])) and rates[-1] > 5700
	# two cores: the CPU is the limit (compile and host burn, 5.04 s an
	# iteration: the start-ups are a delay that uses no CPU)
	r2 = sim(32, 2)[0]
	ok = ok and 2 * 3600 / 5.04 * 0.9 < r2 <= 2 * 3600 / 5.04 * 1.005
	rows = list(csv.DictReader(open(sys.argv[2] + "/agents.csv")))
	ok = ok and all(r["sharer_per_h"] and r["of_sharer_pct"] for r in rows)
	print("# sharer: 1 session %.2f s an iteration (nominal %.2f); 4..32: %s; 2 cores: %.0f" % (
	    it1, nominal, " ".join("%.0f" % r for r in rates), r2))
	sys.exit(0 if ok else 1)
	PY
}
ok "agents: the perfect sharer's rate (sharer.py) within the ideal and the GPU bound, a column per row" \
	perfect_sharer
# The drain per sibling by role (the stub krexd: 4 regions, each 10 ms from
# the gates closing to the unwind's end, every participant drained).
agents_siblings() {
	python3 - "$a" <<-'PY'
	import csv, sys
	s = list(csv.DictReader(open(sys.argv[1] + "/agents-siblings.csv")))
	ok = sorted(r["sibling"] for r in s) == ["bench", "correct"]
	for r in s:
	    n = int(r["participants"])
	    ok = ok and n > 0 and int(r["drains"]) == 4 * n and float(r["wait_p50_ms"]) > 1.0
	    ok = ok and abs(float(r["gated_ms"]) - 40.0 * n) < 1e-6 and int(r["gate_drains"]) % 2 == 0
	b = list(csv.DictReader(open(sys.argv[1] + "/agents-breakdown.csv")))
	k = [r for r in b if r["mode"] == "krex"]
	# per iteration: a correctness and a benchmark command, 40 ms each
	ok = ok and k and abs(float(k[0]["gated_ms"]) - 80.0) < 1e-6 and k[0]["exit_ms"]
	ok = ok and all(r["first_kernel_ms"] for r in b if r["iter_s"])  # rows with benchmarks
	sys.exit(0 if ok else 1)
	PY
}
ok "agents --drain-log: a row per role (correct, bench), gated per iteration, unwind, first kernel" \
	agents_siblings
# A GPU command's wall time split by the stub's real phases (20 ms start-up
# after main(), 30 ms of "GPU work"), a row per mode and role; no NVML on the
# stubs: no utilisation.
agents_commands() {
	python3 - "$a" <<-'PY'
	import csv, sys
	c = list(csv.DictReader(open(sys.argv[1] + "/agents-commands.csv")))
	ok = sorted((r["mode"], r["role"]) for r in c) == sorted(
	    (m, x) for m in ("job", "cmd", "share", "krex") for x in ("correct", "bench"))
	f = lambda r, k: float(r[k])  # noqa: E731
	for r in c:
	    ok = ok and int(r["commands"]) > 0 and r["gpu_util_pct"] == ""
	    ok = ok and f(r, "start_s") >= 0.02 + f(r, "to_main_s") - 1e-3 and f(r, "to_main_s") >= 0
	    ok = ok and 0.03 <= f(r, "gpu_s") < 1.0 and f(r, "exit_s") >= 0 and f(r, "burn_s") >= 0
	    # the stub's start-up: 5 ms to cuInit, 10 to the context, 5 to the module
	    ok = ok and f(r, "init_s") >= 0.005 - 1e-3 and f(r, "ctx_s") >= 0.01 - 1e-3
	    ok = ok and f(r, "module_s") >= 0.005 - 1e-3
	    ok = ok and f(r, "init_s") + f(r, "ctx_s") + f(r, "module_s") <= f(r, "start_s") + 1e-3
	    # the stub gate's context hold (4 ms) in the KREX rows only (--drain-log)
	    held = r["ctx_held_s"]
	    ok = ok and (abs(float(held) - 0.004) < 1e-6 if r["mode"] == "krex" else held == "")
	sys.exit(0 if ok else 1)
	PY
}
ok "agents: a GPU command's wall time split (start-up: cuInit, context and its hold, module; GPU work, exit) per mode and role" \
	agents_commands
if command -v gnuplot >/dev/null; then
	cp "$a/agents.csv" "$a/agents-breakdown.csv" "$f/"
	"$perf/plot.sh" "$f" >/dev/null 2>"$tmp/plot.err"
	pngs() { [ -s "$f/fidelity-inflation.png" ] && [ -s "$f/fidelity-mixes.png" ] && [ -s "$f/throughput.png" ] && [ -s "$f/entry.png" ]; }
	ok "plot.sh draws the four PNGs" pngs
	# a proof.sh OUT: the lock's, KREX's and sharing's rows in their parts
	p=$tmp/proof
	mkdir -p "$p/agents" "$p/agents-cmd" "$p/agents-share" "$p/fidelity"
	cp "$f/fidelity.csv" "$p/fidelity/"
	for x in agents agents-breakdown; do
		for m in krex:agents cmd:agents-cmd share:agents-share; do
			awk -F, -v m="${m%%:*}" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "mode") c = i; print; next }
				$c == m' "$a/$x.csv" >"$p/${m#*:}/$x.csv"
		done
	done
	rows() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "mode") c = i; next }
		$c == "krex" || $c == "cmd" || $c == "share"' "$a/agents.csv" | wc -l; }
	proof_plot() {
		"$perf/plot.sh" "$p" >"$tmp/pplot.out" 2>"$tmp/pplot.err" &&
			grep -qx "agents.csv: $(rows) rows from agents-cmd/agents.csv agents/agents.csv agents-share/agents.csv" \
				"$tmp/pplot.out" &&
			[ -s "$p/throughput.png" ] && [ -s "$p/entry.png" ] && [ -s "$p/fidelity-inflation.png" ]
	}
	ok "plot.sh on a proof.sh OUT: every part's rows in one plot ($(rows) rows)" proof_plot
	echo "x,y" >"$p/agents-share/agents.csv"
	bad_header() {
		! "$perf/plot.sh" "$p" >/dev/null 2>"$tmp/pplot.err" &&
			grep -q "agents-share/agents.csv: another header than the other parts'" "$tmp/pplot.err"
	}
	ok "... a part with another header: an error, no plot from mixed columns" bad_header
else
	skip "plot.sh draws the four PNGs" "no gnuplot"
	skip "plot.sh on a proof.sh OUT" "no gnuplot"
	skip "... a part with another header" "no gnuplot"
fi
for t in fid ag; do sed 's/^/# /' "$tmp/$t.txt" | head -20; done
done_testing
