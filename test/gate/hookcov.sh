#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every hooked symbol (and per-thread variant) is reached through direct
# binding, dlsym and cuGetProcAddress (HIP: direct and dlsym): the gate's
# wrapper is entered on each path (KREX_GATE_COUNTS) and every call reaches
# the mock driver exactly once (no call lost, none doubled).
. "$top_srcdir/test/lib.sh"
G=$top_builddir/libregion/gate/.libs/libkrexgate.so
[ -r "$G" ] || skip_all "libkrexgate.so not built"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
export KREX_MOCK_GPU=/krex-hookcov-$$
LD_LIBRARY_PATH=$top_builddir/test/mock/.libs KREX_GATE_COUNTS=$T/counts LD_PRELOAD=$G \
	./hookcov >"$T/mock" 2>"$T/err"
rc=$?
rm -f /dev/shm/krex-hookcov-$$
n=$(grep -c '^mock ' "$T/mock")
plan $((n + 1))
ok "hookcov ran (rc $rc)" [ "$rc" = 0 ]
while read -r _ name calls; do
	case $name in hip*) want=2 ;; *) want=3 ;; esac
	gate=$(awk -v s="$name" '$2 == s { n += $3 } END { print n + 0 }' "$T/counts")
	ok "$name: gate saw $gate of $want, driver got $calls" \
		test "$gate" = "$want" -a "$calls" = "$want"
done <"$T/mock"
done_testing
