#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# RTLD_NEXT through the gate's dlsym and dlvsym means "after the caller",
# as in libc: an interposer preloaded after the gate (libnextprobe.so, of
# nextprobe_fn@@NEXTPROBE_1 of libnextbase.so) that looks up the function
# it wraps gets libnextbase's, not its own (a call would recurse forever),
# both in its constructor, before the gate's constructors ran (as a
# sanitizer runtime does at its start-up), and after them.
. "$top_srcdir/test/lib.sh"
G=$top_builddir/gate/.libs/libkrexgate.so
IP=$top_builddir/test/gate/.libs/libnextprobe.so
[ -r "$G" ] && [ -r "$IP" ] || skip_all "libkrexgate.so or libnextprobe.so not built"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
plan 7

# Without the gate, the probe itself is right.
env LD_PRELOAD="$IP" ./nextcall >"$T/plain" 2>&1
sed 's/^/# without the gate: /' "$T/plain"
ok "without the gate: every lookup finds libnextbase's nextprobe_fn" \
	test "$(grep -c '^nextprobe .* next$' "$T/plain")" = 4

env KREX_GATE=off LD_PRELOAD="$G $IP" ./nextcall >"$T/out" 2>&1
rc=$?
sed 's/^/# /' "$T/out"
for when in early late; do
	for how in dlsym dlvsym; do
		ok "$how(RTLD_NEXT) $when (gate's constructors run: $([ $when = late ] && echo yes || echo no)): libnextbase's" \
			grep -q "^nextprobe $when $how next\$" "$T/out"
	done
done
ok "nextprobe_fn through the interposer answered 2 (rc $rc)" [ "$rc" = 0 ]
ok "nothing else printed" sh -c "! grep -v -e '^nextprobe ' -e '^nextcall ' '$T/out'"
done_testing
