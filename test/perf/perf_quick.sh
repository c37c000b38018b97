#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Tier 5 (perf), quick: fidelity.py --quick and agents.py --quick against the
# mock driver.  Prints their tables as TAP diagnostics; a timing never fails
# it (only a crash or unparsable output does).  Skips while the workloads,
# the mock driver, krexd or krex are not built.
. "$top_srcdir/test/lib.sh"

b=$top_builddir
command -v python3 >/dev/null || skip_all "python3 not found"
for t in test/workloads/krex-victim test/workloads/krex-hog; do
	[ -x "$b/$t" ] || skip_all "$t not built yet"
done
[ -x "$b/krexd/krexd" ] || skip_all "krexd not built yet"
[ -x "$b/krex/krex" ] || [ -x "$b/krexd/krex" ] || skip_all "krex not built yet"
[ -e "$b/test/mock/.libs/libcuda.so.1" ] || [ -e "$b/test/mock/libcuda.so.1" ] ||
	skip_all "mock libcuda.so.1 not built yet"

tmp=$(mktemp -d)
# A simulated GPU of our own, so other tests running at the same time do
# not share it (test/mock: KREX_MOCK_GPU names its shared-memory object).
export KREX_MOCK_GPU=/krex-perf-$$
trap 'rm -rf "$tmp" "/dev/shm$KREX_MOCK_GPU"' EXIT
export PYTHONDONTWRITEBYTECODE=1 # the source tree may be read-only (distcheck)

# bench NAME DESCRIPTION: run NAME.py --quick, one TAP line, the table as diag.
bench() {
	local name=$1 desc=$2 rc
	timeout -k 10 240 python3 "$top_srcdir/test/perf/$name.py" --quick --mock auto \
		--builddir "$b" --srcdir "$top_srcdir" --out "$tmp/$name" \
		>"$tmp/$name.txt" 2>"$tmp/$name.err"
	rc=$?
	_tap_n=$((_tap_n + 1))
	case $rc in
	0) echo "ok $_tap_n - $desc completed # figures below" ;;
	77) echo "ok $_tap_n - $desc # SKIP $(tail -1 "$tmp/$name.txt")" ;;
	*)
		echo "not ok $_tap_n - $desc failed (rc $rc)"
		_tap_fail=$((_tap_fail + 1))
		sed 's/^/# stderr: /' "$tmp/$name.err" | tail -20
		;;
	esac
	sed 's/^/# /' "$tmp/$name.txt"
}

plan 2
bench fidelity "fidelity quick run"
bench agents "agents quick run"
done_testing
