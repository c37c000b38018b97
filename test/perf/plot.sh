#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# plot.sh - PNGs from the CSVs of fidelity.py and agents.py (gnuplot).
#
#	test/perf/plot.sh [-m MIX] [-s SOURCE] DIR
#
# Reads DIR/fidelity.csv, DIR/agents.csv, DIR/agents-breakdown.csv and
# DIR/entry-split.txt (entry_split.py's table), whichever are there; or, where
# DIR is test/gpu/proof.sh's OUT (none of those at its top), its parts'
# (fidelity/, agents/, agents-cmd/, agents-share/: the KREX, lock and plain
# sharing rows in one plot).  Writes
# DIR/fidelity-inflation.png (p95 wall-time inflation versus alone, per kernel
# size and mode, for one sibling mix: default "all"), DIR/fidelity-mixes.png
# (the same per mix: shared, and krex with many samples per region),
# DIR/throughput.png (timed benchmarks per hour over the number of sessions, a
# curve per mode, with the bounds agents.py computed: the ideal, the command
# lock's ceiling, KREX's bound, the perfect sharer's rate) and DIR/entry.png (a region entry broken down
# by phase: from agents-breakdown.csv the mean per benchmark, stacked, every
# part of it, the rest (round trips, krexd's loop) as "other"; from
# entry-split.txt each phase's p50 and p95).  SOURCE (default: DIR) is printed
# on every plot: which run, where, when.  Runs where gnuplot is (the GPU
# machine has none: fetch the CSVs and plot here).  Figures only; no judgement.
set -euo pipefail

mix=all
src=
while getopts "m:s:" o; do
	case $o in
	m) mix=$OPTARG ;;
	s) src=$OPTARG ;;
	*) echo "usage: $0 [-m MIX] [-s SOURCE] DIR" >&2 && exit 2 ;;
	esac
done
shift $((OPTIND - 1))
dir=${1:?usage: $0 [-m MIX] [-s SOURCE] DIR}
src=${src:-$dir}
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot not found" >&2 && exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A proof.sh OUT (agents/, agents-cmd/, agents-share/, fidelity/ under DIR,
# no CSV at its top): each CSV's rows of every part under one header, read
# from $tmp/in; the PNGs still go to DIR.
indir=$dir
if [ ! -f "$dir/agents.csv" ] && [ ! -f "$dir/fidelity.csv" ] &&
	{ [ -d "$dir/agents" ] || [ -d "$dir/agents-cmd" ] || [ -d "$dir/agents-share" ] ||
		[ -d "$dir/fidelity" ]; }; then
	indir=$tmp/in
	mkdir -p "$indir"
	for f in agents.csv agents-breakdown.csv; do
		set -- "$dir"/agents-cmd/"$f" "$dir"/agents/"$f" "$dir"/agents-share/"$f"
		from=
		for g; do
			[ -f "$g" ] || continue
			from="$from ${g#"$dir"/}"
			[ -f "$indir/$f" ] || head -n 1 "$g" >"$indir/$f"
			# one header for all: the parts' CSVs come from one agents.py
			[ "$(head -n 1 "$g")" = "$(head -n 1 "$indir/$f")" ] ||
				{ echo "plot.sh: $g: another header than the other parts'" >&2 && exit 1; }
			tail -n +2 "$g" >>"$indir/$f"
		done
		[ -z "$from" ] || echo "$f: $(($(wc -l <"$indir/$f") - 1)) rows from$from"
	done
	if [ -f "$dir/fidelity/fidelity.csv" ]; then cp "$dir/fidelity/fidelity.csv" "$indir/"; fi
fi

# pivot CSV ROWKEY COLKEY VALUE [FILTER-COL FILTER-VALUE]...: a whitespace table,
# one line per ROWKEY value (in order of appearance), one column per COLKEY value,
# "?" where missing.  Column names come from the CSV header.
pivot() {
	local csv=$1
	shift
	awk -F, -v spec="$*" '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i
		  n = split(spec, s, " "); rk = col[s[1]]; ck = col[s[2]]; vk = col[s[3]]
		  for (i = 4; i + 1 <= n; i += 2) filt[col[s[i]]] = s[i + 1]
		  next }
	{ for (c in filt) if ($c != filt[c]) next
	  if (!($rk in seenr)) { seenr[$rk] = 1; rows[++nr] = $rk }
	  if (!($ck in seenc)) { seenc[$ck] = 1; cols[++nc] = $ck }
	  if ($vk != "") val[$rk, $ck] = $vk }
	END { printf "key"; for (j = 1; j <= nc; j++) printf " %s", cols[j]; print ""
	      for (i = 1; i <= nr; i++) { printf "%s", rows[i]
		for (j = 1; j <= nc; j++) { k = rows[i] SUBSEP cols[j]
		  printf " %s", (k in val) ? val[k] : "?" }
		print "" } }' "$csv"
}

