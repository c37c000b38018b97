#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# KREX_GATE_CONTEXTS=finish (mock driver, real krexd and gate): a sibling
# whose context is being made when a region closes its gate finishes it
# before its drain answers, so that the freeze does not stop it halfway (on
# an H100 over MPS at 32 sessions such a context took 1.0-1.4 s against
# 0.3 s uninterrupted, notebook/h200-session-35).  The mock's retain is held
# by a file (KREX_MOCK_CTX_WAIT, a test hook) for as long as the test
# chooses; the owner's command notes, at its grant, whether the sibling's
# context was made by then.  The default (hold) is the control: the owner is
# granted with the context still being made.  The wait is bounded
# (KREX_GATE_FINISH_MS): a context that is never made does not hold the
# region.  Waits on files and the gate's trace: krexd's drain_timeout is 60 s,
# which it publishes on the gate page and the drain follows, and the finish
# bound 60 s, so the test's steps need not fit a bound (they had to fit 1.8
# s, the drain's fixed deadline, before krexd published drain_timeout).  The
# finish case waits 3 s before it lets the context be made: past the old
# deadline, so the drain follows krexd's drain_timeout.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/mockgpu-lib.sh"
mg_setup ctxfinish

traced() { cat "$1"/trace.* 2>/dev/null | grep -q "$2"; }
finish_case() { # NAME ENV...: sibling, its retain under way, then the owner
	local n=$1
	shift
	mg_ctx_sibling "$T/$n" "$@"
	wait_for 20 test -e "$T/$n.go.in" || return 1
	mg_ctx_owner "$n" "$T/$n"
}
end_case() { # NAME: end the owner's region and the sibling
	touch "$T/$1.go" "$T/$1/end"
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	PIDS=
}

plan 12
mkdir -p "$T/run"
"$KREXD" -F -r "$T/run" -o gpus=mock0 -o drain_timeout=60s -o log_level=debug \
	-o "cgroup_subtree=krex-test/x$$" 2>"$T/krexd.log" &
KD=$!
ok "krexd starts" wait_for 10 test -S "$KREX_SOCKET"

# finish: the drain waits; the test lets the context be made; the grant follows
finish_case f KREX_GATE_CONTEXTS=finish KREX_GATE_FINISH_MS=60000
ok "finish: the drain waits for the context being made" \
	wait_for 20 traced "$T/f" "drain: waiting for 1 context(s) being made"
sleep 3 # past the 1.9 s a drain took at most before krexd published drain_timeout
touch "$T/f.go"
ok "finish: the owner is granted" wait_for 20 test -s "$T/f.order"
ok "finish: ... after the sibling's context was made ($(cat "$T/f.order"))" \
	test "$(cat "$T/f.order")" = after
ok "finish: the drain traced it done, none left" traced "$T/f" "contexts being made, 0 still being made"
end_case f
ok "finish: the sibling's context was made (rc 0)" grep -q 'context rc=0 made=1' "$T/f/out"
ok "finish: the region is clean" grep -q '"outcome": *"clean"' "$T/f.cert"

# the default (hold): the owner is granted while the context is still being made
finish_case h
ok "hold: the owner is granted" wait_for 20 test -s "$T/h.order"
ok "hold: ... before the sibling's context was made ($(cat "$T/h.order"))" \
	test "$(cat "$T/h.order")" = before
ok "hold: its drain did not wait for the context" sh -c "! cat $T/h/trace.* | grep -q 'drain: waiting for'"
end_case h

# finish with a context that is not made within the bound: the grant comes
finish_case b KREX_GATE_CONTEXTS=finish KREX_GATE_FINISH_MS=100
wait_for 20 test -s "$T/b.order"
ok "finish, bounded: the owner is granted, the context still being made ($(cat "$T/b.order" 2>/dev/null))" \
	test "$(cat "$T/b.order" 2>/dev/null)" = before
ok "finish, bounded: the drain traced one still being made" \
	traced "$T/b" "contexts being made, 1 still being made"
end_case b
done_testing
