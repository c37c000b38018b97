#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# check-report.sh DIR TIMES [FAILED_TIER...]: the end of make check (test/Makefile.am).
# Prints each tier's time from TIMES (lines "TIER END START", seconds) and,
# for each failed tier under DIR, every failed test: its tier, its name,
# its failing TAP lines and the last 30 lines of its log.
dir=$1
times=$2
shift 2
echo "==== make check: time per tier"
awk '{ printf "  %-12s %5d s\n", $1, $2 - $3; s += $2 - $3 } END { printf "  %-12s %5d s\n", "total", s }' "$times"
[ $# -gt 0 ] || exit 0
echo "==== make check: FAILED in$(printf ' %s' "$@")"
for t in "$@"; do
	found=0
	for trs in "$dir/$t"/*.trs; do
		[ -f "$trs" ] || continue
		case $(sed -n 's/^:global-test-result: //p' "$trs") in
		PASS | SKIP | XFAIL) continue ;;
		esac
		found=1
		log=${trs%.trs}.log
		echo "---- $t/$(basename "$log" .log) ($log)"
		grep -E '^(not ok|Bail out)' "$log" | head -n 20 | sed 's/^/  /'
		sed -n 's/^:test-result: \(ERROR\) /  ERROR: /p' "$trs"
		echo "  last lines of the log:"
		tail -n 30 "$log" | sed 's/^/  | /'
	done
	# a tier that failed without a failed test: its build or make failed
	[ "$found" = 1 ] || echo "---- $t: no test failed; the tier's build or make failed (see above)"
done
exit 0
