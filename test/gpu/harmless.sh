#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# harmless.sh - the proof that KREX does no harm to its siblings, in one call
# (doc/harmless.md).
#
#	bash test/gpu/harmless.sh [--builddir BUILD] [--out DIR] [--seconds S] [--runs N]
#	                          [--mock] [harmless.py options...]
#
# Runs from the source tree's root.  BUILD: a tree configured with CUDA and
# built (default $KREX_BUILDDIR, else /tmp/krex-build when scripts/gpu-build.sh
# made one, else the source tree; with none of those it builds from .gpu/'s
# tarball with scripts/gpu-build.sh).  DIR: default $OUT, else ./harmless-out.
# Every pass lasts S seconds (default 45; a run is two passes: about 2
# minutes on the H200); the whole is under one `timeout` of N * (2 * S + 100)
# + 60 s, at most 570 s (KREX_HARMLESS_LIMIT overrides it), and no run starts
# that would not end before it (harmless.py --budget-s).  Without a GPU and
# without --mock it prints a SKIP line and exits 0.  Reads GPU clocks, never
# sets them.
# Exit status: harmless.py's (0 goal met, 1 failed, 3 incomplete, 2 set-up).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${KREX_BUILDDIR:-}
out=${OUT:-$PWD/harmless-out}
seconds=45
runs=1
mock=0
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--builddir) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--seconds) seconds=$2; args+=(--seconds "$2"); shift 2 ;;
	--runs) runs=$2; args+=(--runs "$2"); shift 2 ;;
	--mock) mock=1; args+=(--mock); shift ;;
	*) args+=("$1"); shift ;;
	esac
done
if [ "$mock" = 0 ] && { ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; }; then
	echo "SKIP: no NVIDIA GPU here (nvidia-smi -L failed); --mock runs the harness on the mock driver"
	exit 0
fi
if [ -z "$build" ]; then
	if [ -x /tmp/krex-build/krexd/krexd ]; then
		build=/tmp/krex-build
	elif [ -x "$src/krexd/krexd" ]; then
		build=$src
	elif ls "$src"/.gpu/krex-*.tar.gz >/dev/null 2>&1; then
		build=$(cd "$src" && timeout 300 bash scripts/gpu-build.sh | tail -1)
	fi
fi
[ -n "$build" ] && [ -x "$build/krexd/krexd" ] ||
	{ echo "harmless.sh: no krexd under '${build:-}' (give --builddir, or build first: doc/gpu.md)" >&2; exit 2; }
build=$(cd "$build" && pwd)
mkdir -p "$out" && out=$(cd "$out" && pwd)
limit=${KREX_HARMLESS_LIMIT:-$(awk -v n="$runs" -v s="$seconds" 'BEGIN { l = n * (2 * s + 100) + 60; printf "%d", l < 570 ? l : 570 }')}
{
	date -u
	uname -a
	python3 --version
	nproc
	command -v nvidia-smi >/dev/null &&
		nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks_event_reasons.active --format=csv
	python3 - <<-'EOF'
	import importlib
	for m in ("torch", "jax", "cupy", "triton", "numpy"):
	    try:
	        print(m, importlib.import_module(m).__version__)
	    except Exception as e:
	        print(m, "missing:", type(e).__name__)
	EOF
	echo "build: $build; limit ${limit}s"
} >"$out/env.txt" 2>&1
export PYTHONDONTWRITEBYTECODE=1
# SIGTERM first (harmless.py then stops every sibling and krexd and still
# writes the tables of what ran), SIGKILL 30 s later.
timeout -k 30 "$limit" python3 "$here/harmless/harmless.py" --builddir "$build" --out "$out" \
	--budget-s $((limit - 20)) "${args[@]}"
rc=$?
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks_event_reasons.active \
	--format=csv >>"$out/env.txt" 2>&1
[ $rc = 124 ] && echo "harmless.sh: stopped by its time limit (${limit}s); see $out" >&2
exit $rc
