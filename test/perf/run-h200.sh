#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run-h200.sh - the whole GPU benchmark set in one call (doc/performance-gpu.md).
#
#	bash test/perf/run-h200.sh [BUILDDIR [OUTDIR]]   (from the source tree's root)
#
# BUILDDIR: a configured and built tree with real CUDA (default $KREX_BUILDDIR);
# without one it builds from .gpu/'s `make dist` tarball (scripts/gpu-build.sh,
# about a minute on the H200 machine).  OUTDIR: default $OUT, else ./perf-out.
# Runs fidelity.py --full, then agents.py --full with 20 s windows (the longer
# throughput run is its own call: agents.py --full); writes every CSV, markdown
# table and log under OUTDIR and prints the tables last.  Each driver has a hard
# time limit (under 9 minutes in all, build included); a driver stopped by it
# still writes the table of what ran.  Reads the GPU clocks, never sets them.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
build=${1:-${KREX_BUILDDIR:-}}
if [ -z "$build" ]; then
	cd "$here/../.." || exit 1
	ls .gpu/krex-*.tar.gz >/dev/null 2>&1 ||
		{ echo "run-h200.sh: no BUILDDIR and no .gpu/krex-*.tar.gz (scripts/gpu-carry.sh)" >&2; exit 1; }
	build=$(timeout 300 bash scripts/gpu-build.sh | tail -1)
fi
[ -x "$build/krexd/krexd" ] || { echo "run-h200.sh: no krexd under '$build'" >&2; exit 1; }
build=$(cd "$build" && pwd)
out=${2:-${OUT:-$PWD/perf-out}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export PYTHONDONTWRITEBYTECODE=1

# The workloads' kernel on a real GPU: fma.fatbin, made by nvcc from
# test/workloads/fma.cu (test/gpu/build.sh); the workloads read KREX_WL_MODULE.
if [ -z "${KREX_WL_MODULE:-}" ]; then
	for m in "$build/test/gpu/fma.fatbin" "$build/test/workloads/fma.fatbin" "$build/fma.fatbin"; do
		[ -f "$m" ] && export KREX_WL_MODULE=$m && break
	done
fi
if [ -z "${KREX_WL_MODULE:-}" ] && command -v nvidia-smi >/dev/null; then
	echo "run-h200.sh: no fma.fatbin: build it (test/gpu/build.sh, or" \
		"nvcc -fatbin -o $build/test/gpu/fma.fatbin $here/../workloads/fma.cu)" \
		"or set KREX_WL_MODULE" >&2
	exit 1
fi

{
	date -u
	uname -a
	python3 --version
	nproc
	echo "KREX_WL_MODULE=${KREX_WL_MODULE:-} KREX_PERF_GPUS=${KREX_PERF_GPUS:-}"
	command -v nvidia-smi >/dev/null &&
		nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks_event_reasons.active --format=csv
} >"$out/env.txt" 2>&1

echo "build $(($(date +%s) - start)) s" >>"$out/env.txt"
# Budgets: fidelity stops starting measurements at 240 s, agents at 170 s;
# the limits below leave room for the last measurement and the teardown.
timeout -k 10 275 python3 "$here/fidelity.py" --full --builddir "$build" --out "$out/fidelity" \
	>"$out/fidelity.txt" 2>"$out/fidelity.err"
echo "fidelity rc=$?" >>"$out/env.txt"
timeout -k 10 190 python3 "$here/agents.py" --full --window 20 --budget-s 170 \
	--builddir "$build" --out "$out/agents" >"$out/agents.txt" 2>"$out/agents.err"
echo "agents rc=$?" >>"$out/env.txt"
echo "total $(($(date +%s) - start)) s" >>"$out/env.txt"

tail -3 "$out/fidelity.err" "$out/agents.err"
cat "$out/env.txt" "$out/fidelity.txt" "$out/agents.txt"