# hist DAT PNG TITLE YLABEL LOG: a clustered histogram, one cluster per row.
hist() {
	local ncol
	ncol=$(head -1 "$1" | wc -w)
	[ "$ncol" -ge 2 ] || { echo "plot.sh: nothing to plot for $2" >&2 && return 0; }
	gnuplot <<-EOF
	set terminal pngcairo size 1000,560 noenhanced font ",11"
	set output "$2"
	set title "$3"
	set ylabel "$4"
	set datafile missing "?"
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.85 border -1
	set key outside right top
	set grid ytics
	$5
	plot for [i=2:$ncol] "$1" using i:xtic(1) title columnheader(i)
	EOF
	echo "wrote $2"
}

if [ -f "$indir/fidelity.csv" ]; then
	# Variant name mode/region; inflation clamped at 0.01 % for the log axis
	# (a run faster than alone has none to show).
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print $0 ",variant,infl"; next }
		$c["mode"] != "alone" && $c["infl_wall_p95_pct"] != "" {
		v = $c["infl_wall_p95_pct"] + 0; if (v < 0.01) v = 0.01
		r = $c["region"]; $c["size_ms"] = $c["size_ms"] "ms"
		print $0 "," $c["mode"] (r == "none" ? "" : "/" r) "," v }' OFS=, \
		"$indir/fidelity.csv" >"$tmp/f.csv"
	pivot "$tmp/f.csv" size_ms variant infl mix "$mix" >"$tmp/f.dat"
	hist "$tmp/f.dat" "$dir/fidelity-inflation.png" \
		"p95 wall-time inflation vs alone, siblings: $mix (goals 2% / 0.8% / 0.15% at 0.1 / 1 / 10 ms)" \
		"inflation % (log; floor 0.01)" "set logscale y; set yrange [0.005:*]"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next }
		($c["mode"] == "shared" && $c["region"] == "none") ||
		($c["mode"] == "krex" && $c["region"] == "batch") {
		m = $c["mode"]
		$c["variant"] = $c["mix"] "/" m; print }' OFS=, "$tmp/f.csv" >"$tmp/m.csv"
	pivot "$tmp/m.csv" size_ms variant infl >"$tmp/m.dat"
	hist "$tmp/m.dat" "$dir/fidelity-mixes.png" \
		"p95 wall-time inflation vs alone per sibling mix: shared vs krex (many samples per region)" \
		"inflation % (log; floor 0.01)" "set logscale y; set yrange [0.005:*]"
fi
# agents_dat CSV: N, then a column per mode (bench_per_h), then the bounds
# (ideal, the command lock's ceiling, KREX's bound, the perfect sharer) where
# the CSV has them.
# A real CSV reader: a note may hold commas.
agents_dat() {
	python3 - "$1" <<-'PY'
	import csv, sys
	rows = list(csv.DictReader(open(sys.argv[1])))
	num = lambda v: float(v) if v not in (None, "") else None
	ns = sorted({int(r["n"]) for r in rows})
	modes = []
	for r in rows:
	    if r["mode"] not in modes:
	        modes.append(r["mode"])
	get = lambda n, m, k: next((num(r.get(k)) for r in rows
	                            if int(r["n"]) == n and r["mode"] == m), None)
	bounds = [("bound: ideal (N sessions never waiting)", lambda n: get(n, "krex", "ideal_per_h")
	           or get(n, "cmd", "ideal_per_h")),
	          ("bound: cmd lock ceiling", lambda n: get(n, "cmd", "ceiling_per_h")),
	          ("bound: krex (min of ideal, CPU, GPU, region)", lambda n: get(n, "krex", "bound_per_h")),
	          ("perfect sharer (sharer.py, simulated)",
	           lambda n: next((num(r.get("sharer_per_h")) for r in rows
	                           if int(r["n"]) == n and r.get("sharer_per_h")), None))]
	bounds = [b for b in bounds if any(b[1](n) for n in ns)]
	print(" ".join('"%s"' % h for h in ["N"] + modes + [b[0] for b in bounds]))
	for n in ns:
	    v = [get(n, m, "bench_per_h") for m in modes] + [b[1](n) for b in bounds]
	    print(" ".join([str(n)] + ["?" if x is None else "%.1f" % x for x in v]))
	print("#modes %d" % len(modes))
	PY
}

