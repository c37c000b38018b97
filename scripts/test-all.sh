#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's test command: install dependencies, build, check formatting,
# run every test tier (`make check`), `make distcheck`, then the packaging
# tier (test/pkg: builds the .debs, installs them, runs the demo from them,
# purges them; checks the RPM spec).  Ends with one
# line "N passed, N failed, N skipped" over every tier's TAP results.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -x configure ] || ./autogen.sh >/dev/null
[ -f Makefile ] || ./configure -q
make -j"$(nproc)" >/dev/null
scripts/check-format.sh .
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
make check 2>&1 | tee "$log" || rc=$?
if [ $rc != 0 ]; then
	for f in $(find test -name '*.log' ! -name test-suite.log); do
		grep -q -E '^(not ok|ERROR|FAIL)' "$f" && { echo "==== $f"; tail -40 "$f"; }
	done
fi
summary() {
	awk '/^# PASS:/ {p += $3} /^# FAIL:/ {f += $3} /^# ERROR:/ {f += $3} /^# SKIP:/ {s += $3}
		END {printf "%d passed, %d failed, %d skipped\n", p, f, s}' "$log"
}
if [ $rc != 0 ]; then
	summary
	exit $rc
fi
# distcheck runs the suite again from the tarball, out of tree and read-only.
make distcheck >/dev/null
echo "distcheck: ok"
make -C test/pkg check 2>&1 | tee -a "$log" || rc=$?
if [ $rc != 0 ]; then
	for f in test/pkg/*.log; do
		grep -q -E '^(not ok|ERROR|FAIL)' "$f" && { echo "==== $f"; tail -40 "$f"; }
	done
fi
summary
exit $rc
