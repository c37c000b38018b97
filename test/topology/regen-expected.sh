#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# regen-expected.sh NAME [BUILDDIR] - write fixtures/NAME.expected from
# krex-topo's output on fixtures/NAME.xml and NAME.cases (default.cases when
# NAME.cases is missing, which it copies).  Review the result by hand before
# committing it: the test only checks that the output does not change.
#
# Adding a machine (e.g. the GPU node):
#   on it:   krex-topo -x h200.xml        (or lstopo --of xml h200.xml)
#   here:    cp h200.xml test/topology/fixtures/ && test/topology/regen-expected.sh h200
set -e
name=${1:?usage: regen-expected.sh NAME [BUILDDIR]}
here=$(cd "$(dirname "$0")" && pwd)
build=${2:-$here/../..}
fx="$here/fixtures"
[ -f "$fx/$name.cases" ] || cp "$fx/default.cases" "$fx/$name.cases"
"$build/topology/krex-topo" -t "xml:$fx/$name.xml" -f "$fx/$name.cases" >"$fx/$name.expected"
cat "$fx/$name.expected"
