#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Fail open without krexd (no libregion page) and when "krexd" is gone;
# KREX_GATE=off; fork: the child re-joins and is gated.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/gate_env.sh"
plan 8

ok "procaddr passes with the gate and no krexd" \
	env -u KREX_FAKE_GATE LD_PRELOAD="$FAKE $G" "$WL/krex-procaddr"
ok "procaddr passes with the real libkrexregion and no krexd" \
	env KREX_SOCKET="$T/none.sock" LD_PRELOAD="$G" "$WL/krex-procaddr"
ok "KREX_GATE=off passes" env KREX_GATE=off LD_PRELOAD="$G" "$WL/krex-procaddr"

page init
page close
bg_gated "$WL/krex-procaddr"
P=$!
# (the gate counts the launch waiting at it: seen, not slept for)
waiting() { [ "$(page get waits)" -ge 1 ]; }
waits_alive() { wait_for 10 waiting && kill -0 "$P"; }
ok "a launch waits at a closed gate" waits_alive
page dead
ok "the gate fails open when krexd is gone" wait_for 10 sh -c "! kill -0 $P 2>/dev/null"
wait "$P"
ok "and the program finishes correctly" [ $? = 0 ]

page init
bg_gated ./forker "$T/child"
P=$!
ok "forked child launched and re-joined" wait_for 10 test -e "$T/child.ok"
diag "joins: $(page get joins)"
ok "parent and child both joined" [ "$(page get joins)" -ge 2 ]
# the child first: a child stuck in the driver would keep the TAP pipe open
for c in $(pgrep -P "$P"); do kill -KILL "$c" 2>/dev/null; done
kill "$P" 2>/dev/null
done_testing
