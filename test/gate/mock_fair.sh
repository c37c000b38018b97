#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The mock GPU (test/mock, a TEST DOUBLE) shares its device fairly: busy
# processes take turns kernel by kernel (a ticket lock, FIFO across
# processes), as a real GPU time-slices between contexts.  Four hogs that wait
# for each 2 ms kernel (krex-hog --sync, no gate) run side by side, counted
# over 3 s once all have started: each gets about a quarter of the kernels,
# and the device is kept about as busy as by one hog alone.
# A turn nobody takes is passed on: a hog frozen (SIGSTOP) while it waits for
# the device does not stop the others.
. "$top_srcdir/test/lib.sh"
MOCKLIB=${KREX_MOCK_LIB:-$top_builddir/test/mock/.libs}
HOG=$top_builddir/test/workloads/krex-hog
FG=$top_builddir/test/gate/fakegate
[ -x "$HOG" ] || skip_all "krex-hog not built"
T=$(mktemp -d) || exit 1
PIDS=
export KREX_MOCK_GPU=/krex-fair-$$
export LD_LIBRARY_PATH=$MOCKLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cleanup() {
	for p in $PIDS; do
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$T" "/dev/shm$KREX_MOCK_GPU"
}
trap cleanup EXIT
plan 4

# counts FILE...: the hogs' counters, read by one process (one instant).
counts() { cat "$@" 2>/dev/null | tr '\n' ' '; }
# started FILE...: every counter written once (the hog runs its kernels).
started() {
	local f
	for f in "$@"; do [ -s "$f" ] || return 1; done
}
# diffs "A B C" "D E F": D-A E-B F-C
diffs() { echo "$1 $2" | awk '{ n = NF / 2; for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? " " : ""), $(i + n) - $i; print "" }'; }
# window SECONDS FILE...: the kernels each counter gained over SECONDS.
window() {
	local s=$1 a b
	shift
	a=$(counts "$@")
	sleep "$s"
	b=$(counts "$@")
	diffs "$a" "$b"
}

# Each window opens once every hog counts (their starts, slow under a
# sanitizer or load, are left out) and is read from counters written every
# 20 ms; the device's load is measured against one hog alone in the same run.
"$HOG" 2000 --sync --seconds 60 --counter "$T/ref" --every 20 &
PIDS=$!
wait_for 20 started "$T/ref" || diag "the hog did not start in 20 s"
REF=$(window 3 "$T/ref")
kill -TERM $PIDS
wait $PIDS
PIDS=
for i in 1 2 3 4; do
	"$HOG" 2000 --sync --seconds 60 --counter "$T/hog.$i" --every 20 &
	PIDS="$PIDS $!"
done
wait_for 20 started "$T"/hog.1 "$T"/hog.2 "$T"/hog.3 "$T"/hog.4 || diag "the four hogs did not all start in 20 s"
N=$(window 3 "$T"/hog.1 "$T"/hog.2 "$T"/hog.3 "$T"/hog.4)
kill -TERM $PIDS
wait $PIDS
PIDS=
diag "kernels each in 3 s: $N (one hog alone: $REF)"
MIN=$(echo $N | tr ' ' '\n' | sort -n | head -1)
MAX=$(echo $N | tr ' ' '\n' | sort -n | tail -1)
SUM=$(echo $N | tr ' ' '\n' | awk '{ s += $1 } END { print s + 0 }')
ok "four hogs ran" [ "$(echo $N | wc -w)" -eq 4 ] && [ "${MIN:-0}" -gt 0 ]
ok "fair: the fewest kernels of a hog ($MIN) are at least 3/4 of the most ($MAX)" \
	[ $((MIN * 4)) -ge $((MAX * 3)) ]
# One hog alone keeps the device about as busy as four (each waits for its
# 2 ms kernel; four take turns).  A turn handed over late (the 50 ms cap)
# gives about 60 kernels in 3 s, against about 1400: half of one hog's
# count tells them apart on any load.
ok "the device stays busy: $SUM kernels of 2 ms in 3 s, >= half of one hog's $REF" \
	[ $((2 * SUM)) -ge "$REF" ]

# A stopped hog's turn is passed on: two hogs, one stopped (the hog itself,
# not a wrapper) while it waits for its turn; the other then runs alone, at
# about twice its rate beside it running.
rm -f "$T"/hog.*
"$HOG" 2000 --seconds 60 --counter "$T/hog.a" --every 20 &
A=$!
"$HOG" 2000 --sync --seconds 60 --counter "$T/hog.b" --every 20 &
PIDS="$A $!"
wait_for 20 started "$T/hog.a" "$T/hog.b" || diag "the two hogs did not both start in 20 s"
SHARED=$(window 3 "$T/hog.b")
# all of A's threads stopped (SIGSTOP is delivered to each in its time)
a_stopped() {
	local t
	for t in /proc/"$A"/task/*/stat; do
		[ "$(sed 's/.*) \(.\).*/\1/' "$t" 2>/dev/null)" = T ] || return 1
	done
}
# Stopped while it waits for its turn, not mid-kernel (a holder stopped
# mid-kernel keeps the device, as documented in doc/gate.md): the holder is
# read once every thread of A has stopped, when A can no longer take it.
# The pause between tries varies (1 to 7 centiseconds) so that the tries do
# not fall into step with the hogs' 2 ms turns.
caught=no
for i in $(seq 300); do
	kill -STOP "$A"
	wait_for 5 a_stopped || diag "try $i: A's threads did not all stop in 5 s"
	[ "$("$FG" holder)" != "$A" ] && { caught="yes (try $i)"; break; }
	kill -CONT "$A"
	sleep "0.0$((i % 7 + 1))"
done
[ "$caught" != no ] || diag "the hog held the device at each of 300 stops"
ALONE=$(window 3 "$T/hog.b")
STATE=$(awk '{ print $3 }' "/proc/$A/stat" 2>/dev/null)
kill -CONT "$A"
kill -TERM $PIDS
wait $PIDS
PIDS=
diag "the running hog's kernels in 3 s: $SHARED beside the other, $ALONE beside it stopped (state $STATE, stopped outside its turn: $caught)"
# Alone it gets about twice what it got sharing; a stopped hog whose turns
# still came round would hold each for the 50 ms cap (about 60 kernels in
# 3 s), and one holding the device would let none through: more than half
# its shared count tells them apart, in the same run on any load.
ok "a hog stopped while queued does not take turns ($ALONE kernels of 2 ms in 3 s, > half of $SHARED beside it running)" \
	[ "$STATE" = T ] && [ "$caught" != no ] && [ $((2 * ${ALONE:-0})) -gt "${SHARED:-0}" ]
done_testing
