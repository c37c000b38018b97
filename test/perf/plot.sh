#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# plot.sh - PNGs from the CSVs of fidelity.py and agents.py (gnuplot).
#
#	test/perf/plot.sh [-m MIX] DIR      reads DIR/fidelity.csv, DIR/agents.csv
#
# Writes DIR/fidelity-inflation.png (p95 wall-time inflation versus alone, per
# kernel size and mode, for one sibling mix: default "all"), DIR/fidelity-mixes.png
# (the same per mix: shared, and krex with many samples per region) and DIR/throughput.png (timed
# benchmarks per hour per session count and mode).  Runs where gnuplot is (the
# GPU machine has none: fetch the CSVs and plot here).  Figures only; no judgement.
set -euo pipefail

mix=all
while getopts "m:" o; do
	case $o in
	m) mix=$OPTARG ;;
	*) echo "usage: $0 [-m MIX] DIR" >&2 && exit 2 ;;
	esac
done
shift $((OPTIND - 1))
dir=${1:?usage: $0 [-m MIX] DIR}
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot not found" >&2 && exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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

if [ -f "$dir/fidelity.csv" ]; then
	# Variant name mode/region; inflation clamped at 0.01 % for the log axis
	# (a run faster than alone has none to show).
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print $0 ",variant,infl"; next }
		$c["mode"] != "alone" && $c["infl_wall_p95_pct"] != "" {
		v = $c["infl_wall_p95_pct"] + 0; if (v < 0.01) v = 0.01
		r = $c["region"]; $c["size_ms"] = $c["size_ms"] "ms"
		print $0 "," $c["mode"] (r == "none" ? "" : "/" r) "," v }' OFS=, \
		"$dir/fidelity.csv" >"$tmp/f.csv"
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
if [ -f "$dir/agents.csv" ]; then
	pivot "$dir/agents.csv" n mode bench_per_h >"$tmp/a.dat"
	sed -i '2,$s/^/N=/' "$tmp/a.dat"
	hist "$tmp/a.dat" "$dir/throughput.png" \
		"timed benchmarks per hour (one per agent iteration), by concurrent sessions" \
		"benchmarks / hour" "set yrange [0:*]"
fi
