# SPDX-License-Identifier: BSD-3-Clause
# gate_env.sh - shared set-up for the gate's shell tests (source it after
# lib.sh): a temp dir, the mock GPU of this test alone, the fake libregion
# page, and helpers.  Every process started with bg is killed at exit.
G=$top_builddir/gate/.libs/libkrexgate.so
FAKE=$top_builddir/test/gate/.libs/libfakeregion.so
MOCKLIB=$top_builddir/test/mock/.libs
WL=$top_builddir/test/workloads
FG=$top_builddir/test/gate/fakegate
[ -r "$G" ] && [ -r "$FAKE" ] && [ -r "$MOCKLIB/libcuda.so.1" ] ||
	skip_all "gate, fake libregion or mock driver not built"
T=$(mktemp -d) || exit 1
PIDS=
export KREX_MOCK_GPU=/krex-test-$$
export KREX_FAKE_GATE=$T/page
export LD_LIBRARY_PATH=$MOCKLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cleanup() {
	for p in $PIDS; do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T" "/dev/shm${KREX_MOCK_GPU}"
}
trap cleanup EXIT

# gated CMD...: run CMD with the fake libregion and the gate preloaded.
gated() { env LD_PRELOAD="$FAKE $G" "$@"; }

# bg_gated CMD...: the same in the background; its pid is in $! (env execs
# CMD, so $! is CMD itself and kill reaches it).
bg_gated() {
	env LD_PRELOAD="$FAKE $G" "$@" &
	PIDS="$PIDS $!"
}

kernels() { "$FG" kernels; }
page() { "$FG" "$T/page" "$@"; }

# stable MS: the mock GPU ran no kernel during MS milliseconds.
stable() {
	a=$(kernels)
	sleep "$(awk -v m="$1" 'BEGIN { print m / 1000 }')"
	b=$(kernels)
	diag "kernels $a -> $b over $1 ms"
	[ "$a" = "$b" ]
}

# grows MS: the mock GPU runs kernels again (seen within 10 s: a hog slow to
# be scheduled on a loaded host is not a failure; MS is no longer a limit).
grows() {
	local a
	a=$(kernels)
	wait_for 10 sh -c "[ \"\$('$FG' kernels)\" != '$a' ]" || { diag "kernels stuck at $a for 10 s"; return 1; }
}

# counter_ge FILE N
counter_ge() { [ -r "$1" ] && [ "$(cat "$1")" -ge "$2" ]; }
