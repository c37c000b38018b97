#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A gated call that the runtime makes from inside another gated call of the
# same thread passes: Debian's HIP 5.2 copies hipMemcpyPeer through the
# exported hipMemcpy (the mock libamdhip64, a TEST DOUBLE, with
# KREX_MOCK_HIP52=1).  A gate that closes between the two does not hold
# the inner call: the outer one is counted in flight, the drain waits for
# both, and no pass is needed (before, the drain stalled until its pass
# let the inner call through).  The in-flight count is right afterwards.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/gate_env.sh"
HH=$top_builddir/test/gate/hiphog
[ -x "$HH" ] && [ -r "$MOCKLIB/libamdhip64.so" ] || skip_all "hiphog or the mock libamdhip64 not built"
plan 7
counts() { awk -v k="$1" '$2 == k { s += $3 } END { print s + 0 }' "$T/counts"; }

page init
mkdir -p "$T/p"
KREX_MOCK_HIP52=1 KREX_MOCK_HIP52_WAIT=$T/peer KREX_GATE_COUNTS=$T/counts \
	bg_gated "$HH" peer "$T/p"
HP=$!
ok "hipMemcpyPeer is inside the driver, before its hipMemcpy" wait_for 10 test -e "$T/peer.in"
page close # while it is in flight: the drain waits for it
touch "$T/peer.go"
ok "the inner hipMemcpy passes, the outer call returns, the drain acks" page wait-acks 1 5000
ok "... with status 0 (drained, not late)" test "$(page get ack_status)" = 0
ok "the copy arrived" wait_for 10 grep -qs "^peer rc=0 same=1$" "$T/p/out"
page open
page close
ok "a second drain: the in-flight count is back at 0 (ack at once)" page wait-acks 2 5000
page open
touch "$T/p/end"
wait "$HP"
ok "no pass was needed (gate.drain_passes 0)" test "$(counts gate.drain_passes)" = 0
ok "the inner call counted as nested (gate.nested 1)" test "$(counts gate.nested)" = 1
done_testing
