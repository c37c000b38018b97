# SPDX-License-Identifier: BSD-3-Clause
# mockgpu-lib.sh - sourced (after test/lib.sh) by the gate tests that run the
# real krexd and krex CLI beside the mock driver: mg_setup NAME skips until
# both are built, makes $T, points the environment at a krexd socket in
# $T/run, the mock GPU /dev/shm/krex-NAME-PID (GPU mock0), the build's
# libraries and gate, and removes it all at exit: every pid in $PIDS with
# its descendants (kill_tree), and krexd ($KD).
KREXD=$top_builddir/krexd/krexd
KREX=$top_builddir/krex/krex
PIDS=
KD=
# kill_tree PID: PID and its descendants (krex run's child is the workload).
kill_tree() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
	kill -CONT "$1" 2>/dev/null
	kill -KILL "$1" 2>/dev/null
}
mg_cleanup() {
	for p in $PIDS; do kill_tree "$p"; done
	[ -n "$KD" ] && kill "$KD" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T" "/dev/shm$KREX_MOCK_GPU"
}
mg_setup() {
	[ -x "$KREXD" ] || skip_all "krexd not built yet ($KREXD)"
	[ -x "$KREX" ] || skip_all "krex CLI not built yet ($KREX)"
	T=$(mktemp -d) || exit 1
	export KREX_MOCK_GPU=/krex-$1-$$
	export LD_LIBRARY_PATH=$top_builddir/test/mock/.libs:$top_builddir/libregion/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export KREX_SOCKET=$T/run/krexd.sock
	export KREX_GPUS=mock0
	export KREX_GATE_LIB=$top_builddir/gate/.libs/libkrexgate.so
	trap mg_cleanup EXIT
}
# For context_finish.sh and context_defer.sh: a context being made when a
# region closes.  mg_ctx_sibling DIR ENV...: `krex run capturer context
# retain DIR`, traced into DIR, its retain held by the mock until DIR.go
# exists (KREX_MOCK_CTX_WAIT; DIR.go.in: the retain has begun; DIR.go.out:
# the context is made, written by the mock inside the call).
mg_ctx_sibling() {
	local d=$1 cap=$top_builddir/test/gate/.libs/capturer
	shift
	[ -x "$cap" ] || cap=$top_builddir/test/gate/capturer
	mkdir -p "$d"
	env KREX_GATE_TRACE="$d" KREX_LOG=info KREX_MOCK_CTX_WAIT="$d.go" "$@" \
		"$KREX" run --gpus mock0 -- "$cap" context retain "$d" 2>"$d/err" &
	PIDS="$PIDS $!"
}
# mg_ctx_owner NAME DIR: a region whose command writes to $T/NAME.order, at
# its grant, whether DIR's context was made ("after": DIR.go.out, not the
# sibling's own DIR/out, which the freeze can stop it from writing) or not
# ("before"), and
# to $T/NAME.second whether a second sibling's (DIR2's) had begun ("begun")
# or not ("not begun"), then holds the region until $T/NAME.go exists; its
# certificate $T/NAME.cert.
mg_ctx_owner() {
	timeout -k 5 90 "$KREX" region --gpus mock0 --cert "$T/$1.cert" -- sh -c \
		"if test -e $2.go.out; then echo after; else echo before; fi >$T/$1.order; if test -e ${2}2.go.in; then echo begun; else echo not begun; fi >$T/$1.second; while [ ! -e $T/$1.go ]; do sleep 0.01; done" &
	PIDS="$PIDS $!"
}
