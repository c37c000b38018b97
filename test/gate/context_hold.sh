#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A process started beside a region (mock driver, real krexd and gate) does
# not make its GPU context there: cuDevicePrimaryCtxRetain, cuCtxCreate_v4
# and the older cuCtxCreate_v2 wait at the closed gate, without being
# counted in flight (the region's drain and freeze do not wait for them),
# and go on once the region ends.  KREX_GATE_CONTEXTS=pass lets them
# through.  Waits on files, the gate's trace and the thread's state, never
# on a delay.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/mockgpu-lib.sh"
mg_setup ctxhold
# the program, not libtool's wrapper script (which the gate would trace too)
CAP=$top_builddir/test/gate/.libs/capturer
[ -x "$CAP" ] || CAP=$top_builddir/test/gate/capturer

# capturer_pid DIR: the pid of the capturer writing to DIR (krex run's child).
capturer_pid() { pgrep -f "^[^ ]*capturer context [a-z0-9]* $1\$" | head -1; }
# start_ctx HOW DIR [ENV...]: a context maker under `krex run`, traced.
start_ctx() {
	local how=$1 d=$2
	shift 2
	mkdir -p "$d"
	env KREX_GATE_TRACE="$d" KREX_GATE_COUNTS="$d/counts" KREX_LOG=info "$@" \
		"$KREX" run --gpus mock0 -- "$CAP" context "$how" "$d" 2>"$d/err" &
	PIDS="$PIDS $!"
}
# blocked DIR: its capturer traced "at the gate" and waits in futex(2).
blocked() {
	local p
	p=$(capturer_pid "$1")
	[ -n "$p" ] && cat "$1"/trace.* 2>/dev/null | grep -q "context: at the gate" && in_futex "$p"
}
held_us() { sed -n 's/.*context: held \([0-9]*\) us.*/\1/p' "$1"/trace.* 2>/dev/null | head -1; }

plan 13
mkdir -p "$T/run"
"$KREXD" -F -r "$T/run" -o gpus=mock0 -o drain_timeout=2s -o log_level=debug \
	-o "cgroup_subtree=krex-test/x$$" 2>"$T/krexd.log" &
KD=$!
ok "krexd starts" wait_for 10 test -S "$KREX_SOCKET"

# The owner holds the GPU until a.go exists.
timeout -k 5 90 "$KREX" region --gpus mock0 --cert "$T/cert" -- sh -c \
	"touch $T/a.in; while [ ! -e $T/a.go ]; do sleep 0.01; done" &
PIDS="$PIDS $!"
wait_for 10 test -e "$T/a.in"
start_ctx retain "$T/r"
start_ctx create "$T/c"
start_ctx create2 "$T/c2"
ok "cuDevicePrimaryCtxRetain waits at the closed gate" wait_for 20 blocked "$T/r"
ok "cuCtxCreate_v4 waits at the closed gate" wait_for 20 blocked "$T/c"
ok "cuCtxCreate_v2 waits at the closed gate" wait_for 20 blocked "$T/c2"
ok "no context was made during the region" test ! -e "$T/r/out" -a ! -e "$T/c/out" -a ! -e "$T/c2/out"
for d in r c c2; do [ -s "$T/$d/err" ] && diag "$d: $(tr '\n' ' ' <"$T/$d/err" | head -c 400)"; done
# pass: the same call goes through while the region still holds
start_ctx retain "$T/p" KREX_GATE_CONTEXTS=pass
ok "KREX_GATE_CONTEXTS=pass makes the context during the region" wait_for 20 test -e "$T/p/out"
ok "... and the region was still held then" test ! -e "$T/a.go"
touch "$T/a.go"
ok "all three made their contexts once the region ended" \
	wait_for 20 sh -c "test -e $T/r/out -a -e $T/c/out -a -e $T/c2/out"
ok "each succeeded ($(cat "$T/r/out" "$T/c/out" "$T/c2/out" | tr '\n' ' '))" \
	test "$(cat "$T/r/out" "$T/c/out" "$T/c2/out" | grep -c 'context rc=0 made=1')" = 3
ok "the gate traced the hold (held $(held_us "$T/r") us)" test -n "$(held_us "$T/r")"
touch "$T/r/end" "$T/c/end" "$T/c2/end" "$T/p/end"
for p in $PIDS; do wait "$p" 2>/dev/null; done
PIDS=
ok "gate.context_held counted once per held call" \
	test "$(cat "$T/r/counts" "$T/c/counts" "$T/c2/counts" | grep -c ' gate.context_held 1$')" = 3
ok "the pass counted none" grep -q ' gate.context_held 0$' "$T/p/counts"
diag "certificate: $(tr -d "\n" <"$T/cert" | head -c 600)"
ok "the region's certificate is clean" grep -q '"outcome": *"clean"' "$T/cert"
done_testing
