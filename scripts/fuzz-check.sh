#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fuzz-check.sh [BUILDDIR] - the wire decoder's libFuzzer target, short run,
# for CI.  Copies the working tree (tracked and untracked, not ignored files)
# to BUILDDIR (default: a temp dir, removed after), configures it with clang
# and --enable-fuzz, builds common/ and test/fuzz/proto_fuzz only, and runs
# test/fuzz/fuzz-short.sh (FUZZ_SECONDS, default 60; FUZZ_RUNS, default
# 1000000).  Ends with "N passed, N failed, N skipped"; exit 1 on a crash, 2
# when it cannot build (clang or its libFuzzer missing: scripts/install-deps.sh
# installs both).  doc/security.md "Fuzzing the wire decoder".
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-}
keep=1
if [ -z "$dir" ]; then
	dir=$(mktemp -d /tmp/krex-fuzz-build.XXXXXX)
	keep=0
fi
cleanup() { [ "$keep" = 1 ] || rm -rf "$dir"; }
trap cleanup EXIT
start=$(date +%s)
command -v clang >/dev/null || {
	echo "fuzz-check: clang not installed (scripts/install-deps.sh)"
	exit 2
}
mkdir -p "$dir"
(cd "$src" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$dir" || exit 2
cd "$dir" || exit 2
{ ./autogen.sh && CC=clang ./configure -q --enable-fuzz && make -C common -j"$(nproc)" &&
	make -C test/fuzz proto_fuzz; } >build.log 2>&1 || {
	tail -n 40 build.log
	echo "fuzz-check: build failed"
	exit 2
}
make -C test/fuzz check >check.log 2>&1
rc=$?
cat test/fuzz/fuzz-short.log
echo "fuzz-check: $(($(date +%s) - start)) s"
awk '/^# PASS:/ {p += $3} /^# FAIL:/ {f += $3} /^# ERROR:/ {f += $3} /^# SKIP:/ {s += $3}
	END {printf "%d passed, %d failed, %d skipped\n", p, f, s}' check.log
[ $rc = 0 ] || exit 1
