#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The facts of the manual that can drift from the code (doc_facts.py says
# how each is read): the protocol version, krexd's thread count, the tree
# paths HACKING.md and doc/ name, the links of README.md, HACKING.md, doc/
# and the notebook.  Then each check is shown to catch its fault in a copy
# of the pages with one fault planted.  (The key list against krexd.conf(5)
# is the conf tier's check.)
. "$top_srcdir/test/lib.sh"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
facts=$top_srcdir/test/unit/doc_facts.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

plan 10
fact() { python3 "$facts" "$top_srcdir" "$top_builddir" "$1" >"$tmp/$1.out" 2>&1; local rc=$?; sed 's/^/# /' "$tmp/$1.out"; return $rc; }
ok "the protocol version in the docs is common/proto.h's PROTO_VERSION" fact version
ok "the docs' count of krexd's other threads is krexd/'s pthread_create call sites" fact threads
ok "every tree path named in HACKING.md and doc/ exists" fact paths
ok "every function named in HACKING.md and doc/ is in the sources" fact funcs
ok "every relative link of README.md, HACKING.md, doc/ and the notebook resolves" fact links

# A copy of the pages and of what the checks read, each with one fault.
t=$tmp/tree
mkdir -p "$t/doc" "$t/common" "$t/krexd"
cp "$top_srcdir/README.md" "$top_srcdir/HACKING.md" "$t/"
cp "$top_srcdir"/doc/*.md "$t/doc/"
cp "$top_srcdir/common/proto.h" "$t/common/"
cp "$top_srcdir"/krexd/*.c "$top_srcdir"/krexd/*.h "$t/krexd/"
planted() { # CHECK PATTERN: the check fails on the copy and names the fault
	! python3 "$facts" "$t" "$t" "$1" >"$tmp/p.out" 2>&1 && grep -q "$2" "$tmp/p.out" ||
		{ sed 's/^/# /' "$tmp/p.out"; return 1; }
}
sed -i 's/^#define PROTO_VERSION [0-9]*/#define PROTO_VERSION 99/' "$t/common/proto.h"
ok "a protocol version other than PROTO_VERSION is found" planted version 'doc/protocol.md:.*common/proto.h has 99'
cp "$top_srcdir/common/proto.h" "$t/common/"
printf 'static void x(void) { pthread_create(&t, NULL, f, NULL); }\n' >"$t/krexd/planted.c"
ok "a fifth pthread_create in krexd/ makes the stated count wrong" planted threads 'doc/architecture.md:.*krexd/ has 5'
rm "$t/krexd/planted.c"
printf '\nRaw records in test/perf/results/h200-run1/.\n' >>"$t/doc/gpu.md"
ok "a path that does not exist is found" planted paths 'doc/gpu.md:.*test/perf/results/h200-run1/'
printf '\nThe drain calls `sib_freeze_now()`.\n' >>"$t/doc/architecture.md"
ok "a function that no source file has is found" planted funcs 'doc/architecture.md:.*sib_freeze_now()'
printf '\nSee [the status](status.md) and [entry](performance.md#no-such-heading).\n' >>"$t/doc/admin.md"
both() { planted links 'doc/admin.md:.*status.md: no such file' && grep -q 'no heading #no-such-heading' "$tmp/p.out"; }
ok "a link to a missing file or heading is found" both
done_testing