# gp_head PNG HEIGHT TITLE: gnuplot's first lines for a plot with the data's source under it.
gp_head() {
	printf '%s\n' "set terminal pngcairo size 1100,$2 noenhanced font \",11\"" \
		"set output \"$1\"" "set title \"$3\"" \
		"set label 1 \"data: $src\" at screen 0.01, screen 0.025 left font \",9\"" \
		"set bmargin 5" "set key outside right top" "set yrange [0:*]"
}

if [ -f "$indir/agents.csv" ]; then
	agents_dat "$indir/agents.csv" >"$tmp/a.dat"
	nm=$(sed -n 's/^#modes //p' "$tmp/a.dat")
	ncol=$(head -1 "$tmp/a.dat" | grep -o '"[^"]*"' | wc -l)
	gnuplot <<-EOF
	$(gp_head "$dir/throughput.png" 600 "Timed benchmarks per hour over concurrent agent sessions (agents.py)")
	set xlabel "agent sessions sharing one GPU (N)"
	set ylabel "benchmarks / hour"
	set datafile missing "?"
	set grid
	set xrange [0:*]
	plot for [i=2:$((nm + 1))] "$tmp/a.dat" using 1:i with linespoints lw 2 pt 7 title columnheader(i), \
	     for [i=$((nm + 2)):$ncol] "$tmp/a.dat" using 1:i with linespoints dt 2 lw 1.5 pt 1 title columnheader(i)
	EOF
	echo "wrote $dir/throughput.png"
fi

# The entry by phase: agents.py's mean per benchmark (stacked), or
# entry_split.py's p50 and p95 per phase.
if [ -f "$indir/agents-breakdown.csv" ]; then
	python3 - "$indir/agents-breakdown.csv" >"$tmp/e.dat" <<-'PY'
	import csv, sys
	# every part of entry_ms: the certificates' phases and the rest
	# (entry_other_ms: round trips, krexd's loop), so that a bar is the entry
	ph = [("queued_ms", "queued"), ("drain_ms", "drain"), ("freeze_ms", "freeze"),
	      ("isolate_ms", "isolate"), ("settle_ms", "settle"), ("entry_other_ms", "other")]
	hdr = next(csv.reader(open(sys.argv[1])), [])
	ph = [p for p in ph if p[0] in hdr]
	print(" ".join(["run"] + [p[1] for p in ph]))
	for r in csv.DictReader(open(sys.argv[1])):
	    if r.get("drain_ms"):
	        print(" ".join(["%s/N=%s" % (r["mode"], r["n"])] +
	                       ["%.3f" % max(0.0, float(r.get(p[0]) or 0)) for p in ph]))
	PY
	title="Region entry per benchmark by phase, mean ms (other: round trips, krexd's loop)"
elif [ -f "$indir/entry-split.txt" ]; then
	awk 'NR == 1 { print "phase p50 p95"; next } NF >= 4 { print $1, $3, $4 }' \
		"$indir/entry-split.txt" >"$tmp/e.dat"
	title="Region entry by phase, ms: each phase's p50 and p95 (isolation runs after the freeze)"
fi
if [ -s "$tmp/e.dat" ] && [ "$(wc -l <"$tmp/e.dat")" -ge 2 ]; then
	ncol=$(head -1 "$tmp/e.dat" | wc -w)
	style="set style histogram clustered gap 1"
	[ -f "$indir/agents-breakdown.csv" ] && style="set style histogram rowstacked"
	gnuplot <<-EOF
	$(gp_head "$dir/entry.png" 560 "$title")
	set ylabel "ms"
	set style data histograms
	$style
	set style fill solid 0.85 border -1
	set boxwidth 0.7
	set grid ytics
	plot for [i=2:$ncol] "$tmp/e.dat" using i:xtic(1) title columnheader(i)
	EOF
	echo "wrote $dir/entry.png"
fi
