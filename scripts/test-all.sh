#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's test command: install dependencies, build, check formatting,
# run every test tier (`make check`), the Slurm tier against Slurm 25.11 when
# its source is there (scripts/test-slurm-versions.sh), the unit, integration,
# attack and gate tiers again under ASan+UBSan (scripts/sanitize-check.sh), a
# short fuzz run of the wire decoder (scripts/fuzz-check.sh), `make distcheck`,
# then the packaging tier (test/pkg: builds the .debs, installs them, runs the
# demo from them, purges them; checks the RPM spec).  Ends with one line
# "N passed, N failed, N skipped" over every tier's TAP results.
# KREX_NO_SANITIZE=1 leaves out the sanitizer and fuzz runs (about 8 minutes
# on a 2-core machine).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -x configure ] || ./autogen.sh >/dev/null
[ -f Makefile ] || ./configure -q
make -j"$(nproc)" >/dev/null
scripts/check-format.sh .
log=$(mktemp)
xlog=$(mktemp)
trap 'rm -f "$log" "$xlog" "$xlog.out" "$xlog.dc"' EXIT
# show_failures DIR: the end of each test log under DIR with a failure.
show_failures() {
	for f in $(find "$1" -name '*.log' ! -name test-suite.log 2>/dev/null); do
		grep -q -E '^(not ok|ERROR|FAIL)' "$f" && { echo "==== $f"; tail -40 "$f"; }
	done
	return 0
}
rc=0
make check 2>&1 | tee "$log" || rc=$?
[ $rc = 0 ] || show_failures test
# The Slurm tier against Slurm 25.11 as well (make check's is Debian's 22.05),
# built from ../shared/deps/ when the tarball is there; skipped with the
# reason when not (doc/slurm-versions.md).
vrc=0
scripts/test-slurm-versions.sh --build --no-path 2>&1 | tee -a "$log" || vrc=$?
case $vrc in
0 | 77) ;;
*)
	show_failures _build
	rc=$vrc
	;;
esac
# make check's per-tier counts, and the last lines of the sanitizer and fuzz runs
summary() {
	cat "$log" "$xlog" | awk '/^# PASS:/ {p += $3} /^# FAIL:/ {f += $3} /^# ERROR:/ {f += $3}
		/^# SKIP:/ {s += $3}
		/^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ {p += $1; f += $3; s += $5}
		END {printf "%d passed, %d failed, %d skipped\n", p, f, s}'
}
if [ $rc != 0 ]; then
	summary
	exit $rc
fi
if [ "${KREX_NO_SANITIZE:-0}" != 1 ]; then
	for s in sanitize-check fuzz-check; do
		scripts/$s.sh >"$xlog.out" 2>&1 || rc=$?
		tail -n 60 "$xlog.out"
		tail -n 1 "$xlog.out" >>"$xlog"
		rm -f "$xlog.out"
	done
	if [ $rc != 0 ]; then
		summary
		exit $rc
	fi
fi
# distcheck runs the suite again from the tarball, out of tree and read-only.
# Its output goes to a log; on a failure, the log's end and each failing
# test's log are shown (the tree distcheck leaves behind holds them).
t0=$(date +%s)
if make distcheck >"$xlog.dc" 2>&1; then
	echo "distcheck: ok, $(($(date +%s) - t0)) s"
else
	rc=$?
	tail -n 40 "$xlog.dc"
	show_failures "$(ls -d krex-*/_build 2>/dev/null | head -n 1)"
	summary
	exit $rc
fi
make -C test/pkg check 2>&1 | tee -a "$log" || rc=$?
[ $rc = 0 ] || show_failures test/pkg
summary
exit $rc
