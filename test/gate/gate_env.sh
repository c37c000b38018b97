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

# CAP, HH: the CUDA (capturer) and HIP (hiphog) siblings; need_siblings
# skips the whole test where either or the mock libamdhip64 is missing.
CAP=$top_builddir/test/gate/capturer
HH=$top_builddir/test/gate/hiphog
need_siblings() {
	[ -x "$CAP" ] && [ -x "$HH" ] && [ -r "$MOCKLIB/libamdhip64.so" ] ||
		skip_all "capturer, hiphog or the mock libamdhip64 not built"
}

# drain_after LABEL DIR LINE CAP CMD...: CMD (gated, queue_cap CAP, DIR its
# last argument) queues work and touches DIR/queued; then the gate closes
# (checked: the drain acknowledged; ST its status, RAN the kernels run by
# the ack), opens and DIR/go is touched (checked: "LINE rc=0" in DIR/out,
# CMD's exit status 0).  Three checks.
drain_after() {
	_l=$1 _d=$2 _line=$3 _cap=$4
	shift 4
	mkdir -p "$_d"
	page init "$_cap" 0
	_k0=$(kernels)
	bg_gated "$@" "$_d"
	_p=$!
	wait_for 30 test -e "$_d/queued" || diag "$_l: nothing queued"
	page close
	ok "$_l: the drain acknowledged" page wait-acks 1 10000
	RAN=$(($(kernels) - _k0))
	ST=$(page get ack_status)
	page open
	touch "$_d/go"
	ok "$_l: the program synchronized" wait_for 30 grep -qs "^$_line rc=0$" "$_d/out"
	wait "$_p"
	ok "$_l: it exits 0" test $? = 0
}
