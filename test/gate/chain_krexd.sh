#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Chained regions with the real gate and drain threads (mock driver): a hog
# sibling under `krex run` is gated, drained and frozen by a first region and
# stays frozen through a second region chained at its end: the mock GPU's
# kernel count is the same from inside the first region to inside the second.
# Then the chain ends and the hog runs again.  Waits on files and krexd's
# status, never on a delay.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/mockgpu-lib.sh"
mg_setup chain
WL=$top_builddir/test/workloads
FG=$top_builddir/test/gate/fakegate
counter_ge() { [ -r "$1" ] && [ "$(cat "$1")" -ge "$2" ]; }
field() { sed -n "s/.*\"$1\": *\([0-9]*\).*/\1/p" "$2" | head -1; }
queued() { "$KREX" status 2>/dev/null | grep -q ' queued '; }
moves() {
	local a
	a=$(cat "$T/hog")
	wait_for 5 sh -c "[ \"\$(cat $T/hog)\" != $a ]"
}

plan 7
mkdir -p "$T/run"
"$KREXD" -F -r "$T/run" -o gpus=mock0 -o drain_timeout=2s -o queue_cap=8 -o chain_max=60s \
	-o log_level=debug -o "cgroup_subtree=krex-test/c$$" 2>"$T/krexd.log" &
KD=$!
ok "krexd starts" wait_for 10 test -S "$KREX_SOCKET"
"$KREX" run --gpus mock0 -- "$WL/krex-hog" 2000 --seconds 90 --counter "$T/hog" &
PIDS="$PIDS $!"
wait_for 10 counter_ge "$T/hog" 1
# A holds the GPU until a.go exists; B waits behind it.
timeout -k 5 60 "$KREX" region --gpus mock0 --cert "$T/certA" -- sh -c \
	"$FG kernels >$T/ka; touch $T/a.in; while [ ! -e $T/a.go ]; do sleep 0.01; done" &
PIDS="$PIDS $!"
wait_for 10 test -e "$T/a.in"
timeout -k 5 60 "$KREX" region --gpus mock0 --cert "$T/certB" -- sh -c "$FG kernels >$T/kb" &
b=$!
PIDS="$PIDS $b"
wait_for 10 queued
touch "$T/a.go"
wait "$b"
ok "the second region ran" test -s "$T/kb" -a -s "$T/certB"
diag "A: $(cat "$T/certA")"
diag "B: $(cat "$T/certB")"
ok "it was chained, the first was not" test "$(field chained "$T/certB")/$(field chained "$T/certA")" = 1/0
ok "no kernel ran on the GPU from inside the first region to inside the second ($(cat "$T/ka") $(cat "$T/kb"))" \
	test "$(cat "$T/ka")" = "$(cat "$T/kb")"
ok "the hog was drained once and frozen in both" \
	test "$(field drained "$T/certA")/$(field frozen "$T/certA")/$(field frozen "$T/certB")" = 1/1/2
ok "both certificates are clean" \
	test "$(grep -c '"outcome": *"clean"' "$T/certA" "$T/certB" | awk -F: '{ s += $2 } END { print s }')" = 2
ok "the hog runs again after the chain" moves
done_testing
