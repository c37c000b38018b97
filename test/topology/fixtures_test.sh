#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# fixtures_test.sh - the topology module on kept topologies: for every
# fixtures/NAME.xml, krex-topo's GPU table and the core choices of
# NAME.cases must match NAME.expected (reviewed by hand when made, see
# doc/topology.md "Fixtures").  Add a machine: regen-expected.sh NAME.
. "$top_srcdir/test/lib.sh"

tool="$top_builddir/topology/krex-topo"
fixtures="$top_srcdir/test/topology/fixtures"
[ -x "$tool" ] || skip_all "krex-topo not built"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# same_output NAME: run the cases of NAME and compare with NAME.expected.
same_output() {
	"$tool" -t "xml:$fixtures/$1.xml" -f "$fixtures/$1.cases" >"$tmp/$1.out" 2>&1 &&
		diff -u "$fixtures/$1.expected" "$tmp/$1.out" | sed 's/^/# /' &&
		cmp -s "$fixtures/$1.expected" "$tmp/$1.out"
}

set -- "$fixtures"/*.xml
plan $#
for f; do
	name=$(basename "$f" .xml)
	if [ ! -f "$fixtures/$name.expected" ]; then
		ok "$name: has an expected output (run regen-expected.sh $name)" false
		continue
	fi
	ok "$name: GPU locality and core choices as expected" same_output "$name"
done
done_testing
