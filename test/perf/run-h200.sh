#!/bin/bash
# run-h200.sh - the whole GPU benchmark set in one call (doc/performance-gpu.md).
#
#	bash test/perf/run-h200.sh [BUILDDIR [OUTDIR]]
#
# BUILDDIR: a configured and built tree with real CUDA (default $KREX_BUILDDIR,
# else the source tree); it builds nothing.  OUTDIR: default $OUT, else
# ./perf-out.  Runs fidelity.py --full, then agents.py --full; writes every CSV,
# markdown table and log under OUTDIR and prints the tables last.  Each driver
# has a hard time limit (under 8 minutes in all); a driver stopped by it still
# writes the table of what ran.  Reads the GPU clocks, never sets them.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-${KREX_BUILDDIR:-$here/../..}}" && pwd)
out=${2:-${OUT:-$PWD/perf-out}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export PYTHONDONTWRITEBYTECODE=1
start=$(date +%s)

{
	date -u
	uname -a
	python3 --version
	nproc
	command -v nvidia-smi >/dev/null &&
		nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks_event_reasons.active --format=csv
} >"$out/env.txt" 2>&1

# Budgets: fidelity stops starting measurements at 240 s, agents at 170 s;
# the limits below leave room for the last measurement and the teardown.
timeout -k 10 275 python3 "$here/fidelity.py" --full --builddir "$build" --out "$out/fidelity" \
	>"$out/fidelity.txt" 2>"$out/fidelity.err"
echo "fidelity rc=$?" >>"$out/env.txt"
timeout -k 10 190 python3 "$here/agents.py" --full --builddir "$build" --out "$out/agents" \
	>"$out/agents.txt" 2>"$out/agents.err"
echo "agents rc=$?" >>"$out/env.txt"
echo "total $(($(date +%s) - start)) s" >>"$out/env.txt"

tail -3 "$out/fidelity.err" "$out/agents.err"
cat "$out/env.txt" "$out/fidelity.txt" "$out/agents.txt"
