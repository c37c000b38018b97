#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A short libFuzzer run of the wire decoder on the seed corpus (CI): at most
# FUZZ_SECONDS (default 60) or FUZZ_RUNS (default 1000000) executions; any
# crash, leak or sanitizer report fails it.  New inputs go to a scratch dir,
# never into the corpus in the tree.
. "$top_srcdir/test/lib.sh"
FUZZ=$top_builddir/test/fuzz/proto_fuzz
[ -x "$FUZZ" ] || skip_all "proto_fuzz not built (configure --enable-fuzz)"
plan 1
work=$(mktemp -d /tmp/krex-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$top_srcdir"/test/fuzz/corpus/* "$work/" 2>/dev/null
"$FUZZ" -max_total_time="${FUZZ_SECONDS:-60}" -runs="${FUZZ_RUNS:-1000000}" -max_len=70000 \
	-artifact_prefix="$work/" -print_final_stats=1 "$work" >"$work/log" 2>&1
rc=$?
grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "$work/log" | sed 's/^/# /'
ok "proto_fuzz: no crash (exit $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -n 30 "$work/log" | sed 's/^/# /'
done_testing
